#include "workloads/tcp_stream.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <asio/error.hpp>
#include <asio/post.hpp>

#include "workloads/zerocopy_completions.hpp"

namespace testio::workloads {

std::size_t SendPacing::chunk(std::size_t buffer) const noexcept {
  if (rate_bps <= 0) return buffer;
  // 5 ms of data per call, between 4 KiB and the buffer.
  const auto five_ms = static_cast<std::size_t>(rate_bps / 8 * 0.005);
  return std::clamp<std::size_t>(five_ms, std::min<std::size_t>(4096, buffer), buffer);
}

Clock::time_point SendPacing::due(Clock::time_point start, std::uint64_t sent) const noexcept {
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(static_cast<double>(sent) * 8 / rate_bps));
}

TcpSender::TcpSender(asio::ip::tcp::socket socket, stats::StreamCounters& counters,
                     const char* payload, std::size_t payload_size, std::size_t chunk, std::uint64_t quota,
                     StreamDone on_done, std::optional<StreamDigest> digest, SendPacing pacing,
                     SendSource source)
    : socket_(std::move(socket)),
      deadline_timer_(socket_.get_executor()),
      pacing_timer_(socket_.get_executor()),
      source_(source),
      pacing_(pacing),
      counters_(counters),
      payload_(payload),
      cursor_(payload_size, chunk, quota),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)) {}

void TcpSender::begin(const TestClock& clock) {
  clock_ = clock;
  if (source_.mode == config::SendMode::sendfile) {
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
  const std::size_t size = cursor_.next_size();
  auto handler = [this](const asio::error_code& error, std::size_t written) { on_written(error, written); };
  switch (source_.mode) {
    case config::SendMode::send:
      socket_.async_write_some(asio::buffer(payload_ + cursor_.offset(), size), handler);
      break;
    case config::SendMode::zerocopy:
      // The payload is never written to while a send may still read it, so no send has to wait
      // for its completion; they are counted as they arrive.
      socket_.async_send(asio::buffer(payload_ + cursor_.offset(), size), MSG_ZEROCOPY, handler);
      break;
    case config::SendMode::sendfile:
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
    off_t position = static_cast<off_t>(source_.file_offset + cursor_.offset());
    ssize_t sent = ::sendfile(socket_.native_handle(), source_.file_fd, &position, size);
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
  if (source_.mode == config::SendMode::zerocopy) {
    drain_zerocopy_completions(socket_.native_handle(), counters_);
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
  counters_.record(written, clock_.since_start(now));
  if (digest_) digest_->digest.update(payload_ + cursor_.offset(), written);
  cursor_.advance(written);
  if (cursor_.quota_sent() || now >= clock_.deadline || window_closed_) {
    finish(false);
    return;
  }
  if (pacing_.rate_bps > 0) {
    const Clock::time_point due = pacing_.due(clock_.start, cursor_.sent());
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
  asio::error_code ignored;
  deadline_timer_.cancel();
  pacing_timer_.cancel();
  // Half-close: the receiver reads to EOF, so both ends count exactly the same bytes.
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  if (digest_) *digest_->out = digest_->digest.finish();
  report_finished(counters_, failed, on_done_);
}

void TcpSender::close() noexcept {
  finished_ = true;
  deadline_timer_.cancel();
  pacing_timer_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

TcpReceiver::TcpReceiver(asio::ip::tcp::socket socket, stats::StreamCounters& counters,
                         config::RecvMode mode, std::size_t buffer_size, StreamDone on_done,
                         std::optional<StreamDigest> digest)
    : socket_(std::move(socket)),
      counters_(counters),
      mode_(mode),
      buffer_size_(buffer_size),
      on_done_(std::move(on_done)),
      digest_(std::move(digest)) {
  if (mode_ == config::RecvMode::splice || mode_ == config::RecvMode::mmap) {
    counts_copies_ = true;
    zero_copy_ = make_zero_copy_reader(mode_, socket_.native_handle(), buffer_size_);
    if (!zero_copy_) mode_ = config::RecvMode::recv_into;
  }
  // for_overwrite: no zero-fill, so pages are only touched by the kernel's copy (and never by
  // trunc, which copies nothing).
  if (mode_ == config::RecvMode::recv_into || mode_ == config::RecvMode::trunc)
    buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
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
  auto handler = [this](const asio::error_code& error, std::size_t received) {
    on_read(error, received);
  };
  switch (mode_) {
    case config::RecvMode::recv:
      buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
      socket_.async_read_some(asio::buffer(buffer_.get(), buffer_size_), handler);
      break;
    case config::RecvMode::recv_into:
      socket_.async_read_some(asio::buffer(buffer_.get(), buffer_size_), handler);
      break;
    case config::RecvMode::splice:
    case config::RecvMode::mmap:
      // The reader drains until EAGAIN before each wait, so the next readiness edge is a new one.
      socket_.async_wait(asio::socket_base::wait_read, [this](const asio::error_code& error) { on_readable(error); });
      break;
    case config::RecvMode::trunc:
      // MSG_TRUNC on a TCP socket makes tcp_recvmsg() drop the bytes without copying them out.
      socket_.async_receive(asio::buffer(buffer_.get(), buffer_size_), MSG_TRUNC, handler);
      break;
  }
}

void TcpReceiver::on_read(const asio::error_code& error, std::size_t received) {
  // (trunc copies nothing out, so a hashed test never uses it: the request parser refuses that.)
  if (digest_ && !error && mode_ != config::RecvMode::trunc) digest_->digest.update(buffer_.get(), received);
  if (mode_ == config::RecvMode::recv) buffer_.reset();
  if (finished_) return;
  if (error) {
    finish(error != asio::error::eof);
    return;
  }
  counters_.record(received, clock_.since_start(Clock::now()));
  if (counts_copies_) stats::add_relaxed(counters_.recv_copied_bytes, received);
  read_next();
}

void TcpReceiver::on_readable(const asio::error_code& error) {
  if (finished_) return;
  if (error) {
    finish(true);
    return;
  }
  ReceiveSink sink{counters_, clock_, digest_ ? &digest_->digest : nullptr};
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
  warn_fallback(mode_, "the kernel refused its first call");
  zero_copy_.reset();
  mode_ = config::RecvMode::recv_into;
  buffer_ = std::make_unique_for_overwrite<char[]>(buffer_size_);
  read_next();
}

void TcpReceiver::finish(bool failed) {
  finished_ = true;
  // The socket stays open until the stream is destroyed: the sampler may still read TCP_INFO
  // by its descriptor, which must not be reused by another socket meanwhile.
  if (digest_) *digest_->out = digest_->digest.finish();
  report_finished(counters_, failed, on_done_);
}

void TcpReceiver::close() noexcept {
  finished_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
}

}  // namespace testio::workloads
