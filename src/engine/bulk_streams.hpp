// The one place a bulk test's senders and receivers are made: which StreamTask moves the bytes
// depends on the engine (--engine) and the modes, not on who runs the test (testio's client or
// server, either direction, or an iperf3 peer's streams).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <asio/ip/tcp.hpp>

#include "config/config.hpp"
#include "engine/worker.hpp"
#include "stats/counters.hpp"
#include "workloads/tcp_stream.hpp"

namespace testio::engine {

// What a sender sends: bytes [0, quota) (0: no limit, the window ends it) of a payload repeating
// every `payload_size` bytes, at most `chunk` per call.
struct SenderSpec {
  const char* payload = nullptr;
  std::size_t payload_size = 0;
  std::size_t chunk = 0;
  std::uint64_t quota = 0;
  std::optional<workloads::StreamDigest> digest;
  workloads::SendPacing pacing;
  workloads::SendSource source;
  bool rate_lowat = true;  // TCP_NOTSENT_LOWAT follows the rate (false: --no-lowat)
};

struct ReceiverSpec {
  config::RecvMode mode = config::RecvMode::recv_into;
  std::size_t buffer = 0;
  std::optional<workloads::StreamDigest> digest;
  bool rate_lowat = true;  // SO_RCVLOWAT follows the rate (false: --no-lowat)
};

// `socket` belongs to `worker`'s io_context; the stream is added to `worker`.
void add_sender(Worker& worker, config::Engine engine, asio::ip::tcp::socket socket,
                stats::StreamCounters& counters, SenderSpec spec, workloads::StreamDone done);
void add_receiver(Worker& worker, config::Engine engine, asio::ip::tcp::socket socket,
                  stats::StreamCounters& counters, ReceiverSpec spec, workloads::StreamDone done);

}  // namespace testio::engine
