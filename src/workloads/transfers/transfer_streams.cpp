#include "workloads/transfers/transfer_streams.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <asio/connect.hpp>
#include <asio/error.hpp>
#include <asio/write.hpp>

#include "net/socket_options.hpp"
#include "net/tcp_info.hpp"

namespace testio::workloads {

namespace {

std::uint64_t elapsed_ns(engines::Clock::time_point since) noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(engines::Clock::now() - since).count());
}

}  // namespace

std::string transfer_file_name(const std::string& dir, std::uint64_t count, std::uint64_t index) {
  const int width = static_cast<int>(std::to_string(count).size());
  char name[48];
  std::snprintf(name, sizeof name, "/transfer-%0*llu", width, static_cast<unsigned long long>(index + 1));
  return dir + name;
}

std::string TransferPlan::file_for(std::uint64_t index) const { return transfer_file_name(save_dir, count, index); }

TransferClient::TransferClient(asio::io_context& context, stats::StreamCounters& counters, TransferPlan& plan,
                               const Preamble& preamble, TransferTally& tally, engines::StreamDone on_done,
                               char* scratch)
    : socket_(context),
      counters_(counters),
      plan_(plan),
      preamble_(preamble),
      tally_(tally),
      own_buffer_(scratch && plan.save_dir.empty() ? 0 : plan.read_size),
      buffer_(own_buffer_ ? own_buffer_.data() : scratch),
      on_done_(std::move(on_done)) {}

TransferClient::~TransferClient() { remove_partial_file(); }

void TransferClient::begin(const engines::TestClock& clock) {
  clock_ = clock;
  take_next();
}

void TransferClient::take_next() {
  if (finished_) return;
  if (window_closed_) {
    finish_slot(false);
    return;
  }
  current_ = plan_.next.fetch_add(1, std::memory_order_relaxed);
  if (current_ >= plan_.count) {
    finish_slot(false);
    return;
  }
  received_ = 0;
  started_ = engines::Clock::now();
  if (plan_.reuse && socket_.is_open())
    request_next();
  else
    connect();
}

void TransferClient::connect() {
  asio::error_code error;
  socket_.open(plan_.server.protocol(), error);
  if (!error && plan_.source) socket_.bind(asio::ip::tcp::endpoint(*plan_.source, 0), error);
  if (error) {
    fail("cannot open a connection: " + error.message());
    return;
  }
  try {
    if (!plan_.device.empty()) net::bind_to_device(socket_.native_handle(), plan_.device);
    // Before connect: the SYN carries the window scale the buffer size needs.
    if (plan_.window) net::set_socket_buffers(socket_.native_handle(), plan_.window);
  } catch (const std::exception& refused) {
    fail(refused.what());
    return;
  }
  socket_.async_connect(plan_.server, [this](const asio::error_code& connect_error) {
    if (finished_) return;
    if (connect_error) {
      fail("connecting failed: " + connect_error.message());
      return;
    }
    tally_.connect_seen_ns.record(elapsed_ns(started_));
    const net::TcpInfo handshake = net::read_tcp_info(socket_.native_handle());
    if (handshake.valid) tally_.connect_ns.record(std::uint64_t{handshake.rtt_us} * 1000);
    asio::error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);  // the request byte must not wait (--reuse)
    asio::async_write(socket_, asio::buffer(preamble_), [this](const asio::error_code& write_error, std::size_t) {
      if (finished_) return;
      if (write_error) {
        fail("sending the preamble failed: " + write_error.message());
        return;
      }
      if (open_file()) read_next();
    });
  });
}

void TransferClient::request_next() {
  // On a kept connection the client asks for the next transfer with one byte.
  asio::async_write(socket_, asio::buffer(&request_byte_, 1), [this](const asio::error_code& error, std::size_t) {
    if (finished_) return;
    if (error) {
      fail("asking for the next transfer failed: " + error.message());
      return;
    }
    if (open_file()) read_next();
  });
}

bool TransferClient::open_file() {
  if (plan_.save_dir.empty()) return true;
  file_path_ = plan_.file_for(current_);
  const int exclusive = plan_.force ? O_TRUNC : O_EXCL;
  file_ = ::open(file_path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | exclusive, 0644);
  if (file_ < 0) {
    int open_errno = errno;
    fail(open_errno == EEXIST ? file_path_ + " exists; --force overwrites it"
                              : "cannot create " + file_path_ + ": " + std::strerror(open_errno));
    return false;
  }
  return true;
}

void TransferClient::read_next() {
  // Never read past this transfer on a kept connection; on a fresh one, after `size` bytes the
  // next read must see the server's EOF.
  std::size_t want = plan_.read_size;
  if (plan_.reuse) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, plan_.size - received_));
  socket_.async_read_some(asio::buffer(buffer_, want),
                          [this](const asio::error_code& error, std::size_t received) { on_read(error, received); });
}

void TransferClient::on_read(const asio::error_code& error, std::size_t received) {
  if (finished_) return;
  if (error == asio::error::eof && !plan_.reuse && received_ == plan_.size) {
    transfer_done();
    return;
  }
  if (error) {
    fail(error == asio::error::eof ? "the server closed after " + std::to_string(received_) + " of " +
                                         std::to_string(plan_.size) + " bytes"
                                   : error.message());
    return;
  }
  if (received_ + received > plan_.size) {
    fail("the server sent more than " + std::to_string(plan_.size) + " bytes");
    return;
  }
  counters_.record(received, clock_.since_start(engines::Clock::now()));
  received_ += received;
  for (std::size_t written = 0; file_ >= 0 && written < received;) {
    ssize_t n = ::write(file_, buffer_ + written, received - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fail("writing " + file_path_ + " failed: " + std::strerror(errno));
      return;
    }
    written += static_cast<std::size_t>(n);
  }
  if (plan_.reuse && received_ == plan_.size)
    transfer_done();
  else
    read_next();
}

void TransferClient::transfer_done() {
  if (file_ >= 0) {
    int result = ::close(file_);
    file_ = -1;
    if (result != 0) {  // NFS and friends report write errors at close
      fail("writing " + file_path_ + " failed: " + std::strerror(errno));
      return;
    }
  }
  tally_.transfer_ns.record(elapsed_ns(started_));
  ++tally_.completed;
  if (!plan_.reuse) {
    asio::error_code ignored;
    socket_.close(ignored);
  }
  take_next();
}

void TransferClient::fail(const std::string& reason) {
  if (window_closed_) {  // abandoned on request, not a failure
    remove_partial_file();
    finish_slot(false);
    return;
  }
  ++tally_.failed;
  if (tally_.first_error.empty()) tally_.first_error = "transfer " + std::to_string(current_ + 1) + ": " + reason;
  finish_slot(true);
}

void TransferClient::remove_partial_file() noexcept {
  if (file_ < 0) return;
  ::close(file_);
  file_ = -1;
  ::unlink(file_path_.c_str());
  ++tally_.partial_files_removed;
}

void TransferClient::finish_slot(bool failed) {
  if (finished_) return;
  finished_ = true;
  remove_partial_file();
  if (plan_.reuse && socket_.is_open() && !failed && !window_closed_) {
    // Half-close and wait for the server's close: then it has counted everything it sent.
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    socket_.async_read_some(asio::buffer(buffer_, 1), [this](const asio::error_code& error, std::size_t) {
      asio::error_code ignored_close;
      socket_.close(ignored_close);
      engines::report_finished(counters_, error != asio::error::eof, on_done_);
    });
    return;
  }
  asio::error_code ignored;
  socket_.close(ignored);
  engines::report_finished(counters_, failed, on_done_);
}

void TransferClient::end_window() noexcept {
  if (finished_) return;
  window_closed_ = true;
  asio::error_code ignored;
  socket_.cancel(ignored);  // the transfer under way ends with operation_aborted
}

void TransferClient::close() noexcept {
  finished_ = true;
  remove_partial_file();
  asio::error_code ignored;
  socket_.close(ignored);
}

TransferSource::TransferSource(stats::StreamCounters& counters, const char* payload, std::size_t payload_size,
                               std::size_t chunk, std::uint64_t size, bool reuse, engines::StreamDone on_done)
    : counters_(counters),
      payload_(payload),
      payload_size_(payload_size),
      chunk_(chunk),
      size_(size),
      reuse_(reuse),
      on_done_(std::move(on_done)) {}

void TransferSource::begin(const engines::TestClock& clock) { clock_ = clock; }

void TransferSource::serve(asio::ip::tcp::socket socket) {
  if (finished_ || socket_) {
    asio::error_code ignored;
    socket.close(ignored);
    return;
  }
  socket_.emplace(std::move(socket));
  asio::error_code ignored;
  socket_->set_option(asio::ip::tcp::no_delay(true), ignored);  // the tail of a transfer must not wait for an ACK
  sent_ = 0;
  write_next();
}

void TransferSource::write_next() {
  const std::size_t offset = static_cast<std::size_t>(sent_ % payload_size_);
  const std::size_t size = static_cast<std::size_t>(
      std::min<std::uint64_t>({chunk_, payload_size_ - offset, size_ - sent_}));
  socket_->async_write_some(asio::buffer(payload_ + offset, size), [this](const asio::error_code& error,
                                                                          std::size_t written) {
    if (finished_) return;
    if (error) {
      failed_ = true;
      drop_connection();
      return;
    }
    counters_.record(written, clock_.since_start(engines::Clock::now()));
    sent_ += written;
    if (sent_ < size_)
      write_next();
    else if (reuse_)
      await_request();
    else
      drop_connection();  // the close is the transfer's end: its FIN follows the last byte
  });
}

void TransferSource::await_request() {
  socket_->async_read_some(asio::buffer(&request_, 1), [this](const asio::error_code& error, std::size_t) {
    if (finished_) return;
    if (error) {  // EOF: the client is done with this connection
      if (error != asio::error::eof) failed_ = true;
      drop_connection();
      return;
    }
    sent_ = 0;
    write_next();
  });
}

void TransferSource::drop_connection() noexcept {
  asio::error_code ignored;
  if (socket_) socket_->close(ignored);
  socket_.reset();
}

void TransferSource::end_window() noexcept {
  if (finished_) return;
  finished_ = true;
  drop_connection();
  engines::report_finished(counters_, failed_, on_done_);
}

void TransferSource::close() noexcept {
  finished_ = true;
  drop_connection();
}

}  // namespace testio::workloads
