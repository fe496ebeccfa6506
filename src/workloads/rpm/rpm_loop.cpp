#include "workloads/rpm/rpm_loop.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/log.hpp"
#include "workloads/http/http.hpp"

namespace testio::workloads::rpm {
namespace {

using engines::Clock;
using namespace std::chrono_literals;

constexpr auto kInterval = 1s;                    // the draft's interval between added connections
constexpr curl_off_t kUploadBytes = 32ll << 20;   // each upload request's body
constexpr long kProbeTimeoutMs = 10'000;
constexpr char kFill[16384] = {};                 // what uploads send

double seconds_since(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double info_ms(CURL* easy, CURLINFO what) {
  curl_off_t microseconds = 0;
  curl_easy_getinfo(easy, what, &microseconds);
  return static_cast<double>(microseconds) / 1e3;
}

}  // namespace

RpmLoop::RpmLoop(RpmPlan plan, RpmRun& run, std::vector<DirectionResult>& results, std::string& error)
    : plan_(std::move(plan)), run_(run), results_(results), error_(error), multi_(curl_multi_init()) {
  if (!multi_) throw std::runtime_error("libcurl's multi handle could not be made");
  // HTTP/2 streams share a connection: the self probes ride on the load connections.
  curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
}

RpmLoop::~RpmLoop() {
  remove_all();
  curl_multi_cleanup(multi_);
}

void RpmLoop::remove_all() {
  for (const auto& transfer : transfers_) {
    curl_multi_remove_handle(multi_, transfer->easy);
    curl_easy_cleanup(transfer->easy);
  }
  transfers_.clear();
  probes_in_flight_ = 0;
  connections_ = 0;
}

std::size_t RpmLoop::on_body(char*, std::size_t, std::size_t size, void* opaque) {
  auto* transfer = static_cast<Transfer*>(opaque);
  transfer->moved += size;
  if (transfer->role == Role::load) {
    RpmLoop& loop = *transfer->loop;
    loop.interval_bytes_ += size;
    loop.run_.counters().record(size, loop.clock_.since_start(Clock::now()));
  }
  return size;
}

std::size_t RpmLoop::on_upload(char* buffer, std::size_t, std::size_t size, void* opaque) {
  auto* transfer = static_cast<Transfer*>(opaque);
  const auto left = static_cast<std::uint64_t>(kUploadBytes) - transfer->moved;
  const std::size_t give = static_cast<std::size_t>(std::min<std::uint64_t>({size, sizeof kFill, left}));
  std::copy(kFill, kFill + give, buffer);
  on_body(buffer, 1, give, opaque);
  return give;
}

RpmLoop::Transfer& RpmLoop::add(Role role, bool upload) {
  auto transfer = std::make_unique<Transfer>();
  transfer->loop = this;
  transfer->role = role;
  transfer->upload = upload && role == Role::load;
  CURL* easy = transfer->easy = curl_easy_init();
  if (!easy) throw std::runtime_error("libcurl's easy handle could not be made");
  curl_easy_setopt(easy, CURLOPT_URL, (role == Role::load ? (upload ? plan_.upload_url : plan_.large_url)
                                                          : plan_.small_url).c_str());
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, plan_.tls() ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &RpmLoop::on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, transfer.get());
  curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer.get());
  curl_easy_setopt(easy, CURLOPT_IPRESOLVE, plan_.ip_resolve);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  if (plan_.insecure) http::skip_certificate_checks(easy);
  if (role == Role::foreign) {  // a connection of its own, used once
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
  }
  if (role == Role::load) curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);  // a new load connection
  if (role == Role::self) curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);       // wait to share one
  if (role != Role::load) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, kProbeTimeoutMs);
  if (transfer->upload) {  // a PUT of kUploadBytes, generated as it goes
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, &RpmLoop::on_upload);
    curl_easy_setopt(easy, CURLOPT_READDATA, transfer.get());
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, kUploadBytes);
  }
  curl_multi_add_handle(multi_, easy);
  if (role != Role::load) ++probes_in_flight_;
  transfers_.push_back(std::move(transfer));
  return *transfers_.back();
}

// A load transfer that ended starts again, on a connection the multi handle already has.
void RpmLoop::restart(Transfer& load) {
  curl_multi_remove_handle(multi_, load.easy);
  load.moved = 0;
  curl_easy_setopt(load.easy, CURLOPT_FRESH_CONNECT, 0L);
  curl_multi_add_handle(multi_, load.easy);
}

void RpmLoop::launch_probes(bool upload) {
  // A probe still out after as many intervals' worth is not joined by more: the rate stays bounded.
  if (probes_in_flight_ >= static_cast<std::size_t>(2 * plan_.probes_per_second)) return;
  add(Role::foreign, upload);
  add(Role::self, upload);
}

void RpmLoop::take_probe(Transfer& transfer, CURLcode result, RpmMeter& meter) {
  --probes_in_flight_;
  long status = 0;
  curl_easy_getinfo(transfer.easy, CURLINFO_RESPONSE_CODE, &status);
  if (result != CURLE_OK || status / 100 != 2) {
    meter.failed();
    if (error_.empty())
      error_ = result != CURLE_OK ? curl_easy_strerror(result) : "HTTP " + std::to_string(status) + " for " + plan_.small_url;
    return;
  }
  const double connected = info_ms(transfer.easy, CURLINFO_CONNECT_TIME_T);
  const double secured = info_ms(transfer.easy, CURLINFO_APPCONNECT_TIME_T);
  const double first_byte = info_ms(transfer.easy, CURLINFO_STARTTRANSFER_TIME_T);
  if (transfer.role == Role::foreign) {
    const double handshakes = plan_.tls() ? secured : connected;
    meter.foreign({connected, plan_.tls() ? secured - connected : 0, first_byte - handshakes});
  } else {
    meter.self(first_byte);
  }
}

void RpmLoop::collect(RpmMeter& meter) {
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    Transfer* transfer = nullptr;
    curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
    const CURLcode result = message->data.result;
    if (transfer->role == Role::load) {
      long status = 0;
      curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &status);
      if (result == CURLE_OK && status / 100 == 2) {
        restart(*transfer);
        continue;
      }
      ++failed_loads_;
      if (error_.empty())
        error_ = std::string(transfer->upload ? "an upload" : "a download") + " of the load: " +
                 (result != CURLE_OK ? curl_easy_strerror(result) : "HTTP " + std::to_string(status));
      continue;
    }
    take_probe(*transfer, result, meter);
    curl_multi_remove_handle(multi_, transfer->easy);
    curl_easy_cleanup(transfer->easy);
    std::erase_if(transfers_, [transfer](const auto& each) { return each.get() == transfer; });
  }
}

// One direction: true when it ran to stability or its time, false when SIGINT or an abort ended it.
bool RpmLoop::run_direction(bool upload, const engines::BlockingSignals& signals) {
  RpmMeter meter(plan_.tls());
  const auto started = Clock::now();
  auto next_interval = started + kInterval;
  auto next_probe = started;
  const auto probe_every = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / plan_.probes_per_second));
  interval_bytes_ = 0;
  failed_loads_ = 0;
  add(Role::load, upload);
  ++connections_;
  bool ended = false, interrupted = false;
  while (!ended) {
    int running = 0;
    curl_multi_perform(multi_, &running);
    collect(meter);
    const auto now = Clock::now();
    if (now >= next_probe) {
      launch_probes(upload);
      next_probe += probe_every;
    }
    if (now >= next_interval) {
      const bool stable = meter.close_interval(std::chrono::duration<double>(kInterval).count(), interval_bytes_);
      interval_bytes_ = 0;
      next_interval += kInterval;
      // A load the server refuses outright (no HTTP/2, an untrusted certificate, no upload location)
      // is not waited out: nothing it could measure would follow.
      refused_ = failed_loads_ > 0 && meter.bytes() == 0;
      ended = stable || refused_ || seconds_since(started) >= plan_.max_seconds;
      if (!ended && !meter.goodput_stable() && connections_ < plan_.max_connections) {
        add(Role::load, upload);
        ++connections_;
      }
    }
    interrupted = signals.window_closed.load(std::memory_order_relaxed) || signals.aborted.load(std::memory_order_relaxed);
    ended = ended || interrupted;
    const auto wake = std::min(next_probe, next_interval);
    const int wait_ms = static_cast<int>(std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count(), 0, 100));
    if (!ended) curl_multi_poll(multi_, nullptr, 0, wait_ms, nullptr);
  }
  results_.push_back(meter.result(upload ? "upload" : "download", seconds_since(started), connections_));
  remove_all();
  return !interrupted;
}

void RpmLoop::run(const engines::TestClock& clock, const engines::BlockingSignals& signals) {
  clock_ = clock;
  bool whole = false;
  try {
    whole = run_direction(false, signals) && (plan_.upload_url.empty() || refused_ || run_direction(true, signals));
  } catch (const std::exception& failure) {
    if (error_.empty()) error_ = failure.what();
  }
  remove_all();
  run_.finished(!whole && signals.aborted.load(std::memory_order_relaxed));
}

}  // namespace testio::workloads::rpm
