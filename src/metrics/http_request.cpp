#include "metrics/http_request.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace testio::metrics {
namespace {

using Status = ParsedHead::Status;

ParsedHead bad(std::string problem) {
  ParsedHead head;
  head.status = Status::bad;
  head.problem = std::move(problem);
  return head;
}

bool is_token_char(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!is_token_char(c)) return false;
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// "/probe?target=a&time=3": the path and the parameters, decoded. False when it cannot be.
bool parse_target(std::string_view target, HttpRequest& request) {
  if (target.empty() || target.front() != '/') return false;
  const std::size_t question = target.find('?');
  std::optional<std::string> path = percent_decode(target.substr(0, question), false);
  if (!path) return false;
  request.path = std::move(*path);
  if (question == std::string_view::npos) return true;
  std::string_view query = target.substr(question + 1);
  const std::size_t hash = query.find('#');
  if (hash != std::string_view::npos) query = query.substr(0, hash);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    std::optional<std::string> name = percent_decode(pair.substr(0, equals), true);
    std::optional<std::string> value =
        percent_decode(equals == std::string_view::npos ? std::string_view{} : pair.substr(equals + 1), true);
    if (!name || !value || name->empty()) return false;
    request.query.emplace_back(std::move(*name), std::move(*value));
  }
  return true;
}

// "GET /metrics HTTP/1.1"
std::string parse_request_line(std::string_view line, HttpRequest& request) {
  const std::size_t first = line.find(' ');
  const std::size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last || line.find(' ', first + 1) != last)
    return "the request line is not METHOD TARGET VERSION";
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, last - first - 1);
  std::string_view version = line.substr(last + 1);
  if (!is_token(method)) return "the method is not a token";
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "the request target holds a space or control character";
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return "the request is not HTTP/1.0 or HTTP/1.1";
  if (!parse_target(target, request)) return "the request target is not a path with a well-formed query";
  request.method = std::string(method);
  return "";
}

std::string parse_header(std::string_view line, HttpRequest& request) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return "a header line is not NAME: VALUE";
  std::string_view value = trim(line.substr(colon + 1));
  for (char c : value)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return "a header value holds a control character";
  if (iequals(line.substr(0, colon), "X-Prometheus-Scrape-Timeout-Seconds")) {
    double seconds = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (error != std::errc() || end != value.data() + value.size() || !std::isfinite(seconds) || seconds <= 0)
      return "X-Prometheus-Scrape-Timeout-Seconds is not a positive number";
    request.scrape_timeout_s = seconds;
  }
  return "";
}

}  // namespace

const std::string* HttpRequest::parameter(std::string_view name) const noexcept {
  const std::string* found = nullptr;
  for (const auto& [key, value] : query)
    if (key == name) found = &value;
  return found;
}

std::optional<std::string> percent_decode(std::string_view text, bool query) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      c = static_cast<char>(high * 16 + low);
      i += 2;
    } else if (c == '+' && query) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;
    out += c;
  }
  return out;
}

ParsedHead parse_request_head(std::string_view bytes, std::size_t max_head) {
  const std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > max_head) return bad("the request head is longer than " + std::to_string(max_head) + " bytes");
    return {};
  }
  if (end + 4 > max_head) return bad("the request head is longer than " + std::to_string(max_head) + " bytes");
  ParsedHead head;
  std::string_view rest = bytes.substr(0, end + 2);
  bool first = true;
  while (!rest.empty()) {
    const std::size_t eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos)
      return bad("a line ends in a bare CR or LF");
    std::string problem = first ? parse_request_line(line, head.request) : parse_header(line, head.request);
    if (!problem.empty()) return bad(problem);
    first = false;
  }
  head.status = Status::complete;
  head.size = end + 4;
  return head;
}

}  // namespace testio::metrics
