#include "report/prefixed_lines.hpp"

#include <ctime>

namespace testio::report {

PrefixedLines::PrefixedLines(std::ostream& target, std::string prefix, LineStamps stamps)
    : target_(target), prefix_(std::move(prefix)), stamps_(std::move(stamps)), stream_(this) {}

PrefixedLines::~PrefixedLines() {
  if (line_.empty()) return;
  line_.push_back('\n');
  write_line();
  target_.flush();
}

PrefixedLines::int_type PrefixedLines::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char character = traits_type::to_char_type(c);
  xsputn(&character, 1);
  return c;
}

std::streamsize PrefixedLines::xsputn(const char* text, std::streamsize count) {
  for (std::streamsize i = 0; i < count; ++i) {
    line_.push_back(text[i]);
    if (text[i] == '\n') write_line();
  }
  return count;
}

int PrefixedLines::sync() {
  target_.flush();
  return target_.good() ? 0 : -1;
}

void PrefixedLines::write_line() {
  // Whole lines only into the shared target: another test's line never lands inside this one.
  if (stamps_.time_format) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[256];
    const std::size_t length = std::strftime(stamp, sizeof stamp, stamps_.time_format->c_str(), &local);
    target_.write(stamp, static_cast<std::streamsize>(length));
  }
  target_ << prefix_;
  if (!stamps_.title.empty()) target_ << stamps_.title << ":  ";
  target_ << line_;
  line_.clear();
  if (stamps_.flush) target_.flush();
}

}  // namespace testio::report
