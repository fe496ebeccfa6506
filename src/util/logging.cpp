#include "util/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace testio::util {

void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("testio");
  logger->set_pattern("testio: %^%l%$: %v");
  logger->set_level(verbosity >= 2 ? spdlog::level::debug
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace testio::util
