#include "util/log.hpp"

#include <exception>

#include <spdlog/spdlog.h>

namespace testio::util {
namespace {

spdlog::level::level_enum spdlog_level(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
  }
  return spdlog::level::err;
}

}  // namespace

bool log_enabled(LogLevel level) noexcept { return spdlog::default_logger_raw()->should_log(spdlog_level(level)); }

void log_message(LogLevel level, fmt::string_view format, fmt::format_args args) noexcept {
  try {
    spdlog::default_logger_raw()->log(spdlog_level(level), fmt::string_view(fmt::vformat(format, args)));
  } catch (const std::exception&) {  // out of memory, a closed --logfile: the message is dropped
  }
}

}  // namespace testio::util
