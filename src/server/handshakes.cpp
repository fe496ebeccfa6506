#include "server/handshakes.hpp"

#include <map>

#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>

namespace testio::server {

struct Handshakes::Lines {
  std::map<asio::ip::address, std::list<Ticket*>> by_address;
};

Handshakes::Handshakes() : by_peer_(std::make_unique<Lines>()) {}

Handshakes::~Handshakes() = default;

Handshakes::Ticket::Ticket(Handshakes& handshakes, const asio::ip::address& peer, asio::ip::tcp::socket& socket)
    : handshakes_(handshakes), socket_(socket) {
  const auto entry = handshakes_.by_peer_->by_address.try_emplace(peer).first;
  peer_ = &entry->first;
  place_ = entry->second.insert(entry->second.end(), this);
  ++handshakes_.total_;
}

void Handshakes::Ticket::finish() noexcept {
  if (active_) handshakes_.leave(*this);
}

void Handshakes::leave(Ticket& ticket) noexcept {
  auto line = by_peer_->by_address.find(*ticket.peer_);
  line->second.erase(ticket.place_);
  if (line->second.empty()) by_peer_->by_address.erase(line);  // ticket.peer_ dangles now: it is done
  --total_;
  ticket.active_ = false;
}

std::uint32_t Handshakes::held_by(const asio::ip::address& peer) const {
  auto line = by_peer_->by_address.find(peer);
  return line == by_peer_->by_address.end() ? 0 : static_cast<std::uint32_t>(line->second.size());
}

namespace {

// Whether the peer waits on us: bytes it sent lie unread. A socket that cannot say is broken,
// and so as good as idle.
bool has_unread_bytes(asio::ip::tcp::socket& socket) {
  asio::error_code ec;
  const std::size_t waiting = socket.available(ec);
  return !ec && waiting > 0;
}

}  // namespace

asio::ip::tcp::socket* Handshakes::evict_oldest_idle(const asio::ip::address& peer) {
  auto line = by_peer_->by_address.find(peer);
  if (line == by_peer_->by_address.end()) return nullptr;
  for (Ticket* ticket : line->second) {
    if (has_unread_bytes(ticket->socket_)) continue;
    leave(*ticket);  // `line` may be gone now: return at once
    ticket->evicted_ = true;
    return &ticket->socket_;
  }
  return nullptr;
}

}  // namespace testio::server
