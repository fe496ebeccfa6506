// The server's connections in their handshake (accepted, preamble not yet read), by the address
// they come from. A peer at its allowance loses its oldest idle handshake to its newest, so an
// address holding idle connections cannot lock out a client behind that same address (a refused
// newest would be exactly the client's). Idle means the server has read every byte it was sent and
// waits for the peer: a real client's connection whose preamble is in but not yet read (a busy or
// slow server) is never the one closed. Owner: the server's control thread.
#pragma once

#include <cstdint>
#include <list>
#include <memory>

#include "net/asio_fwd.hpp"

namespace testio::server {

class Handshakes {
 public:
  // One connection's place while it handshakes, held in its coroutine's frame (so it cannot
  // move); it leaves at finish() or destruction, or earlier when the connection is evicted.
  class Ticket {
   public:
    Ticket(Handshakes& handshakes, const asio::ip::address& peer, net::TcpSocket& socket);
    ~Ticket() { finish(); }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

    void finish() noexcept;
    // Closed by evict_oldest_idle() for a newer connection from the same address.
    bool evicted() const noexcept { return evicted_; }

   private:
    friend class Handshakes;
    Handshakes& handshakes_;
    const asio::ip::address* peer_ = nullptr;  // its line's key in Handshakes, which lives while the line does
    net::TcpSocket& socket_;
    std::list<Ticket*>::iterator place_;
    bool active_ = true;
    bool evicted_ = false;
  };

  Handshakes();
  ~Handshakes();
  Handshakes(const Handshakes&) = delete;
  Handshakes& operator=(const Handshakes&) = delete;

  std::uint32_t total() const noexcept { return total_; }
  std::uint32_t held_by(const asio::ip::address& peer) const;
  // Takes `peer`'s oldest idle handshake out (nothing unread waits on its socket) and returns its
  // socket for the caller to answer and close; nullptr when every one has bytes waiting: those
  // finish as soon as their coroutines run, and the server's --max-pending still bounds them.
  net::TcpSocket* evict_oldest_idle(const asio::ip::address& peer);

 private:
  void leave(Ticket& ticket) noexcept;

  struct Lines;                    // each address's tickets, oldest first (handshakes.cpp)
  std::unique_ptr<Lines> by_peer_;  // a pointer keeps Asio's address out of this header
  std::uint32_t total_ = 0;
};

}  // namespace testio::server
