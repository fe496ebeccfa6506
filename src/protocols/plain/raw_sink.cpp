#include "protocols/plain/raw_sink.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <asio/error.hpp>

namespace testio::plain {

RawSink::RawSink(asio::ip::tcp::socket socket, std::string peer, char* buffer, std::size_t buffer_size,
                 util::HashKind hash, Progress progress, Done done)
    : socket_(std::move(socket)),
      buffer_(buffer),
      buffer_size_(buffer_size),
      digest_(hash),
      progress_(std::move(progress)),
      done_(std::move(done)) {
  transfer_.role = "received";
  transfer_.peer = std::move(peer);
  transfer_.hash = std::string(util::to_string(hash));
}

void RawSink::start() {
  asio::error_code ignored;
  socket_.native_non_blocking(true, ignored);
  wait_readable();
}

// The read happens in the handler, not in the reactor: the worker's buffer is shared by its
// sinks, so each read must be hashed before any other sink's read can land in it.
void RawSink::wait_readable() {
  socket_.async_wait(asio::socket_base::wait_read, [self = shared_from_this()](const asio::error_code& error) {
    if (error) {
      self->finish(error.message());
      return;
    }
    self->read_ready();
  });
}

// A few reads per wakeup: enough to empty a busy socket in one turn, few enough to stay fair to
// the worker's other sinks.
void RawSink::read_ready() {
  constexpr int kReadsPerWakeup = 8;
  for (int i = 0; i < kReadsPerWakeup; ++i) {
    const ssize_t received = ::recv(socket_.native_handle(), buffer_, buffer_size_, 0);
    if (received == 0) {
      finish({});
      return;
    }
    if (received < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      finish(std::strerror(errno));
      return;
    }
    const auto bytes = static_cast<std::size_t>(received);
    digest_.update(buffer_, bytes);
    transfer_.bytes += bytes;
    ++transfer_.calls;
    progress_->store(transfer_.bytes, std::memory_order_relaxed);
    if (bytes < buffer_size_) break;  // the socket is empty for now
  }
  wait_readable();
}

void RawSink::finish(std::string error) {
  transfer_.error = std::move(error);
  transfer_.elapsed_s = std::chrono::duration<double>(engines::Clock::now() - accepted_).count();
  transfer_.digest = digest_.finish();
  asio::error_code ignored;
  socket_.close(ignored);
  done_(std::move(transfer_));
}

}  // namespace testio::plain
