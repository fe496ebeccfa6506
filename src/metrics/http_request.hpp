// The head of an HTTP/1.x request, as the metrics endpoints read it from whoever connects: the
// request line, the query's parameters (percent-decoded) and the one header they use. Peer input:
// every malformed head is refused with a reason, never guessed at (tests/fuzz/http_request_fuzzer.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace testio::metrics {

struct HttpRequest {
  std::string method;                                       // "GET"
  std::string path;                                         // "/probe", decoded
  std::vector<std::pair<std::string, std::string>> query;   // in order, decoded
  std::optional<double> scrape_timeout_s;                   // X-Prometheus-Scrape-Timeout-Seconds

  // The value of query parameter `name`; null when absent.
  const std::string* parameter(std::string_view name) const noexcept;
};

struct ParsedHead {
  enum class Status { incomplete, complete, bad } status = Status::incomplete;
  HttpRequest request;
  std::string problem;     // why it is bad, one phrase ("the request line has no HTTP version")
  std::size_t size = 0;    // the head's bytes, its blank line included (complete only)
};

inline constexpr std::size_t kMaxRequestHead = 8192;

// Reads what has arrived so far. Incomplete until the blank line that ends the head; bad when
// the head cannot be HTTP/1.x or is longer than `max_head`.
ParsedHead parse_request_head(std::string_view bytes, std::size_t max_head = kMaxRequestHead);

// %XX decoded; in a query, '+' is a space too. Nullopt for a bad escape or a decoded NUL.
std::optional<std::string> percent_decode(std::string_view text, bool query);

}  // namespace testio::metrics
