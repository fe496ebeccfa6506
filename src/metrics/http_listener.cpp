#include "metrics/http_listener.hpp"

#include <charconv>
#include <chrono>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/write.hpp>

namespace testio::metrics {

namespace {

using asio::ip::tcp;
using namespace std::chrono_literals;

// Enough for Prometheus and a few people's curl; a flood of idle connections gets closed at once.
constexpr std::uint32_t kMaxOpen = 64;
constexpr auto kReadLimit = 10s;
constexpr auto kWriteLimit = 30s;

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

std::string response_text(const HttpResponse& response, bool head_only) {
  std::string text = "HTTP/1.1 " + std::to_string(response.status) + " " + reason_phrase(response.status) + "\r\n";
  text.append("Content-Type: ").append(response.content_type).append("\r\n");
  text.append("Content-Length: ").append(std::to_string(response.body.size())).append("\r\n");
  if (response.status == 405) text.append("Allow: GET, HEAD\r\n");
  text.append("Connection: close\r\n\r\n");
  if (!head_only) text.append(response.body);
  return text;
}

// "127.0.0.1:9201", "[::1]:9201" or ":9201" (every address); nullopt when it is none of these.
std::optional<tcp::endpoint> parse_listen_address(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return std::nullopt;
  unsigned port = 0;
  const char* first = text.data() + colon + 1;
  auto [end, error] = std::from_chars(first, text.data() + text.size(), port);
  if (error != std::errc() || end != text.data() + text.size() || port > 65535) return std::nullopt;
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos) return std::nullopt;  // IPv6 needs its brackets
  asio::error_code ec;
  asio::ip::address address = host.empty() ? asio::ip::address(asio::ip::address_v6::any())
                                           : asio::ip::make_address(host, ec);
  if (ec) return std::nullopt;
  return tcp::endpoint(address, static_cast<std::uint16_t>(port));
}


}  // namespace

bool is_listen_address(const std::string& text) { return parse_listen_address(text).has_value(); }

HttpResponse plain_response(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body) + "\n"};
}

HttpListener::HttpListener(asio::io_context& io, const std::string& address, HttpHandler handler,
                           const std::string& what)
    : io_(io), acceptor_(std::make_unique<tcp::acceptor>(io)), handler_(std::move(handler)) {
  std::optional<tcp::endpoint> endpoint = parse_listen_address(address);
  if (!endpoint) throw std::runtime_error("'" + address + "' is not ADDRESS:PORT (e.g. 127.0.0.1:9201 or [::1]:9201)");
  asio::error_code ec;
  acceptor_->open(endpoint->protocol(), ec);
  if (!ec) acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
  // ":PORT" means every address, IPv4's too.
  if (!ec && endpoint->address().is_v6()) acceptor_->set_option(asio::ip::v6_only(false), ec);
  if (!ec) acceptor_->bind(*endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen for " + what + " on " + address + ": " + ec.message());
}

HttpListener::~HttpListener() = default;

std::uint16_t HttpListener::port() const { return acceptor_->local_endpoint().port(); }

void HttpListener::stop() noexcept {
  asio::error_code ignored;
  acceptor_->close(ignored);
}

asio::awaitable<void> HttpListener::serve() {
  for (;;) {
    asio::error_code error;
    tcp::socket socket = co_await acceptor_->async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (!acceptor_->is_open()) co_return;
    if (error) {
      asio::steady_timer pause(io_, 100ms);  // EMFILE and friends: back off, keep serving
      co_await pause.async_wait(asio::use_awaitable);
      continue;
    }
    if (open_ >= kMaxOpen) continue;  // closed as it goes out of scope
    ++open_;
    asio::co_spawn(io_, answer(std::move(socket)), [this](std::exception_ptr) { --open_; });
  }
}

asio::awaitable<void> HttpListener::answer(tcp::socket socket) {
  // One timer bounds the read and, re-armed, the write: a silent or slow peer is closed.
  asio::steady_timer deadline(io_, kReadLimit);
  deadline.async_wait([&socket](const asio::error_code& ec) {
    asio::error_code ignored;
    if (!ec) socket.close(ignored);
  });
  std::string received;
  ParsedHead head;
  char chunk[2048];
  while (head.status == ParsedHead::Status::incomplete) {
    asio::error_code error;
    std::size_t n = co_await socket.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, error));
    if (error) co_return;
    received.append(chunk, n);
    head = parse_request_head(received);
  }
  deadline.cancel();
  HttpResponse response;
  const bool head_only = head.request.method == "HEAD";
  if (head.status == ParsedHead::Status::bad) response = plain_response(400, "bad request: " + head.problem);
  else if (head.request.method != "GET" && !head_only) response = plain_response(405, "only GET and HEAD are served");
  else response = co_await handler_(head.request);
  deadline.expires_after(kWriteLimit);
  deadline.async_wait([&socket](const asio::error_code& ec) {
    asio::error_code ignored;
    if (!ec) socket.close(ignored);
  });
  asio::error_code error;
  co_await asio::async_write(socket, asio::buffer(response_text(response, head_only)),
                             asio::redirect_error(asio::use_awaitable, error));
  deadline.cancel();
  asio::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace testio::metrics
