#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "workloads/http/http_streams.hpp"

namespace testio::workloads::http {
namespace {

using engines::Clock;

std::uint64_t nanoseconds_since(Clock::time_point since) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count());
}

}  // namespace

// libcurl's socket interface, not curl_multi_perform: it is told which sockets are ready, so a
// turn reads only those instead of trying every transfer's socket (most of them with nothing yet).
CurlLoop::CurlLoop(HttpTally& tally) : multi_(curl_multi_init()), epoll_(::epoll_create1(EPOLL_CLOEXEC)), tally_(tally) {
  if (!multi_ || epoll_ < 0) throw std::runtime_error("libcurl's multi handle or its epoll could not be made");
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlLoop::on_socket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlLoop::on_timer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

CurlLoop::~CurlLoop() {
  curl_multi_cleanup(multi_);
  ::close(epoll_);
}

void CurlLoop::attach(HttpSlot& slot) {
  slots_.push_back(&slot);
  // Room in the connection cache for a kept connection per slot (--reuse), and no more.
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(slots_.size()));
}

int CurlLoop::on_socket(CURL*, curl_socket_t fd, int what, void* opaque, void*) {
  auto* loop = static_cast<CurlLoop*>(opaque);
  if (what == CURL_POLL_REMOVE) {
    ::epoll_ctl(loop->epoll_, EPOLL_CTL_DEL, fd, nullptr);  // it may be closed already: nothing to undo
    return 0;
  }
  epoll_event event{};
  event.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
  event.data.fd = fd;
  if (::epoll_ctl(loop->epoll_, EPOLL_CTL_MOD, fd, &event) != 0 && errno == ENOENT)
    ::epoll_ctl(loop->epoll_, EPOLL_CTL_ADD, fd, &event);
  return 0;
}

int CurlLoop::on_timer(CURLM*, long timeout_ms, void* opaque) {
  auto* loop = static_cast<CurlLoop*>(opaque);
  loop->timer_due_ = timeout_ms < 0 ? Clock::time_point::max() : Clock::now() + std::chrono::milliseconds(timeout_ms);
  return 0;
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

// At most 100 ms per wait, so a signal is seen promptly; less when libcurl's timer is due sooner.
int CurlLoop::wait_ms() const noexcept {
  if (timer_due_ == Clock::time_point::max()) return 100;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(timer_due_ - Clock::now()).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, 100));
}

void CurlLoop::run(const engines::TestClock&, const engines::BlockingSignals& signals) {
  epoll_event events[64];
  int running = 0;
  while (any_active()) {
    if (signals.aborted.load(std::memory_order_relaxed) || signals.window_closed.load(std::memory_order_relaxed)) {
      for (HttpSlot* slot : slots_) slot->abandon();
      break;
    }
    const int ready = ::epoll_wait(epoll_, events, 64, wait_ms());
    const auto turn_started = Clock::now();
    for (int i = 0; i < ready; ++i) {
      const std::uint32_t got = events[i].events;
      const int mask = (got & EPOLLIN ? CURL_CSELECT_IN : 0) | (got & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (got & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
      curl_multi_socket_action(multi_, events[i].data.fd, mask, &running);
    }
    if (Clock::now() >= timer_due_) {
      timer_due_ = Clock::time_point::max();  // libcurl sets the next one as it needs
      curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    collect_finished();
    tally_.loop_turn_ns.record(nanoseconds_since(turn_started));
  }
}

}  // namespace testio::workloads::http
