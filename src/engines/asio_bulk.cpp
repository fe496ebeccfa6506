#include "engines/asio_bulk.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <asio/error.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/post.hpp>

#include "engines/zerocopy_completions.hpp"

namespace testio::engines {

class TcpSender final : public StreamTask {
 public:
  // `parts` names the payload (shared read-only by the worker's senders; it outlives them), the
  // cursor over it, the counters, digest, pacing and source, as for every engine's sender.
  TcpSender(asio::ip::tcp::socket socket, SenderParts parts);

  void begin(const TestClock& clock) override;
  void end_window() noexcept override;
  void close() noexcept override;

 private:
  void write_next();
  void send_file(std::size_t size);
  void on_written(const asio::error_code& error, std::size_t written);
  void finish(bool failed);
  void await_peer_close();
  void read_until_peer_closes();

  asio::ip::tcp::socket socket_;
  asio::steady_timer deadline_timer_;
  asio::steady_timer pacing_timer_;  // also bounds the wait for the peer to close
  SenderParts parts_;
  bool window_closed_ = false;
  bool finished_ = false;  // sending is over (the peer's close may still be awaited)
  bool closed_ = false;
  std::unique_ptr<char[]> drain_;  // what the peer sends before it closes; only while awaiting it
  TestClock clock_;
};

class TcpReceiver final : public StreamTask {
 public:
  // recv, recv_into and trunc read after each readiness; splice and mmap drain the socket with
  // their zero-copy reader, or fall back to recv_into where the kernel cannot do them.
  TcpReceiver(asio::ip::tcp::socket socket, ReceiverParts parts);

  void begin(const TestClock& clock) override;
  void close() noexcept override;

 private:
  void read_next();
  void on_read(const asio::error_code& error, std::size_t received);
  void on_readable(const asio::error_code& error);
  void fall_back_to_copying();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  // splice and mmap: drains the socket after each readiness wait.
  std::unique_ptr<ZeroCopyReader> zero_copy_;
  bool finished_ = false;
  TestClock clock_;
};

TcpSender::TcpSender(asio::ip::tcp::socket socket, SenderParts parts)
    : socket_(std::move(socket)),
      deadline_timer_(socket_.get_executor()),
      pacing_timer_(socket_.get_executor()),
      parts_(std::move(parts)) {}

void TcpSender::begin(const TestClock& clock) {
  clock_ = clock;
  if (parts_.source.mode == spec::SendMode::sendfile) {
    asio::error_code ignored;
    socket_.native_non_blocking(true, ignored);  // sendfile is called directly, after a readiness wait
  }
  if (clock.deadline != Clock::time_point::max()) {
    deadline_timer_.expires_at(clock.deadline);
    // A write waiting for send-buffer space would otherwise overrun the window by as long as the
    // peer takes to drain it (seconds on a slow link). Cancelling a pending async_write_some is
    // exact: the data of a cancelled operation was never handed to the kernel.
    deadline_timer_.async_wait([this](const asio::error_code& error) {
      if (!error) end_window();
    });
  }
  write_next();
}

void TcpSender::end_window() noexcept {
  if (finished_) return;
  window_closed_ = true;
  asio::error_code ignored;
  socket_.cancel(ignored);
  pacing_timer_.cancel();  // a sender waiting for its pace ends as one waiting for the socket does
}

void TcpSender::write_next() {
  const std::size_t size = parts_.cursor.next_size();
  auto handler = [this](const asio::error_code& error, std::size_t written) { on_written(error, written); };
  switch (parts_.source.mode) {
    case spec::SendMode::send:
      socket_.async_write_some(asio::buffer(parts_.next_data(), size), handler);
      break;
    case spec::SendMode::zerocopy:
      // The payload is never written to while a send may still read it, so no send has to wait
      // for its completion; they are counted as they arrive.
      socket_.async_send(asio::buffer(parts_.next_data(), size), MSG_ZEROCOPY, handler);
      break;
    case spec::SendMode::sendfile:
      send_file(size);
      break;
  }
}

void TcpSender::send_file(std::size_t size) {
  // Asio has no sendfile: wait until the socket takes data, then hand the kernel the file range.
  socket_.async_wait(asio::socket_base::wait_write, [this, size](const asio::error_code& error) {
    if (error) {
      on_written(error, 0);
      return;
    }
    off_t position = static_cast<off_t>(parts_.source.file_offset + parts_.cursor.offset());
    ssize_t sent = ::sendfile(socket_.native_handle(), parts_.source.file_fd, &position, size);
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      send_file(size);
      return;
    }
    if (sent <= 0) {
      on_written(sent < 0 ? asio::error_code(errno, asio::system_category()) : asio::error::eof, 0);
      return;
    }
    on_written({}, static_cast<std::size_t>(sent));
  });
}

void TcpSender::on_written(const asio::error_code& error, std::size_t written) {
  if (finished_) return;
  if (parts_.source.mode == spec::SendMode::zerocopy) {
    drain_zerocopy_completions(socket_.native_handle(), *parts_.counters);
    // ENOBUFS: too many notifications unread (optmem_max); they are read now, so try again.
    if (error == asio::error::no_buffer_space && !window_closed_) {
      write_next();
      return;
    }
  }
  if (error) {
    finish(!(error == asio::error::operation_aborted && window_closed_));
    return;
  }
  Clock::time_point now = Clock::now();
  parts_.took(socket_.native_handle(), written, clock_.since_start(now));
  if (parts_.cursor.quota_sent() || now >= clock_.deadline || window_closed_) {
    finish(false);
    return;
  }
  if (parts_.pacing.rate_bps > 0) {
    const Clock::time_point due = parts_.pacing.due(clock_.start, parts_.cursor.sent());
    if (due > now) {
      pacing_timer_.expires_at(due);
      pacing_timer_.async_wait([this](const asio::error_code& wait_error) {
        if (finished_) return;
        if (wait_error || window_closed_) {
          finish(false);
          return;
        }
        write_next();
      });
      return;
    }
  }
  write_next();
}

void TcpSender::finish(bool failed) {
  finished_ = true;
  deadline_timer_.cancel();
  pacing_timer_.cancel();
  if (parts_.await_peer_close && !failed) {
    await_peer_close();
    return;
  }
  parts_.finish(socket_.native_handle(), failed);
}

namespace {
constexpr std::size_t kDrainSize = 4096;
constexpr auto kPeerCloseLimit = std::chrono::seconds(30);
}  // namespace

// A plain receiver has read everything only once it closes (nc, a script): the stream ends then,
// or fails when the peer has not closed within the limit.
void TcpSender::await_peer_close() {
  SenderParts::half_close(socket_.native_handle());
  drain_ = std::make_unique_for_overwrite<char[]>(kDrainSize);
  pacing_timer_.expires_after(kPeerCloseLimit);
  pacing_timer_.async_wait([this](const asio::error_code& error) {
    asio::error_code ignored;
    if (!error) socket_.cancel(ignored);
  });
  read_until_peer_closes();
}

void TcpSender::read_until_peer_closes() {
  socket_.async_read_some(asio::buffer(drain_.get(), kDrainSize), [this](const asio::error_code& error, std::size_t) {
    if (closed_) return;
    if (!error) {
      read_until_peer_closes();
      return;
    }
    pacing_timer_.cancel();
    parts_.report(error != asio::error::eof);
  });
}

void TcpSender::close() noexcept {
  closed_ = true;
  finished_ = true;
  deadline_timer_.cancel();
  pacing_timer_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

TcpReceiver::TcpReceiver(asio::ip::tcp::socket socket, ReceiverParts parts)
    : socket_(std::move(socket)), parts_(std::move(parts)) {
  const spec::RecvMode mode = parts_.mode();
  if (mode == spec::RecvMode::splice || mode == spec::RecvMode::mmap) {
    zero_copy_ = make_zero_copy_reader(mode, socket_.native_handle(), parts_.buffer_size(), parts_.scratch());
    if (!zero_copy_) parts_.read_into_buffer_instead();
  }
}

void TcpReceiver::begin(const TestClock& clock) {
  clock_ = clock;
  if (zero_copy_) {
    asio::error_code ignored;
    socket_.native_non_blocking(true, ignored);  // the readers call the kernel directly, after a readiness wait
  }
  read_next();
}

void TcpReceiver::read_next() {
  if (zero_copy_) {
    // The reader drains until EAGAIN before each wait, so the next readiness edge is a new one.
    socket_.async_wait(asio::socket_base::wait_read, [this](const asio::error_code& error) { on_readable(error); });
    return;
  }
  // recv: a fresh buffer for this call; trunc: MSG_TRUNC, so tcp_recvmsg() drops the bytes.
  socket_.async_receive(asio::buffer(parts_.next_buffer(), parts_.read_size()), parts_.flags(),
                        [this](const asio::error_code& error, std::size_t received) { on_read(error, received); });
}

void TcpReceiver::on_read(const asio::error_code& error, std::size_t received) {
  if (finished_) return;
  if (error) {
    finish(error != asio::error::eof);
    return;
  }
  parts_.took(socket_.native_handle(), received, clock_.since_start(Clock::now()));
  read_next();
}

void TcpReceiver::on_readable(const asio::error_code& error) {
  if (finished_) return;
  if (error) {
    finish(true);
    return;
  }
  ReceiveSink sink = parts_.sink(clock_);
  switch (zero_copy_->drain(socket_.native_handle(), sink)) {
    case DrainEnd::would_block:
      read_next();
      return;
    case DrainEnd::more:
      asio::post(socket_.get_executor(), [this] { on_readable({}); });
      return;
    case DrainEnd::eof:
      finish(false);
      return;
    case DrainEnd::failed:
      finish(true);
      return;
    case DrainEnd::unsupported:
      fall_back_to_copying();
      return;
  }
}

void TcpReceiver::fall_back_to_copying() {
  warn_fallback(parts_.mode(), "the kernel refused its first call");
  zero_copy_.reset();
  parts_.read_into_buffer_instead();
  read_next();
}

void TcpReceiver::finish(bool failed) {
  finished_ = true;
  // The socket stays open until the stream is destroyed: the sampler may still read TCP_INFO
  // by its descriptor, which must not be reused by another socket meanwhile.
  parts_.finish(failed);
}

void TcpReceiver::close() noexcept {
  finished_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
}

std::unique_ptr<StreamTask> make_asio_sender(asio::ip::tcp::socket socket, SenderParts parts) {
  return std::make_unique<TcpSender>(std::move(socket), std::move(parts));
}

std::unique_ptr<StreamTask> make_asio_receiver(asio::ip::tcp::socket socket, ReceiverParts parts) {
  return std::make_unique<TcpReceiver>(std::move(socket), std::move(parts));
}

}  // namespace testio::engines
