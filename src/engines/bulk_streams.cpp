#include "engines/bulk_streams.hpp"

#include <stdexcept>

#include <asio/ip/tcp.hpp>

#include "engines/asio_bulk.hpp"
#include "engines/threads_bulk.hpp"
#include "engines/uring_bulk.hpp"

namespace testio::engines {
namespace {

SenderParts sender_parts(stats::StreamCounters& counters, SenderSpec& spec, StreamDone done) {
  SendCursor cursor(spec.payload_size, spec.chunk, spec.quota);
  return SenderParts{&counters,   spec.payload, cursor,     std::move(done), std::move(spec.digest),
                     spec.pacing, spec.source,
                     RateFollowingMark(RateFollowingMark::Kind::send_backlog, 0, spec.follow_rate),
                     spec.await_peer_close};
}

// Every receiver of a worker reads into the worker's buffer unless it keeps its own (ReceiverParts).
ReceiverParts receiver_parts(Worker& worker, stats::StreamCounters& counters, ReceiverSpec& spec, StreamDone done) {
  return ReceiverParts(counters, spec.mode, spec.buffer, std::move(done), std::move(spec.digest), spec.follow_rate,
                       worker.scratch(spec.buffer));
}

}  // namespace

std::unique_ptr<StreamTask> make_sender(Worker& worker, spec::Engine engine, asio::ip::tcp::socket socket,
                                        stats::StreamCounters& counters, SenderSpec spec, StreamDone done) {
  if (spec.await_peer_close && engine != spec::Engine::asio)
    throw std::logic_error("only the asio engine's senders wait for their peer to close");
  SenderParts parts = sender_parts(counters, spec, std::move(done));
  switch (engine) {
    case spec::Engine::threads:
      return make_blocking_sender(std::move(socket), std::move(parts), worker.signals());
    case spec::Engine::uring:
      return make_uring_sender(std::move(socket), std::move(parts), worker);
    case spec::Engine::asio:
      break;
  }
  return make_asio_sender(std::move(socket), std::move(parts));
}

std::unique_ptr<StreamTask> make_receiver(Worker& worker, spec::Engine engine, asio::ip::tcp::socket socket,
                                          stats::StreamCounters& counters, ReceiverSpec spec, StreamDone done) {
  ReceiverParts parts = receiver_parts(worker, counters, spec, std::move(done));
  switch (engine) {
    case spec::Engine::threads:
      return make_blocking_receiver(std::move(socket), std::move(parts), worker.signals());
    case spec::Engine::uring:
      return make_uring_receiver(std::move(socket), std::move(parts), worker);
    case spec::Engine::asio:
      break;
  }
  return make_asio_receiver(std::move(socket), std::move(parts));
}

std::string unusable_reason(spec::Engine engine, bool zerocopy_sends) {
  if (engine != spec::Engine::uring) return {};
  UringRefusal refusal = uring_refusal(zerocopy_sends);
  return refusal.cause.empty() ? std::string() : refusal.cause + ": " + refusal.instead;
}

std::string settle_default_engine(spec::TestSpec& spec) {
  std::string reason;
  auto settle = [&](spec::TestSpec& part) {
    if (!part.engine_fallback || part.engine != spec::Engine::uring) return;
    // Zero-copy sends on either side: a side that only receives falls back too, which costs nothing.
    UringRefusal refusal = uring_refusal(part.send_mode == spec::SendMode::zerocopy);
    if (refusal.cause.empty()) return;
    part.engine = spec::Engine::asio;
    part.engine_fallback = false;
    reason = std::move(refusal.cause);
  };
  settle(spec);
  for (spec::TestSpec& part : spec.with) settle(part);
  return reason;
}

}  // namespace testio::engines
