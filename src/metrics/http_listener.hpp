// A small HTTP/1.1 endpoint for Prometheus to scrape: one request per connection (answered with
// Connection: close), GET or HEAD, a bounded head read within a deadline, at most a few dozen
// connections at once. What it serves is the handler's. Owner: its io_context's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include "metrics/exposition.hpp"
#include "metrics/http_request.hpp"

namespace testio::metrics {

struct HttpResponse {
  int status = 200;
  std::string content_type = kContentType;
  std::string body;
};
HttpResponse plain_response(int status, std::string body);

using HttpHandler = std::function<asio::awaitable<HttpResponse>(const HttpRequest&)>;

class HttpListener {
 public:
  // Listens at once; throws std::runtime_error ("cannot listen for WHAT on ADDRESS: reason").
  HttpListener(asio::io_context& io, const std::string& address, HttpHandler handler, const std::string& what);

  asio::awaitable<void> serve();
  void stop() noexcept;
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  asio::awaitable<void> answer(asio::ip::tcp::socket socket);

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  HttpHandler handler_;
  std::uint32_t open_ = 0;  // connections being answered
};

}  // namespace testio::metrics
