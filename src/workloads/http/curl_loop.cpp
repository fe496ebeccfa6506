#include <stdexcept>

#include "workloads/http/http_streams.hpp"

namespace testio::workloads::http {

CurlLoop::CurlLoop(HttpTally& tally) : multi_(curl_multi_init()), tally_(tally) {
  if (!multi_) throw std::runtime_error("libcurl could not make a multi handle");
}

CurlLoop::~CurlLoop() { curl_multi_cleanup(multi_); }

void CurlLoop::attach(HttpSlot& slot) {
  slots_.push_back(&slot);
  // Room in the connection cache for a kept connection per slot (--reuse), and no more.
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(slots_.size()));
}

bool CurlLoop::any_active() const noexcept {
  for (const HttpSlot* slot : slots_)
    if (slot->active()) return true;
  return false;
}

void CurlLoop::collect_finished() {
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    HttpSlot* slot = nullptr;
    curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &slot);
    const CURLcode result = message->data.result;  // the message is gone once the slot re-adds its handle
    if (slot) slot->transfer_ended(result);
  }
}

void CurlLoop::run(const engines::TestClock&, const engines::BlockingSignals& signals) {
  using engines::Clock;
  auto turn_started = Clock::now();
  while (any_active()) {
    if (signals.aborted.load(std::memory_order_relaxed) || signals.window_closed.load(std::memory_order_relaxed)) {
      for (HttpSlot* slot : slots_) slot->abandon();
      break;
    }
    int running = 0;
    curl_multi_perform(multi_, &running);
    collect_finished();
    tally_.loop_turn_ns.record(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - turn_started).count()));
    // At most 100 ms, so a signal is seen promptly; libcurl shortens it for its own timers.
    if (any_active()) curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
    turn_started = Clock::now();
  }
}

}  // namespace testio::workloads::http
