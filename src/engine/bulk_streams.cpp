#include "engine/bulk_streams.hpp"

#include <stdexcept>

#include "workloads/blocking_stream.hpp"

namespace testio::engine {
void add_sender(Worker& worker, config::Engine engine, asio::ip::tcp::socket socket,
                stats::StreamCounters& counters, SenderSpec spec, workloads::StreamDone done) {
  switch (engine) {
    case config::Engine::asio:
      worker.add_stream(std::make_unique<workloads::TcpSender>(std::move(socket), counters, spec.payload,
                                                               spec.payload_size, spec.chunk, spec.quota,
                                                               std::move(done), std::move(spec.digest),
                                                               spec.pacing, spec.source));
      return;
    case config::Engine::threads:
      worker.add_stream(std::make_unique<workloads::BlockingSender>(
          std::move(socket), counters, spec.payload, spec.payload_size, spec.chunk, spec.quota, std::move(done),
          std::move(spec.digest), spec.pacing, spec.source, worker.signals()));
      return;
    case config::Engine::uring:
      break;
  }
  throw std::runtime_error("engine " + std::string(config::to_string(engine)) + " is not built yet");
}

void add_receiver(Worker& worker, config::Engine engine, asio::ip::tcp::socket socket,
                  stats::StreamCounters& counters, ReceiverSpec spec, workloads::StreamDone done) {
  switch (engine) {
    case config::Engine::asio:
      worker.add_stream(std::make_unique<workloads::TcpReceiver>(std::move(socket), counters, spec.mode, spec.buffer,
                                                                 std::move(done), std::move(spec.digest)));
      return;
    case config::Engine::threads:
      worker.add_stream(std::make_unique<workloads::BlockingReceiver>(
          std::move(socket), counters, spec.mode, spec.buffer, std::move(done), std::move(spec.digest),
          worker.signals()));
      return;
    case config::Engine::uring:
      break;
  }
  throw std::runtime_error("engine " + std::string(config::to_string(engine)) + " is not built yet");
}

}  // namespace testio::engine
