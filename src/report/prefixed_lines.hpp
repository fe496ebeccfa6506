// An ostream whose every line reaches its target whole, with a prefix: a server's concurrent
// tests each write their report through one, so their lines interleave only between lines and
// each says whose it is ("[#7 192.0.2.5:41234] ..."); iperf3's --timestamps and --title stamp
// each line the same way. Owner: the thread that writes the report
// (the server's control thread); the target is shared by every test on that thread.
#pragma once

#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

namespace testio::report {

// iperf3's --timestamps, --title and --forceflush: what goes before each line and after it.
struct LineStamps {
  std::optional<std::string> time_format;  // strftime(3), local time
  std::string title;                       // "TITLE:  " after the time
  bool flush = false;                      // each line flushed as it ends
  bool any() const noexcept { return time_format || !title.empty() || flush; }
};

class PrefixedLines final : private std::streambuf {
 public:
  PrefixedLines(std::ostream& target, std::string prefix, LineStamps stamps = {});
  // A line left unfinished is written, ended, at the close.
  ~PrefixedLines() override;
  PrefixedLines(const PrefixedLines&) = delete;
  PrefixedLines& operator=(const PrefixedLines&) = delete;

  std::ostream& stream() noexcept { return stream_; }

 private:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  // Complete lines went out as they ended; a partial one waits for its newline.
  int sync() override;
  void write_line();

  std::ostream& target_;
  std::string prefix_;
  LineStamps stamps_;
  std::string line_;
  std::ostream stream_;
};

}  // namespace testio::report
