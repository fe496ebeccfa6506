// The responsiveness draft's server configuration, /.well-known/nq: a JSON object whose "urls"
// name the large download, the small download and the upload (its "https_*" or "http_*" keys).
// Pure function over untrusted bytes (fuzzed); any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace testio::workloads::rpm {

struct NqUrls {
  std::string large, small, upload;  // upload may be empty
};

// The URLs `text` names; nullopt with `why` set (one sentence) when it names none usable.
std::optional<NqUrls> parse_nq_config(std::string_view text, std::string& why);

// Whether `url` is a /.well-known/nq configuration's.
bool is_nq_config_url(std::string_view url);

}  // namespace testio::workloads::rpm
