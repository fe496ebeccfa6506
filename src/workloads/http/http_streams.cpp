// HTTP downloads' data path: the client's streams and the side that makes them and reports them.
//
// The client's streams of an HTTP download test, on libcurl's multi interface: one CurlLoop per
// worker (one CURLM, run as the worker's blocking job, since libcurl's handles belong to the one
// thread that drives them) and one HttpSlot per slot (one easy handle, one transfer in flight at a
// time, the next number taken from the plan). Owner: the worker thread, after the lifecycle made
// them on the control thread; the tally is read by the control thread once the workers stopped.
// (Asio only for the socket a side is offered and does not take: its slots connect through libcurl.)
#include <asio/ip/tcp.hpp>
#include <curl/curl.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engines/worker.hpp"
#include "engines/stream_task.hpp"
#include "net/socket_options.hpp"
#include "net/tcp_info.hpp"
#include "stats/counters.hpp"
#include "stats/histogram.hpp"
#include "util/log.hpp"
#include "util/units.hpp"
#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::http {
namespace {

using engines::Clock;

std::uint64_t nanoseconds_since(Clock::time_point since) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count());
}

std::uint64_t info_ns(CURL* easy, CURLINFO what) {
  curl_off_t microseconds = 0;
  curl_easy_getinfo(easy, what, &microseconds);
  return static_cast<std::uint64_t>(microseconds) * 1000;
}

// One worker's results: timings in one set of histograms for all its slots (30 KiB each).
struct HttpTally {
  stats::LatencyHistogram connect_ns;       // the kernel's RTT once connected (per connection opened)
  stats::LatencyHistogram connect_seen_ns;  // libcurl's connect time: the handshake plus this worker's queue
  stats::LatencyHistogram first_byte_ns;    // the request sent to the first byte of the answer, as seen
  stats::LatencyHistogram transfer_ns;      // the transfer's start to its last byte
  stats::LatencyHistogram loop_turn_ns;     // one turn of the loop: the longest an event waited in it
  std::map<long, std::uint64_t> statuses;   // HTTP status -> transfers answered with it
  std::uint64_t completed = 0;              // 2xx, whole
  std::uint64_t failed = 0;
  std::uint64_t bytes = 0;                  // bodies of the completed transfers
  std::uint64_t partial_files_removed = 0;
  std::string first_error;
};

class HttpSlot;

class CurlLoop final : public engines::StreamLoop {
 public:
  explicit CurlLoop(HttpTally& tally);
  ~CurlLoop() override;
  CurlLoop(const CurlLoop&) = delete;
  CurlLoop& operator=(const CurlLoop&) = delete;

  CURLM* multi() const noexcept { return multi_; }
  HttpTally& tally() noexcept { return tally_; }
  // On the control thread, while the lifecycle makes the worker's streams.
  void attach(HttpSlot& slot);
  // Drives every slot's transfers until all are done, SIGINT ends them (the ones under way are
  // abandoned) or the test is aborted.
  void run(const engines::TestClock& clock, const engines::BlockingSignals& signals) override;

 private:
  static int on_socket(CURL*, curl_socket_t fd, int what, void* loop, void*);
  static int on_timer(CURLM*, long timeout_ms, void* loop);
  bool any_active() const noexcept;
  int wait_ms() const noexcept;
  void collect_finished();

  CURLM* multi_;
  int epoll_;                          // the sockets libcurl asked to watch
  engines::Clock::time_point timer_due_ = engines::Clock::time_point::max();  // libcurl's next timeout
  std::vector<HttpSlot*> slots_;
  HttpTally& tally_;  // the side's, so it outlives the worker
};

class HttpSlot final : public engines::StreamTask {
 public:
  HttpSlot(CurlLoop& loop, HttpPlan& plan, stats::StreamCounters& counters, engines::StreamDone on_done);
  ~HttpSlot() override;

  void begin(const engines::TestClock& clock) override;
  void close() noexcept override { abandon(); }
  // From the loop: the easy handle finished with `result`.
  void transfer_ended(CURLcode result);
  // Gives up the transfer under way (its file removed) and takes no other.
  void abandon() noexcept;
  bool active() const noexcept { return !finished_; }

 private:
  static std::size_t on_body(char* data, std::size_t, std::size_t size, void* slot);
  static int on_socket(void* slot, curl_socket_t fd, curlsocktype purpose);
  static int on_request(void* slot, char*, char*, int, int);
  void set_up_handle();
  void take_next();
  bool write_body(const char* data, std::size_t size);
  bool keep_file();
  void record_times();
  void fail(const std::string& reason);
  void remove_partial_file() noexcept;
  void finish_slot();

  CurlLoop& loop_;
  HttpPlan& plan_;
  stats::StreamCounters& counters_;
  CURL* easy_;
  bool in_multi_ = false;
  std::uint64_t current_ = 0;    // transfer number under way (from 0)
  std::string url_;
  std::uint64_t received_ = 0;   // body bytes of the current transfer
  int new_socket_ = -1;          // the connection this transfer opened; -1: it reused one
  std::uint64_t handshake_ns_ = 0;
  long status_ = 0;              // of the current answer, once its headers are in
  int file_ = -1;
  std::string part_path_;        // DIR/.NAME.testio-part until the body is whole
  bool finished_ = false;
  char error_[CURL_ERROR_SIZE] = {};
  engines::TestClock clock_;
  engines::StreamDone on_done_;
};

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

HttpSlot::HttpSlot(CurlLoop& loop, HttpPlan& plan, stats::StreamCounters& counters, engines::StreamDone on_done)
    : loop_(loop), plan_(plan), counters_(counters), easy_(curl_easy_init()), on_done_(std::move(on_done)) {
  if (!easy_) throw std::runtime_error("libcurl could not make an easy handle");
  set_up_handle();
  loop_.attach(*this);
}

HttpSlot::~HttpSlot() {
  if (in_multi_) {
    curl_multi_remove_handle(loop_.multi(), easy_);
    remove_partial_file();
  }
  curl_easy_cleanup(easy_);
}

// What stays the same for every transfer of the slot.
void HttpSlot::set_up_handle() {
  curl_easy_setopt(easy_, CURLOPT_PRIVATE, this);
  curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);  // worker threads: no SIGALRM for timeouts
  curl_easy_setopt(easy_, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(easy_, CURLOPT_USERAGENT, "testio");
  curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_);
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &HttpSlot::on_body);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(easy_, CURLOPT_SOCKOPTFUNCTION, &HttpSlot::on_socket);
  curl_easy_setopt(easy_, CURLOPT_SOCKOPTDATA, this);
  curl_easy_setopt(easy_, CURLOPT_PREREQFUNCTION, &HttpSlot::on_request);
  curl_easy_setopt(easy_, CURLOPT_PREREQDATA, this);
  curl_easy_setopt(easy_, CURLOPT_BUFFERSIZE, plan_.read_size);
  curl_easy_setopt(easy_, CURLOPT_TIMEOUT_MS, plan_.max_time_ms);
  curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, plan_.max_time_ms);
  curl_easy_setopt(easy_, CURLOPT_IPRESOLVE, plan_.ip_resolve);
  if (!plan_.source.empty()) curl_easy_setopt(easy_, CURLOPT_INTERFACE, ("host!" + plan_.source).c_str());
  if (plan_.follow_redirects) {
    curl_easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy_, CURLOPT_MAXREDIRS, 10L);
  }
  if (plan_.insecure) skip_certificate_checks(easy_);
  if (!plan_.reuse) {  // a connection per transfer, as the experiment ran it
    curl_easy_setopt(easy_, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(easy_, CURLOPT_FORBID_REUSE, 1L);
  }
}

void HttpSlot::begin(const engines::TestClock& clock) {
  clock_ = clock;
  take_next();
}

void HttpSlot::take_next() {
  if (finished_) return;
  current_ = plan_.next.fetch_add(1, std::memory_order_relaxed);
  if (current_ >= plan_.count) {
    finish_slot();
    return;
  }
  url_ = plan_.url_for(current_);
  received_ = 0;
  status_ = 0;
  new_socket_ = -1;
  handshake_ns_ = 0;
  error_[0] = '\0';
  curl_easy_setopt(easy_, CURLOPT_URL, url_.c_str());
  if (!plan_.save_dir.empty()) {
    const std::string& name = plan_.file_names[current_];
    part_path_ = plan_.save_dir + "/." + name + ".testio-part";
  }
  const CURLMcode added = curl_multi_add_handle(loop_.multi(), easy_);
  if (added != CURLM_OK) {
    fail(std::string("libcurl refused the transfer: ") + curl_multi_strerror(added));
    return;
  }
  in_multi_ = true;
}

// Every new connection: -w and -B %DEV before it connects, and noted, so that its handshake is read.
int HttpSlot::on_socket(void* opaque, curl_socket_t fd, curlsocktype purpose) {
  auto* slot = static_cast<HttpSlot*>(opaque);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKOPT_OK;
  try {
    if (!slot->plan_.device.empty()) net::bind_to_device(fd, slot->plan_.device);
    if (slot->plan_.window) net::set_socket_buffers(fd, slot->plan_.window);
  } catch (const std::exception& refused) {
    std::snprintf(slot->error_, sizeof slot->error_, "%s", refused.what());
    return CURL_SOCKOPT_ERROR;
  }
  slot->new_socket_ = fd;
  return CURL_SOCKOPT_OK;
}

// Connected (and through TLS), the request about to go: the kernel's RTT of the connection so
// far, which the SYN and its answer set, however long this worker took to notice.
int HttpSlot::on_request(void* opaque, char*, char*, int, int) {
  auto* slot = static_cast<HttpSlot*>(opaque);
  if (slot->new_socket_ >= 0) {
    const net::TcpInfo info = net::read_tcp_info(slot->new_socket_);
    if (info.valid) slot->handshake_ns_ = std::uint64_t{info.rtt_us} * 1000;
  }
  return CURL_PREREQFUNC_OK;
}

std::size_t HttpSlot::on_body(char* data, std::size_t, std::size_t size, void* opaque) {
  auto* slot = static_cast<HttpSlot*>(opaque);
  if (slot->status_ == 0) curl_easy_getinfo(slot->easy_, CURLINFO_RESPONSE_CODE, &slot->status_);
  slot->counters_.record(size, slot->clock_.since_start(engines::Clock::now()));
  slot->received_ += size;
  return slot->write_body(data, size) ? size : CURL_WRITEFUNC_ERROR;
}

// Only a 2xx body is kept; it goes to DIR/.NAME.testio-part until it is whole.
bool HttpSlot::write_body(const char* data, std::size_t size) {
  if (plan_.save_dir.empty() || status_ / 100 != 2) return true;
  if (file_ < 0) {
    file_ = ::open(part_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (file_ < 0) {
      std::snprintf(error_, sizeof error_, "cannot create %s: %s", part_path_.c_str(), std::strerror(errno));
      return false;
    }
  }
  for (std::size_t written = 0; written < size;) {
    const ssize_t n = ::write(file_, data + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::snprintf(error_, sizeof error_, "writing %s failed: %s", part_path_.c_str(), std::strerror(errno));
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

void HttpSlot::transfer_ended(CURLcode result) {
  curl_multi_remove_handle(loop_.multi(), easy_);
  in_multi_ = false;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status_);
  if (status_ > 0) ++loop_.tally().statuses[status_];
  if (result != CURLE_OK) {
    fail(error_[0] ? error_ : curl_easy_strerror(result));
    return;
  }
  if (status_ / 100 != 2) {
    fail("HTTP " + std::to_string(status_) + (status_ / 100 == 3 && !plan_.follow_redirects
                                                   ? " (a redirect; --location follows it)" : ""));
    return;
  }
  if (!keep_file()) return;
  record_times();
  HttpTally& tally = loop_.tally();
  ++tally.completed;
  tally.bytes += received_;
  take_next();
}

// The whole body in place under its name; an empty body still makes its (empty) file.
bool HttpSlot::keep_file() {
  if (plan_.save_dir.empty()) return true;
  if (file_ < 0) file_ = ::open(part_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const bool closed = file_ >= 0 && ::close(file_) == 0;  // NFS and friends report write errors at close
  file_ = -1;
  const std::string path = plan_.file_for(current_);
  if (!closed || ::rename(part_path_.c_str(), path.c_str()) != 0) {
    const int error = errno;
    fail("cannot write " + path + ": " + std::strerror(error));
    return false;
  }
  return true;
}

void HttpSlot::record_times() {
  HttpTally& tally = loop_.tally();
  if (new_socket_ >= 0) {
    if (handshake_ns_) tally.connect_ns.record(handshake_ns_);
    tally.connect_seen_ns.record(info_ns(easy_, CURLINFO_CONNECT_TIME_T) - info_ns(easy_, CURLINFO_NAMELOOKUP_TIME_T));
  }
  const std::uint64_t request_sent = info_ns(easy_, CURLINFO_PRETRANSFER_TIME_T);
  const std::uint64_t first_byte = info_ns(easy_, CURLINFO_STARTTRANSFER_TIME_T);
  if (first_byte >= request_sent) tally.first_byte_ns.record(first_byte - request_sent);
  tally.transfer_ns.record(info_ns(easy_, CURLINFO_TOTAL_TIME_T));
}

// One line per failed transfer, naming it; the slot goes on with the next.
void HttpSlot::fail(const std::string& reason) {
  remove_partial_file();
  HttpTally& tally = loop_.tally();
  ++tally.failed;
  const std::string line = "transfer " + std::to_string(current_ + 1) + " (" + url_ + "): " + reason;
  util::log_error("{}", line);
  if (tally.first_error.empty()) tally.first_error = line;
  take_next();
}

void HttpSlot::remove_partial_file() noexcept {
  if (file_ >= 0) {
    ::close(file_);
    file_ = -1;
  }
  if (!part_path_.empty() && ::unlink(part_path_.c_str()) == 0) ++loop_.tally().partial_files_removed;
}

void HttpSlot::abandon() noexcept {
  if (in_multi_) {
    curl_multi_remove_handle(loop_.multi(), easy_);
    in_multi_ = false;
    remove_partial_file();
  }
  finish_slot();
}

void HttpSlot::finish_slot() {
  if (finished_) return;
  finished_ = true;
  engines::report_finished(counters_, false, on_done_);
}

// The workers' tallies merged, once they have stopped, in the words of a transfers report.
transfers::TransfersSummary summarize(const HttpPlan& plan, const std::vector<std::unique_ptr<HttpTally>>& tallies,
                                      std::uint32_t slots, double seconds) {
  transfers::TransfersSummary summary;
  summary.http = true;
  summary.url = plan.numbered || plan.urls.size() == 1 ? plan.urls.front()
                                                        : std::to_string(plan.urls.size()) + " URLs";
  summary.requested = plan.count;
  summary.concurrency = slots;
  summary.reuse = plan.reuse;
  summary.saved_to = plan.save_dir;
  summary.seconds = seconds;
  HttpTally all;
  for (const auto& tally : tallies) {
    all.connect_ns.merge(tally->connect_ns);
    all.connect_seen_ns.merge(tally->connect_seen_ns);
    all.first_byte_ns.merge(tally->first_byte_ns);
    all.transfer_ns.merge(tally->transfer_ns);
    all.loop_turn_ns.merge(tally->loop_turn_ns);
    for (const auto& [status, count] : tally->statuses) all.statuses[status] += count;
    summary.completed += tally->completed;
    summary.failed += tally->failed;
    summary.bytes += tally->bytes;
    summary.partial_files_removed += tally->partial_files_removed;
    if (summary.first_error.empty()) summary.first_error = tally->first_error;
  }
  summary.connect = stats::summarize(all.connect_ns);
  summary.connect_seen = stats::summarize(all.connect_seen_ns);
  summary.first_byte = stats::summarize(all.first_byte_ns);
  summary.transfer = stats::summarize(all.transfer_ns);
  summary.loop_turn = stats::summarize(all.loop_turn_ns);
  summary.statuses.assign(all.statuses.begin(), all.statuses.end());
  summary.size = summary.completed ? summary.bytes / summary.completed : 0;
  if (seconds > 0) {
    summary.transfers_per_second = static_cast<double>(summary.completed) / seconds;
    summary.bits_per_second = util::bits_per_second(summary.bytes, seconds);
  }
  return summary;
}

// One HttpSlot per slot; the slots of a worker share its CurlLoop. Owner: the lifecycle (control
// thread); each tally is written by its worker and read once the workers stopped.
class DownloadSide final : public TestSide {
 public:
  DownloadSide(const config::Config& config, const spec::TestSpec& spec) : spec_(spec), plan_(make_http_plan(config)) {
    init_curl_once();
  }

  void describe_start(report::StartInfo& start) const override { start.extent = downloads_extent(spec_); }

  DirectionLayout layout() const override { return {spec_.connections, 0, /*client_sends_forward=*/false}; }
  Connections connections() const override { return Connections::during_test; }
  const char* done_message() const override { return "transfers_done"; }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<net::TcpSocket>) override {
    auto* loop = dynamic_cast<CurlLoop*>(place.worker.loop());
    if (!loop) {
      tallies_.push_back(std::make_unique<HttpTally>());
      auto made = std::make_unique<CurlLoop>(*tallies_.back());
      loop = made.get();
      place.worker.set_loop(std::move(made));
    }
    return std::make_unique<HttpSlot>(*loop, *plan_, place.counters, std::move(place.done));
  }

  void add_to_report(report::TestReport& report) const override {
    transfers::TransfersSummary summary = summarize(*plan_, tallies_, spec_.connections, report.local().wall_s);
    if (summary.partial_files_removed)
      util::log_warn("removed {} partially written files under {}", summary.partial_files_removed, plan_->save_dir);
    report.sections.push_back(std::make_shared<transfers::TransfersSection>(std::move(summary)));
  }

  std::string failure(const report::TestReport& report) const override {
    const auto* section = report.section<transfers::TransfersSection>();
    if (!section) return {};
    const transfers::TransfersSummary& done = section->summary();
    if (done.completed == done.requested) return {};
    if (!done.failed) return std::to_string(done.completed) + " of " + std::to_string(done.requested) +
                             " transfers completed; the rest did not start";
    return std::to_string(done.failed) + " of " + std::to_string(done.requested) + " transfers failed; the first: " +
           done.first_error;
  }

 private:
  spec::TestSpec spec_;
  std::unique_ptr<HttpPlan> plan_;
  std::vector<std::unique_ptr<HttpTally>> tallies_;  // one per worker
};

}  // namespace

std::unique_ptr<TestSide> download_side(const config::Config& config, const spec::TestSpec& spec) {
  return std::make_unique<DownloadSide>(config, spec);
}

}  // namespace testio::workloads::http
