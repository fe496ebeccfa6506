// HTTP downloads (`testio -c URL N --transfers COUNT`, or --urls FILE): what every slot of the
// client shares. The URLs, checked once on the command line; the file each transfer is saved to;
// and which transfer is next. Owner: the lifecycle makes it before the workers start; afterwards
// the slots only read it, but for `next`, the one atomic they take transfer numbers from.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "workloads/http/http_url.hpp"

namespace testio::workloads::http {

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

}  // namespace testio::workloads::http
