// --engine uring: a bulk sender and receiver whose system calls are io_uring operations on their
// worker's UringLoop (made with the worker's first such stream). Same semantics as the asio
// engine's: a sender sends its quota or until the deadline, then half-closes; a receiver reads to
// EOF; one counters.record() per completed operation. The classes and the loop are uring.cpp's.
#pragma once

#include <memory>
#include <string>

#include "engines/stream_parts.hpp"
#include "engines/stream_task.hpp"
#include "net/asio_fwd.hpp"

namespace testio::engines {

class Worker;

// `parts.source.mode` is send or zerocopy (sendfile is refused with this engine).
std::unique_ptr<StreamTask> make_uring_sender(net::TcpSocket socket, SenderParts parts, Worker& worker);
std::unique_ptr<StreamTask> make_uring_receiver(net::TcpSocket socket, ReceiverParts parts, Worker& worker);

// Why this host cannot run the engine (with zero-copy sends when `zerocopy`), and what to use
// instead; both empty when it can.
struct UringRefusal {
  std::string cause, instead;
};
UringRefusal uring_refusal(bool zerocopy);

}  // namespace testio::engines
