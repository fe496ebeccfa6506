// The RPM test's network side: one libcurl multi handle, run as its worker's blocking job (libcurl's
// handles belong to the one thread that drives them). Per direction it keeps the load transfers
// going (a large GET, or a PUT to the upload URL, each restarted as it ends), adds a load
// connection each second until goodput is stable or 16 are open, and sends probe pairs at a fixed
// rate; each second closes an interval of the RpmMeter. Owner: its worker's thread; the control
// thread reads the results once the worker stopped.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

#include "engines/stream_task.hpp"
#include "stats/counters.hpp"
#include "workloads/rpm/rpm_meter.hpp"

namespace testio::workloads::rpm {

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

}  // namespace testio::workloads::rpm
