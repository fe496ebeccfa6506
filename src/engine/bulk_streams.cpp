#include "engine/bulk_streams.hpp"

#include "workloads/blocking_stream.hpp"
#include "workloads/uring_streams.hpp"

namespace testio::engine {
namespace {

// The worker's io_uring loop, made with its first uring stream (only this engine sets a loop).
workloads::UringLoop& uring_loop_of(Worker& worker) {
  if (!worker.loop()) worker.set_loop(std::make_unique<workloads::UringLoop>());
  return static_cast<workloads::UringLoop&>(*worker.loop());
}

workloads::SenderParts sender_parts(stats::StreamCounters& counters, SenderSpec& spec, workloads::StreamDone done) {
  workloads::SendCursor cursor(spec.payload_size, spec.chunk, spec.quota);
  return workloads::SenderParts{&counters, spec.payload, cursor, std::move(done), std::move(spec.digest), spec.pacing,
                                spec.source,
                                workloads::RateFollowingMark(workloads::RateFollowingMark::Kind::send_backlog, 0,
                                                             spec.rate_lowat)};
}

workloads::ReceiverParts receiver_parts(stats::StreamCounters& counters, ReceiverSpec& spec,
                                        workloads::StreamDone done) {
  return workloads::ReceiverParts(counters, spec.mode, spec.buffer, std::move(done), std::move(spec.digest),
                                  spec.rate_lowat);
}

}  // namespace

void add_sender(Worker& worker, config::Engine engine, asio::ip::tcp::socket socket,
                stats::StreamCounters& counters, SenderSpec spec, workloads::StreamDone done) {
  switch (engine) {
    case config::Engine::asio:
      worker.add_stream(
          std::make_unique<workloads::TcpSender>(std::move(socket), sender_parts(counters, spec, std::move(done))));
      return;
    case config::Engine::threads:
      worker.add_stream(std::make_unique<workloads::BlockingSender>(
          std::move(socket), sender_parts(counters, spec, std::move(done)), worker.signals()));
      return;
    case config::Engine::uring: {
      workloads::UringLoop& loop = uring_loop_of(worker);
      worker.add_stream(std::make_unique<workloads::UringSender>(
          std::move(socket), sender_parts(counters, spec, std::move(done)), loop));
      return;
    }
  }
}

void add_receiver(Worker& worker, config::Engine engine, asio::ip::tcp::socket socket,
                  stats::StreamCounters& counters, ReceiverSpec spec, workloads::StreamDone done) {
  switch (engine) {
    case config::Engine::asio:
      worker.add_stream(std::make_unique<workloads::TcpReceiver>(std::move(socket),
                                                                 receiver_parts(counters, spec, std::move(done))));
      return;
    case config::Engine::threads:
      worker.add_stream(std::make_unique<workloads::BlockingReceiver>(
          std::move(socket), receiver_parts(counters, spec, std::move(done)), worker.signals()));
      return;
    case config::Engine::uring: {
      workloads::UringLoop& loop = uring_loop_of(worker);
      worker.add_stream(std::make_unique<workloads::UringReceiver>(
          std::move(socket), receiver_parts(counters, spec, std::move(done)), loop));
      return;
    }
  }
}

}  // namespace testio::engine
