// --engine asio (the default): a bulk sender that writes for the window (or its share of -n bytes)
// and then half-closes, and a receiver that reads to EOF, each driven by its worker's io_context.
// The classes are asio_bulk.cpp's; bulk_streams.cpp makes them through these. Owner: the worker
// thread the stream is added to.
#pragma once

#include <memory>

#include "engines/stream_parts.hpp"
#include "engines/stream_task.hpp"
#include "net/asio_fwd.hpp"

namespace testio::engines {

// `parts` names the payload (shared read-only by the worker's senders; it outlives them), the
// cursor over it, the counters, digest, pacing and source, as for every engine's sender.
std::unique_ptr<StreamTask> make_asio_sender(net::TcpSocket socket, SenderParts parts);
// recv, recv_into and trunc read after each readiness; splice and mmap drain the socket with
// their zero-copy reader, or fall back to recv_into where the kernel cannot do them.
std::unique_ptr<StreamTask> make_asio_receiver(net::TcpSocket socket, ReceiverParts parts);

}  // namespace testio::engines
