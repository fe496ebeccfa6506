// Warnings that a flood would repeat thousands of times a second (refused connections, handshakes
// that timed out): at most one line per reason per second, the rest counted into the next line,
// or into one a second later when no other comes. Owner: the server's control thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "net/asio_fwd.hpp"

namespace testio::lifecycle {

class LogLimiter {
 public:
  explicit LogLimiter(const asio::any_io_executor& io);
  ~LogLimiter();
  LogLimiter(const LogLimiter&) = delete;
  LogLimiter& operator=(const LogLimiter&) = delete;

  // `reason` groups the lines that count as the same ("not in --allow"); `line` is this one's
  // whole sentence, printed when its reason has been quiet for a second.
  void warn(const std::string& reason, const std::string& line);

 private:
  struct Reason {
    std::chrono::steady_clock::time_point last_line{};
    std::uint64_t held = 0;          // lines since the last one printed
    std::string last;                // the latest of them
    std::unique_ptr<net::SteadyTimer> flush;  // prints the held count once the second is over
  };
  void print_held(Reason& reason);

  std::unique_ptr<asio::any_io_executor> io_;  // where the timers run (a pointer keeps Asio out of this header)
  std::map<std::string, Reason> reasons_;
};

}  // namespace testio::lifecycle
