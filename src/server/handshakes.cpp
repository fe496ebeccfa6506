#include "server/handshakes.hpp"

namespace testio::server {

Handshakes::Ticket::Ticket(Handshakes& handshakes, const asio::ip::address& peer, asio::ip::tcp::socket& socket)
    : handshakes_(handshakes), peer_(peer), socket_(socket) {
  std::list<Ticket*>& line = handshakes_.by_peer_[peer_];
  place_ = line.insert(line.end(), this);
  ++handshakes_.total_;
}

void Handshakes::Ticket::finish() noexcept {
  if (active_) handshakes_.leave(*this);
}

void Handshakes::leave(Ticket& ticket) noexcept {
  auto line = by_peer_.find(ticket.peer_);
  line->second.erase(ticket.place_);
  if (line->second.empty()) by_peer_.erase(line);
  --total_;
  ticket.active_ = false;
}

std::uint32_t Handshakes::held_by(const asio::ip::address& peer) const {
  auto line = by_peer_.find(peer);
  return line == by_peer_.end() ? 0 : static_cast<std::uint32_t>(line->second.size());
}

asio::ip::tcp::socket* Handshakes::evict_oldest(const asio::ip::address& peer) {
  auto line = by_peer_.find(peer);
  if (line == by_peer_.end()) return nullptr;
  Ticket& oldest = *line->second.front();
  leave(oldest);
  oldest.evicted_ = true;
  return &oldest.socket_;
}

}  // namespace testio::server
