// "http": COUNT downloads from any HTTP/1.1 server, N at a time (testio -c URL N --transfers
// COUNT, or --urls FILE). The client's side only: the server is whatever answers the URL, never
// testio -s. Its options are --transfers' (transfers/) and so is its report section. Its rules,
// its plan and libcurl's set-up (http.cpp, which --rpm shares), its URLs (http_url.cpp, which
// the command line and the URL fuzzer read) and its streams (http_streams.cpp) share this header.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/forward.hpp"

// libcurl's easy handle, as <curl/curl.h> declares it (a typedef may be repeated): that header
// stays in the units that call libcurl.
typedef void CURL;

namespace testio::workloads::http {

const Workload& workload();

// The URLs of HTTP downloads (http_url.cpp): which can be downloaded, the transfer number in
// them, and the file name --save gives each. libcurl's URL parser reads them; nothing here
// touches the network.

// "{i}" in a URL stands for the transfer number, 1..COUNT.
inline constexpr const char* kNumberToken = "{i}";

// `url` with every "{i}" replaced by `number`.
std::string url_with_number(std::string url, std::uint64_t number);

// Why `url` cannot be downloaded (it does not parse, its scheme is not http or https, it has no
// host), in one sentence; empty when it can. A `{i}` in it stands for a transfer number.
std::string url_problem(const std::string& url);

// The URL's file name for --save: its path's last segment (without the query), or empty when it
// has none ("http://host/", "..").
std::string file_name_of(const std::string& url);

// What every libcurl user here sets up the same way (http.cpp): the library once, the address
// family -4/-6 ask for, and --insecure. The HTTP downloads and --rpm share them. Any thread, but
// init_curl_once() before a second thread uses libcurl.

// libcurl's global set-up, once, on the control thread before any worker starts (it is not itself
// thread-safe). Throws std::runtime_error when libcurl cannot start.
void init_curl_once();
// CURLOPT_IPRESOLVE for -4, -6 or neither.
long ip_resolve_of(const config::Config& config) noexcept;
// --insecure: the server's certificate and name are not checked (a self-signed test server).
void skip_certificate_checks(CURL* easy) noexcept;

// What every slot of the client shares (http.cpp): the URLs, checked once on the command line;
// the file each transfer is saved to; and which transfer is next. Owner: the lifecycle makes it
// before the workers start; afterwards the slots only read it, but for `next`, the one atomic they
// take transfer numbers from.
struct HttpPlan {
  std::vector<std::string> urls;     // one with "{i}" (a template), or each in turn (--urls)
  bool numbered = false;             // urls[0] holds "{i}"
  std::uint64_t count = 0;
  bool reuse = false;
  std::string save_dir;              // empty: the bodies are discarded
  bool force = false;
  std::vector<std::string> file_names;  // by transfer, with --save
  bool follow_redirects = false;
  bool insecure = false;
  long max_time_ms = 0;
  long read_size = 0;                // bytes per read (-l), as curl's receive buffer
  std::uint64_t window = 0;          // -w; 0 = autotuning
  std::string source;                // -B ADDRESS
  std::string device;                // -B %DEV
  long ip_resolve = 0;               // -4 / -6 (CURL_IPRESOLVE_*)
  std::atomic<std::uint64_t> next{0};

  // Transfer `index` (from 0): its URL, and where --save writes it.
  std::string url_for(std::uint64_t index) const;
  std::string file_for(std::uint64_t index) const { return save_dir + "/" + file_names[index]; }
};

// From the command line's config; with --save, names every file and checks the directory (throws
// std::runtime_error in one sentence: not a directory, not writable, a file in the way).
std::unique_ptr<HttpPlan> make_http_plan(const config::Config& config);

// What ends a test of downloads, in the report's words (the Workload's extent, the side's start).
std::string downloads_extent(const spec::TestSpec& spec);

// The client's side (http_streams.cpp): one HttpSlot per slot on libcurl's multi interface, its
// downloads reported as a transfers section.
std::unique_ptr<TestSide> download_side(const config::Config& config, const spec::TestSpec& spec);

}  // namespace testio::workloads::http
