// --engine threads: a bulk sender and receiver that each run a loop of blocking system calls on
// a worker thread of their own (one worker per connection), as a thread-per-connection server
// does. Same semantics as the asio engine's: a sender sends its quota or until the deadline, then
// half-closes; a receiver reads to EOF; one counters.record() per call. The classes are
// threads_bulk.cpp's.
#pragma once

#include <memory>

#include "engines/stream_parts.hpp"
#include "engines/stream_task.hpp"
#include "net/asio_fwd.hpp"

namespace testio::engines {

// `signals` are the worker's, which each loop checks between calls.
std::unique_ptr<StreamTask> make_blocking_sender(net::TcpSocket socket, SenderParts parts,
                                                 const BlockingSignals& signals);
std::unique_ptr<StreamTask> make_blocking_receiver(net::TcpSocket socket, ReceiverParts parts,
                                                   const BlockingSignals& signals);

}  // namespace testio::engines
