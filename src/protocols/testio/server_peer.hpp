// A testio client as the server's peer: test_accepted, `start` once the window opened, the
// client's done frame (a `stop` before it ends this side's windows early), and the results frames
// both ways. Owner: the server's control thread.
#pragma once

#include <memory>
#include <string>

#include "lifecycle/server_peer.hpp"
#include "protocols/testio/channel.hpp"

namespace testio::control {

// A testio client on `control`.
std::unique_ptr<lifecycle::ServerPeer> testio_server_peer(ControlChannel& control);

// The error frame `code` with `message`, best effort: the peer may already be gone, and the
// reason is logged on this side anyway.
asio::awaitable<void> send_error(ControlChannel& control, const std::string& message, const std::string& code);

}  // namespace testio::control
