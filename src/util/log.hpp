// Diagnostics: warnings and notes for the user, through spdlog's default logger, which
// setup_logging() makes: to stderr (or the --logfile), so stdout carries only the report.
// Include this, not <spdlog/spdlog.h>: a unit that logs then parses fmt's core (about 26,000
// preprocessed lines) instead of spdlog and fmt's whole formatting library (about 77,000), and the
// message is formatted once, in log.cpp, by libfmt's compiled code. The format string is still
// checked where it is written. Not for hot paths: nothing per call logs.
#pragma once

#include <string>

#include <fmt/core.h>

namespace testio::util {

// verbosity: 0 = warnings and errors, 1 = info (-v), 2 = debug (--debug). A non-empty `logfile`
// receives the diagnostics instead of stderr; throws std::runtime_error if it cannot be opened.
void setup_logging(int verbosity, const std::string& logfile = {});

enum class LogLevel { debug, info, warn, error };

// Whether the default logger writes `level` now (-v, --logfile).
bool log_enabled(LogLevel level) noexcept;
// Formats and writes one message; never throws (a message that cannot be written is dropped).
void log_message(LogLevel level, fmt::string_view format, fmt::format_args args) noexcept;

template <typename... Args>
void log_debug(fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(LogLevel::debug)) log_message(LogLevel::debug, format, fmt::make_format_args(args...));
}
template <typename... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(LogLevel::info)) log_message(LogLevel::info, format, fmt::make_format_args(args...));
}
template <typename... Args>
void log_warn(fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(LogLevel::warn)) log_message(LogLevel::warn, format, fmt::make_format_args(args...));
}
template <typename... Args>
void log_error(fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(LogLevel::error)) log_message(LogLevel::error, format, fmt::make_format_args(args...));
}

}  // namespace testio::util
