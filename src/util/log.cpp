#include "util/log.hpp"

#include <exception>
#include <memory>
#include <stdexcept>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
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

void setup_logging(int verbosity, const std::string& logfile) {
  std::shared_ptr<spdlog::logger> logger;
  if (logfile.empty()) {
    logger = spdlog::stderr_color_mt("testio");
    logger->set_pattern("testio: %^%l%$: %v");
  } else {
    try {
      logger = spdlog::basic_logger_mt("testio", logfile, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex& error) {
      throw std::runtime_error("cannot open log file " + logfile + ": " + error.what());
    }
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e testio: %l: %v");
    logger->flush_on(spdlog::level::trace);
  }
  logger->set_level(verbosity >= 2 ? spdlog::level::debug
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

bool log_enabled(LogLevel level) noexcept { return spdlog::default_logger_raw()->should_log(spdlog_level(level)); }

void log_message(LogLevel level, fmt::string_view format, fmt::format_args args) noexcept {
  try {
    spdlog::default_logger_raw()->log(spdlog_level(level), fmt::string_view(fmt::vformat(format, args)));
  } catch (const std::exception&) {  // out of memory, a closed --logfile: the message is dropped
  }
}

}  // namespace testio::util
