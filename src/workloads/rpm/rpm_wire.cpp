// The /.well-known/nq configuration an HTTP server may publish to name its RPM URLs: read from the
// peer, so checked field by field, in a unit of its own so the fuzz target builds it alone.
#include "workloads/rpm/rpm.hpp"

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace testio::workloads::rpm {

namespace {

constexpr std::size_t kMaxUrl = 2048;

// The first of `keys` under "urls" that is an http(s) URL of sane length; empty when none is.
std::string url_of(const nlohmann::json& urls, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const auto found = urls.find(key);
    if (found == urls.end() || !found->is_string()) continue;
    const std::string& url = found->get_ref<const std::string&>();
    if (url.size() <= kMaxUrl && (url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0)) return url;
  }
  return {};
}

}  // namespace

std::optional<NqUrls> parse_nq_config(std::string_view text, std::string& why) {
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object() || !config.contains("urls") || !config["urls"].is_object()) {
    why = "the /.well-known/nq configuration is not a JSON object with \"urls\"";
    return std::nullopt;
  }
  const nlohmann::json& urls = config["urls"];
  NqUrls found{url_of(urls, {"large_https_download_url", "large_download_url", "large_http_download_url"}),
               url_of(urls, {"small_https_download_url", "small_download_url", "small_http_download_url"}),
               url_of(urls, {"https_upload_url", "upload_url", "http_upload_url"})};
  if (found.large.empty() || found.small.empty()) {
    why = "the /.well-known/nq configuration names no large and small download URLs";
    return std::nullopt;
  }
  return found;
}

bool is_nq_config_url(std::string_view url) {
  constexpr std::string_view kPath = "/.well-known/nq";
  return url.size() >= kPath.size() && url.substr(url.size() - kPath.size()) == kPath;
}

}  // namespace testio::workloads::rpm
