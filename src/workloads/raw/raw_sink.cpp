#include "workloads/raw/raw_sink.hpp"

#include <chrono>

#include <asio/error.hpp>

namespace testio::workloads {

RawSink::RawSink(asio::ip::tcp::socket socket, std::string peer, std::size_t buffer_size, util::HashKind hash,
                 Done done)
    : socket_(std::move(socket)),
      buffer_(std::make_unique_for_overwrite<char[]>(buffer_size)),
      buffer_size_(buffer_size),
      digest_(hash),
      done_(std::move(done)) {
  transfer_.role = "received";
  transfer_.peer = std::move(peer);
  transfer_.hash = std::string(util::to_string(hash));
}

void RawSink::start() { read_next(); }

void RawSink::read_next() {
  socket_.async_read_some(asio::buffer(buffer_.get(), buffer_size_),
                          [self = shared_from_this()](const asio::error_code& error, std::size_t received) {
                            if (!error) {
                              self->digest_.update(self->buffer_.get(), received);
                              self->transfer_.bytes += received;
                              ++self->transfer_.calls;
                              self->read_next();
                              return;
                            }
                            if (error != asio::error::eof) self->transfer_.error = error.message();
                            self->transfer_.elapsed_s =
                                std::chrono::duration<double>(engines::Clock::now() - self->accepted_).count();
                            self->transfer_.digest = self->digest_.finish();
                            asio::error_code ignored;
                            self->socket_.close(ignored);
                            self->done_(std::move(self->transfer_));
                          });
}

}  // namespace testio::workloads
