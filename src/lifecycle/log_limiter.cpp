#include "lifecycle/log_limiter.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/steady_timer.hpp>

#include "util/log.hpp"

namespace testio::lifecycle {
namespace {

constexpr auto kQuiet = std::chrono::seconds(1);

}  // namespace

LogLimiter::LogLimiter(const asio::any_io_executor& io) : io_(std::make_unique<asio::any_io_executor>(io)) {}

LogLimiter::~LogLimiter() = default;

void LogLimiter::warn(const std::string& key, const std::string& line) {
  Reason& reason = reasons_[key];
  const auto now = std::chrono::steady_clock::now();
  if (now - reason.last_line >= kQuiet && reason.held == 0) {
    util::log_warn("{}", line);
    reason.last_line = now;
    return;
  }
  ++reason.held;
  reason.last = line;
  if (reason.flush) return;
  reason.flush = std::make_unique<asio::steady_timer>(*io_, reason.last_line + kQuiet);
  reason.flush->async_wait([this, &reason](const asio::error_code& error) {
    if (!error) print_held(reason);
  });
}

void LogLimiter::print_held(Reason& reason) {
  if (reason.held == 1)
    util::log_warn("{}", reason.last);
  else if (reason.held > 1)
    util::log_warn("{} (and {} more like it in the last second)", reason.last, reason.held - 1);
  reason.held = 0;
  reason.last_line = std::chrono::steady_clock::now();
  reason.flush.reset();
}

}  // namespace testio::lifecycle
