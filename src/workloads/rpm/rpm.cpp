// The RPM workload's rules and its one client stream; its peer is any HTTP server (the client's
// HTTP peer), so there is no server side.
#include "workloads/rpm/rpm.hpp"

#include <curl/curl.h>

#include <memory>
#include <stdexcept>

#include "workloads/http/http.hpp"
#include "workloads/part.hpp"
#include "workloads/rpm/nq_config.hpp"
#include "workloads/rpm/rpm_loop.hpp"
#include "workloads/rpm/rpm_section.hpp"

namespace testio::workloads::rpm {
namespace {

[[noreturn]] void refuse(const std::string& sentence) { throw spec::SpecError(sentence); }

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

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<asio::ip::tcp::socket>) override {
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

class Rpm final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    const RpmSpec rpm = part_of<RpmSpec>(spec);
    if (rpm.max_seconds < 5 || rpm.max_seconds > 600) refuse("--rpm-time must be from 5 to 600 seconds");
    if (rpm.probes_per_second < 1 || rpm.probes_per_second > 100) refuse("--rpm-probes must be from 1 to 100 a second");
    if (rpm.max_connections < 1 || rpm.max_connections > 16) refuse("the load takes 1 to 16 connections");
    if (spec.connections != 1) refuse("--rpm chooses its own connections: drop N");
    check_no_bulk_options(spec);
  }
  std::string extent(const spec::TestSpec& spec) const override {
    return "until stable, at most " + std::to_string(part_of<RpmSpec>(spec).max_seconds) + " s a direction";
  }
  bool takes_setting(std::string_view name) const override { return part_has<RpmSpec>(name); }
  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return std::make_unique<RpmSide>(config, spec);
  }
  std::unique_ptr<TestSide> server(const spec::TestSpec&, const ServerResources&) const override {
    throw std::runtime_error("--rpm runs against an HTTP server, not testio -s");
  }
};

}  // namespace

const Workload& workload() {
  static const Rpm rpm;
  return rpm;
}

}  // namespace testio::workloads::rpm
