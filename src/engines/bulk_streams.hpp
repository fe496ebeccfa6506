// The one place a bulk sender or receiver is made: which StreamTask moves the bytes depends on the
// engine (--engine) and the modes, not on who runs the test (testio's client or server, either
// direction, or an iperf3 peer's streams).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "net/asio_fwd.hpp"
#include "engines/stream_parts.hpp"
#include "engines/worker.hpp"
#include "spec/test_spec.hpp"
#include "stats/counters.hpp"

namespace testio::engines {

// What a sender sends: bytes [0, quota) (0: no limit, the window ends it) of a payload repeating
// every `payload_size` bytes, at most `chunk` per call.
struct SenderSpec {
  const char* payload = nullptr;
  std::size_t payload_size = 0;
  std::size_t chunk = 0;
  std::uint64_t quota = 0;
  std::optional<StreamDigest> digest;
  SendPacing pacing;
  SendSource source;
  bool follow_rate = true;  // TCP_NOTSENT_LOWAT follows the stream's rate (false: the kernel's)
  // After its half-close the stream reads (and drops) until the peer closes, and only then is it
  // done: a plain receiver (--raw) has counted everything only when it closes. The asio engine's.
  bool await_peer_close = false;
};

struct ReceiverSpec {
  spec::RecvMode mode = spec::RecvMode::recv_into;
  std::size_t buffer = 0;
  std::optional<StreamDigest> digest;
  bool follow_rate = true;  // SO_RCVLOWAT follows the stream's rate (false: the kernel's)
};

// The stream for `socket`, which belongs to `worker`'s io_context; the caller adds it to `worker`.
std::unique_ptr<StreamTask> make_sender(Worker& worker, spec::Engine engine, net::TcpSocket socket,
                                        stats::StreamCounters& counters, SenderSpec spec, StreamDone done);
std::unique_ptr<StreamTask> make_receiver(Worker& worker, spec::Engine engine, net::TcpSocket socket,
                                          stats::StreamCounters& counters, ReceiverSpec spec, StreamDone done);

// Empty when `engine` can run here (with zero-copy sends when `zerocopy_sends`); otherwise why not,
// in one sentence. The client asks before it connects, the server before it accepts a test.
std::string unusable_reason(spec::Engine engine, bool zerocopy_sends);

// A test whose client named no engine asks for uring with engine_fallback (cli: the default). Each
// side settles it before it builds the streams: where io_uring cannot run (a seccomp filter,
// kernel.io_uring_disabled, an old kernel) its streams run asio instead of the test being refused.
// Applies to every workload of a composed test; returns why it fell back, empty if it did not.
std::string settle_default_engine(spec::TestSpec& spec);

}  // namespace testio::engines
