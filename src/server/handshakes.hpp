// The server's connections in their handshake (accepted, preamble not yet read), by the address
// they come from. A peer at its allowance loses its oldest handshake to its newest: a client's
// real connections finish theirs within a round trip, so the oldest are the idle ones, and an
// address holding idle connections cannot lock out a client behind that same address (a
// refused newest would be exactly the client's). Owner: the server's control thread.
#pragma once

#include <cstdint>
#include <list>
#include <map>

#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>

namespace testio::server {

class Handshakes {
 public:
  // One connection's place while it handshakes, held in its coroutine's frame (so it cannot
  // move); it leaves at finish() or destruction, or earlier when the connection is evicted.
  class Ticket {
   public:
    Ticket(Handshakes& handshakes, const asio::ip::address& peer, asio::ip::tcp::socket& socket);
    ~Ticket() { finish(); }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

    void finish() noexcept;
    // Closed by evict_oldest() for a newer connection from the same address.
    bool evicted() const noexcept { return evicted_; }

   private:
    friend class Handshakes;
    Handshakes& handshakes_;
    asio::ip::address peer_;
    asio::ip::tcp::socket& socket_;
    std::list<Ticket*>::iterator place_;
    bool active_ = true;
    bool evicted_ = false;
  };

  std::uint32_t total() const noexcept { return total_; }
  std::uint32_t held_by(const asio::ip::address& peer) const;
  // Takes `peer`'s oldest handshake out and returns its socket for the caller to answer and close;
  // nullptr when the peer has none.
  asio::ip::tcp::socket* evict_oldest(const asio::ip::address& peer);

 private:
  void leave(Ticket& ticket) noexcept;

  std::map<asio::ip::address, std::list<Ticket*>> by_peer_;  // oldest first
  std::uint32_t total_ = 0;
};

}  // namespace testio::server
