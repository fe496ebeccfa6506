// The URLs of HTTP downloads: which can be downloaded, the transfer number in them, and the file
// name --save gives each. libcurl's URL parser reads them (the command line's, and the URL
// fuzzer's); nothing here touches the network.
#include "workloads/http/http.hpp"

#include <curl/curl.h>

namespace testio::workloads::http {
namespace {

// One part of a parsed URL, or empty.
std::string part_of(CURLU* parsed, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(parsed, part, &text, 0) != CURLUE_OK || !text) return {};
  std::string value = text;
  curl_free(text);
  return value;
}

struct ParsedUrl {
  explicit ParsedUrl(const std::string& url) : handle(curl_url()) {
    result = handle ? curl_url_set(handle, CURLUPART_URL, url.c_str(), 0) : CURLUE_OUT_OF_MEMORY;
  }
  ~ParsedUrl() { curl_url_cleanup(handle); }
  ParsedUrl(const ParsedUrl&) = delete;
  ParsedUrl& operator=(const ParsedUrl&) = delete;
  CURLU* handle;
  CURLUcode result;
};

}  // namespace

std::string url_with_number(std::string url, std::uint64_t number) {
  const std::string digits = std::to_string(number);
  for (std::size_t at = url.find(kNumberToken); at != std::string::npos; at = url.find(kNumberToken, at + digits.size()))
    url.replace(at, 3, digits);
  return url;
}

std::string url_problem(const std::string& url) {
  ParsedUrl parsed(url_with_number(url, 1));
  if (parsed.result != CURLUE_OK)
    return "'" + url + "' does not parse as a URL: " + curl_url_strerror(parsed.result);
  const std::string scheme = part_of(parsed.handle, CURLUPART_SCHEME);
  if (scheme != "http" && scheme != "https")
    return "'" + url + "': testio downloads http:// and https:// URLs, not " + scheme + "://";
  if (part_of(parsed.handle, CURLUPART_HOST).empty()) return "'" + url + "' names no host";
  return {};
}

std::string file_name_of(const std::string& url) {
  ParsedUrl parsed(url);
  if (parsed.result != CURLUE_OK) return {};
  const std::string path = part_of(parsed.handle, CURLUPART_PATH);
  const std::string name = path.substr(path.rfind('/') + 1);
  return name == "." || name == ".." ? std::string() : name;
}

}  // namespace testio::workloads::http
