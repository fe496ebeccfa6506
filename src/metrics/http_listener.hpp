// A small HTTP/1.1 endpoint for Prometheus to scrape: one request per connection (answered with
// Connection: close), GET or HEAD, a bounded head read within a deadline, at most a few dozen
// connections at once. What it serves is the handler's. Owner: its io_context's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/asio_fwd.hpp"
#include "metrics/exposition.hpp"
#include "metrics/http_request.hpp"

namespace testio::metrics {

struct HttpResponse {
  int status = 200;
  std::string content_type = kContentType;
  std::string body;
};
HttpResponse plain_response(int status, std::string body);

using HttpHandler = std::function<net::Awaitable<HttpResponse>(const HttpRequest&)>;

class HttpListener {
 public:
  // Listens at once; throws std::runtime_error ("cannot listen for WHAT on ADDRESS: reason").
  HttpListener(asio::io_context& io, const std::string& address, HttpHandler handler, const std::string& what);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  net::Awaitable<void> serve();
  void stop() noexcept;
  std::uint16_t port() const;

 private:
  net::Awaitable<void> answer(net::TcpSocket socket);

  asio::io_context& io_;
  std::unique_ptr<net::TcpAcceptor> acceptor_;  // a pointer keeps Asio out of this header
  HttpHandler handler_;
  std::uint32_t open_ = 0;  // connections being answered
};

}  // namespace testio::metrics
