// Makes the peer of one test. The program chooses the protocol (main.cpp) and hands its maker to
// run_client(); the peer is made inside the test, so its sockets go before the io_context that
// runs them. Apart from ClientPeer itself, so that what only passes a maker on parses no Asio.
#pragma once

#include <functional>
#include <memory>

namespace testio::lifecycle {

class ClientPeer;  // lifecycle/client_peer.hpp

using PeerMaker = std::function<std::unique_ptr<ClientPeer>()>;

}  // namespace testio::lifecycle
