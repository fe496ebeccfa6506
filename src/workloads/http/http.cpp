// HTTP downloads' rules and what their slots share: the plan made from the command line (URLs,
// the files --save writes, the next transfer), and libcurl set up the same way for every user of
// it here (--rpm too). The streams that run the plan are in http_streams.cpp.
#include "workloads/http/http.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "workloads/part.hpp"
#include "workloads/transfers/transfers.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::http {

void init_curl_once() {
  static std::once_flag done;
  std::call_once(done, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl failed to initialise");
  });
}

long ip_resolve_of(const config::Config& config) noexcept {
  return config.family == config::AddressFamily::v4   ? CURL_IPRESOLVE_V4
         : config.family == config::AddressFamily::v6 ? CURL_IPRESOLVE_V6
                                                      : CURL_IPRESOLVE_WHATEVER;
}

void skip_certificate_checks(CURL* easy) noexcept {
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
}

namespace {

// DIR/NAME for each transfer: the URL's file name where it is used once, the transfer number
// (transfer-0001 ...) where names repeat or a URL has none.
std::vector<std::string> name_files(const HttpPlan& plan) {
  std::vector<std::string> names(plan.count);
  std::unordered_map<std::string, std::uint64_t> uses;
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    names[i] = file_name_of(plan.url_for(i));
    ++uses[names[i]];
  }
  const int width = static_cast<int>(std::to_string(plan.count).size());
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    if (!names[i].empty() && uses[names[i]] == 1 && names[i].rfind("transfer-", 0) != 0) continue;
    char numbered[48];
    std::snprintf(numbered, sizeof numbered, "transfer-%0*llu", width, static_cast<unsigned long long>(i + 1));
    names[i] = numbered;
  }
  return names;
}

void check_save_directory(const HttpPlan& plan) {
  namespace fs = std::filesystem;
  const std::string& dir = plan.save_dir;
  check_writable_directory(dir);
  std::error_code error;
  if (plan.force) return;
  std::uint64_t clashes = 0;
  std::string example;
  for (std::uint64_t i = 0; i < plan.count; ++i)
    if (fs::exists(plan.file_for(i), error) && clashes++ == 0) example = plan.file_for(i);
  if (clashes)
    throw std::runtime_error(example + (clashes > 1 ? " and " + std::to_string(clashes - 1) + " more files" : "") +
                             " would be overwritten; --force allows it");
}

}  // namespace

std::string HttpPlan::url_for(std::uint64_t index) const {
  if (numbered) return url_with_number(urls.front(), index + 1);
  return urls[index % urls.size()];
}

std::unique_ptr<HttpPlan> make_http_plan(const config::Config& config) {
  const spec::TestSpec& spec = config.spec;
  auto plan = std::make_unique<HttpPlan>();
  plan->urls = config.urls;
  plan->numbered = plan->urls.size() == 1 && plan->urls.front().find(kNumberToken) != std::string::npos;
  const transfers::TransfersSpec downloads = part_of<transfers::TransfersSpec>(spec);
  plan->count = downloads.count;
  plan->reuse = downloads.reuse;
  plan->follow_redirects = config.follow_redirects;
  plan->insecure = config.insecure;
  plan->max_time_ms = static_cast<long>(config.max_time_s * 1000);
  plan->read_size = static_cast<long>(std::min<std::uint64_t>(spec.buffer, CURL_MAX_READ_SIZE));
  plan->window = spec.window;
  plan->source = config.bind_address;
  plan->device = config.bind_device;
  plan->ip_resolve = ip_resolve_of(config);
  plan->save_dir = config.save_dir;
  plan->force = config.force;
  if (!plan->save_dir.empty()) {
    plan->file_names = name_files(*plan);
    check_save_directory(*plan);
  }
  return plan;
}

// What ends a test of downloads, in the report's words.
std::string downloads_extent(const spec::TestSpec& spec) {
  const transfers::TransfersSpec downloads = part_of<transfers::TransfersSpec>(spec);
  return std::to_string(downloads.count) + " downloads on " + (downloads.reuse ? "kept" : "fresh") + " connections";
}

namespace {

class Http final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits& limits) const override {
    check_download_count(spec, limits);
  }

  std::string extent(const spec::TestSpec& spec) const override { return downloads_extent(spec); }
  // Its count and --reuse are a transfers test's (its --size is the servers' to say).
  bool takes_setting(std::string_view name) const override { return part_has<transfers::TransfersSpec>(name); }
  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    return download_side(config, spec);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec&, const ServerResources&) const override {
    throw std::runtime_error("HTTP downloads run against an HTTP server, not testio -s");
  }
};

}  // namespace

const Workload& workload() {
  static const Http http;
  return http;
}

}  // namespace testio::workloads::http
