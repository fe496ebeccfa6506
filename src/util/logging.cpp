#include "util/logging.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace testio::util {

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

}  // namespace testio::util
