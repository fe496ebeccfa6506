#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "net/socket_options.hpp"
#include "net/tcp_info.hpp"
#include "util/log.hpp"
#include "workloads/http/curl_setup.hpp"
#include "workloads/http/http_streams.hpp"

namespace testio::workloads::http {
namespace {

std::uint64_t info_ns(CURL* easy, CURLINFO what) {
  curl_off_t microseconds = 0;
  curl_easy_getinfo(easy, what, &microseconds);
  return static_cast<std::uint64_t>(microseconds) * 1000;
}

}  // namespace

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
  spdlog::error("{}", line);
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

}  // namespace testio::workloads::http
