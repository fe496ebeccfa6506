// printf-style formatting into a std::string, for the reporters' fixed-width columns. Lines
// longer than 255 characters are cut there (every caller's format is far shorter).
#pragma once

#include <cstdio>
#include <string>

namespace testio::report {

template <typename... Values>
std::string printf_text(const char* format, Values... values) {
  char line[256];
  std::snprintf(line, sizeof line, format, values...);
  return line;
}

}  // namespace testio::report
