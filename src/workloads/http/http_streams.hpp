// The client's streams of an HTTP download test, on libcurl's multi interface: one CurlLoop per
// worker (one CURLM, run as the worker's blocking job, since libcurl's handles belong to the one
// thread that drives them) and one HttpSlot per slot (one easy handle, one transfer in flight at a
// time, the next number taken from the plan). Owner: the worker thread, after the lifecycle made
// them on the control thread; the tally is read by the control thread once the workers stopped.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engines/stream_task.hpp"
#include "stats/counters.hpp"
#include "stats/histogram.hpp"
#include "workloads/http/http_plan.hpp"

namespace testio::workloads::http {

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

}  // namespace testio::workloads::http
