// --rpm's data path: the draft's meter of one direction (no network in it), the libcurl loop that
// loads the path and probes it, and the client's side that fetches a /.well-known/nq
// configuration, runs the loop on one worker and reports what it measured.
//
// The RPM test's network side: one libcurl multi handle, run as its worker's blocking job (libcurl's
// handles belong to the one thread that drives them). Per direction it keeps the load transfers
// going (a large GET, or a PUT to the upload URL, each restarted as it ends), adds a load
// connection each second until goodput is stable or 16 are open, and sends probe pairs at a fixed
// rate; each second closes an interval of the RpmMeter. Owner: its worker's thread; the control
// thread reads the results once the worker stopped.
// (Asio only for the socket a side is offered and does not take: its slots connect through libcurl.)
#include <asio/ip/tcp.hpp>
#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "engines/worker.hpp"
#include "engines/stream_task.hpp"
#include "stats/counters.hpp"
#include "util/log.hpp"
#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/rpm/rpm.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::rpm {
namespace {

constexpr double kStableSpread = 0.05;  // the draft's SDT: 5%

double mean(const std::vector<double>& values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double relative_spread(const std::vector<double>& values) {
  const double average = mean(values);
  if (values.size() < 2 || average <= 0) return 0;
  double squares = 0;
  for (double value : values) squares += (value - average) * (value - average);
  return std::sqrt(squares / static_cast<double>(values.size())) / average;
}

std::vector<double> last(const std::vector<double>& values, std::size_t count) {
  return {values.end() - static_cast<std::ptrdiff_t>(std::min(count, values.size())), values.end()};
}

}  // namespace

std::string DirectionResult::confidence() const {
  if (goodput_stable && rpm_stable && spread_percent <= 5) return "high";
  return spread_percent <= 10 && rpm > 0 ? "medium" : "low";
}

double trimmed_mean(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t kept = std::max<std::size_t>(1, values.size() - values.size() / 20);
  return std::accumulate(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(kept), 0.0) /
         static_cast<double>(kept);
}

bool RpmMeter::stable(const std::vector<double>& averages) {
  return averages.size() >= kWindow && relative_spread(last(averages, kWindow)) <= kStableSpread;
}

bool RpmMeter::close_interval(double seconds, std::uint64_t bytes) {
  bytes_ += bytes;
  goodput_.push_back(seconds > 0 ? static_cast<double>(bytes) * 8 / seconds : 0);
  foreign_.push_back(std::move(pending_foreign_));
  self_.push_back(std::move(pending_self_));
  foreign_count_ += foreign_.back().size();
  self_count_ += self_.back().size();
  pending_foreign_.clear();
  pending_self_.clear();
  if (goodput_.size() >= kWindow) goodput_average_.push_back(mean(last(goodput_, kWindow)));
  if (foreign_.size() >= kWindow) {
    const double rpm = rpm_of_window(nullptr);
    if (rpm > 0) rpm_average_.push_back(rpm);
  }
  return stable(goodput_average_) && stable(rpm_average_);
}

// RPM of the probes of the last kWindow intervals: 60,000 over the mean of the foreign probes'
// (TCP, TLS and HTTP, each trimmed) and the self probes' trimmed mean.
double RpmMeter::rpm_of_window(DirectionResult* detail) const {
  std::vector<double> tcp, tls, http, self;
  const std::size_t from = foreign_.size() - std::min(kWindow, foreign_.size());
  for (std::size_t i = from; i < foreign_.size(); ++i) {
    for (const ForeignProbe& probe : foreign_[i]) {
      tcp.push_back(probe.tcp_ms);
      tls.push_back(probe.tls_ms);
      http.push_back(probe.http_ms);
    }
    self.insert(self.end(), self_[i].begin(), self_[i].end());
  }
  if (tcp.empty() || self.empty()) return 0;
  const double tcp_ms = trimmed_mean(tcp), tls_ms = trimmed_mean(tls), http_ms = trimmed_mean(http);
  const double self_ms = trimmed_mean(self);
  // Without TLS (http://) the foreign probe has two steps, not three.
  const double foreign_ms = tls_ ? (tcp_ms + tls_ms + http_ms) / 3 : (tcp_ms + http_ms) / 2;
  const double round_trip_ms = (foreign_ms + self_ms) / 2;
  if (detail) {
    detail->tcp_ms = tcp_ms;
    detail->tls_ms = tls_ ? tls_ms : 0;
    detail->http_foreign_ms = http_ms;
    detail->http_self_ms = self_ms;
  }
  return round_trip_ms > 0 ? 60'000 / round_trip_ms : 0;
}

DirectionResult RpmMeter::result(const std::string& direction, double seconds, std::uint32_t connections) const {
  DirectionResult result;
  result.direction = direction;
  result.seconds = seconds;
  result.connections = connections;
  result.goodput_bps = goodput_average_.empty() ? mean(goodput_) : goodput_average_.back();
  result.goodput_stable = stable(goodput_average_);
  result.rpm_stable = stable(rpm_average_);
  result.rpm = rpm_of_window(&result);
  result.spread_percent = 100 * relative_spread(last(rpm_average_, kWindow));
  result.foreign_probes = foreign_count_;
  result.self_probes = self_count_;
  result.failed_probes = failed_;
  result.bytes = bytes_;
  return result;
}

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

struct RpmPlan {
  std::string large_url, small_url, upload_url;
  bool insecure = false;
  long ip_resolve = CURL_IPRESOLVE_WHATEVER;
  double max_seconds = 20;
  double probes_per_second = 20;
  std::uint32_t max_connections = 16;
  bool tls() const { return large_url.rfind("https://", 0) == 0; }
};

// What the lifecycle holds for the test: the loop ends it (the worker runs the loop after begin()).
class RpmRun final : public engines::StreamTask {
 public:
  RpmRun(stats::StreamCounters& counters, engines::StreamDone done) : counters_(counters), done_(std::move(done)) {}
  void begin(const engines::TestClock&) override {}
  void close() noexcept override {}
  stats::StreamCounters& counters() noexcept { return counters_; }
  void finished(bool failed) { engines::report_finished(counters_, failed, done_); }

 private:
  stats::StreamCounters& counters_;
  engines::StreamDone done_;
};

class RpmLoop final : public engines::StreamLoop {
 public:
  RpmLoop(RpmPlan plan, RpmRun& run, std::vector<DirectionResult>& results, std::string& error);
  ~RpmLoop() override;
  RpmLoop(const RpmLoop&) = delete;
  RpmLoop& operator=(const RpmLoop&) = delete;
  void run(const engines::TestClock& clock, const engines::BlockingSignals& signals) override;

 private:
  enum class Role { load, foreign, self };
  struct Transfer {
    RpmLoop* loop = nullptr;
    CURL* easy = nullptr;
    Role role = Role::load;
    bool upload = false;
    std::uint64_t moved = 0;  // this request's body bytes, either way
  };
  bool run_direction(bool upload, const engines::BlockingSignals& signals);
  Transfer& add(Role role, bool upload);
  void restart(Transfer& load);
  void launch_probes(bool upload);
  void collect(RpmMeter& meter);
  void take_probe(Transfer& transfer, CURLcode result, RpmMeter& meter);
  void remove_all();
  static std::size_t on_body(char*, std::size_t, std::size_t size, void* transfer);
  static std::size_t on_upload(char* buffer, std::size_t, std::size_t size, void* transfer);

  RpmPlan plan_;
  RpmRun& run_;
  std::vector<DirectionResult>& results_;
  std::string& error_;
  CURLM* multi_;
  std::vector<std::unique_ptr<Transfer>> transfers_;
  engines::TestClock clock_;
  std::uint64_t interval_bytes_ = 0;  // the load's bytes in the interval under way
  std::uint32_t connections_ = 0;
  std::size_t probes_in_flight_ = 0;
  std::uint32_t failed_loads_ = 0;    // load transfers of this direction that failed
  bool refused_ = false;              // ... every one, before any byte moved: the server will not carry it
};

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

constexpr std::size_t kMaxConfig = 64 * 1024;

std::size_t keep_config(char* data, std::size_t, std::size_t size, void* text) {
  auto* body = static_cast<std::string*>(text);
  if (body->size() + size > kMaxConfig) return 0;  // ends the transfer: too large to be a configuration
  body->append(data, size);
  return size;
}

// GET /.well-known/nq, on the control thread before the test starts.
NqUrls fetch_nq_config(const std::string& url, bool insecure) {
  std::string body;
  CURL* easy = curl_easy_init();
  if (!easy) throw std::runtime_error("libcurl's easy handle could not be made");
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &keep_config);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10'000L);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  if (insecure) http::skip_certificate_checks(easy);
  const CURLcode result = curl_easy_perform(easy);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(easy);
  if (result != CURLE_OK) throw std::runtime_error(url + ": " + curl_easy_strerror(result));
  if (status / 100 != 2) throw std::runtime_error(url + " answered HTTP " + std::to_string(status));
  std::string why;
  std::optional<NqUrls> urls = parse_nq_config(body, why);
  if (!urls) throw std::runtime_error(why);
  return *urls;
}

RpmPlan make_plan(const config::Config& config, const RpmSpec& rpm) {
  RpmPlan plan;
  plan.insecure = config.insecure;
  plan.ip_resolve = http::ip_resolve_of(config);
  plan.max_seconds = static_cast<double>(rpm.max_seconds);
  plan.probes_per_second = static_cast<double>(rpm.probes_per_second);
  plan.max_connections = static_cast<std::uint32_t>(rpm.max_connections);
  const std::string& url = config.urls.front();
  if (is_nq_config_url(url)) {
    const NqUrls urls = fetch_nq_config(url, config.insecure);
    plan.large_url = urls.large;
    plan.small_url = urls.small;
    plan.upload_url = urls.upload;
  } else {
    plan.large_url = url;
    plan.small_url = rpm.small_url;  // (the command line asks for one)
    plan.upload_url = rpm.upload_url;
  }
  return plan;
}

// Owner: the lifecycle (control thread); the loop belongs to its worker, the results it fills are
// read once the worker stopped.
class RpmSide final : public TestSide {
 public:
  RpmSide(const config::Config& config, const spec::TestSpec& spec) {
    http::init_curl_once();
    plan_ = make_plan(config, part_of<RpmSpec>(spec));
  }

  DirectionLayout layout() const override { return {1, 0, /*client_sends_forward=*/false}; }
  Connections connections() const override { return Connections::during_test; }
  void describe_start(report::StartInfo& start) const override {
    start.extent = "until goodput and responsiveness are stable, at most " +
                   std::to_string(static_cast<int>(plan_.max_seconds)) + " s a direction";
    start.manner = "HTTP/2 load and probe pairs (" + std::to_string(static_cast<int>(plan_.probes_per_second)) +
                   " a second)";
  }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<net::TcpSocket>) override {
    auto run = std::make_unique<RpmRun>(place.counters, std::move(place.done));
    place.worker.set_loop(std::make_unique<RpmLoop>(plan_, *run, results_, error_));
    return run;
  }

  void add_to_report(report::TestReport& report) const override {
    report.sections.push_back(std::make_shared<RpmSection>(results_, error_));
  }

  std::string failure(const report::TestReport& report) const override {
    const auto* section = report.section<RpmSection>();
    return section ? section->failure() : std::string();
  }

 private:
  RpmPlan plan_;
  std::vector<DirectionResult> results_;  // written by the loop's worker
  std::string error_;
};

}  // namespace

std::unique_ptr<TestSide> rpm_side(const config::Config& config, const spec::TestSpec& spec) {
  return std::make_unique<RpmSide>(config, spec);
}

}  // namespace testio::workloads::rpm
