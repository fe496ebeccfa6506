#include "protocols/plain/raw_groups.hpp"

#include <algorithm>
#include <iterator>

namespace testio::plain {

PeerGroups::PeerGroups(asio::any_io_executor io, double interval_s, std::ostream& out, config::OutputFormat format,
                       char unit)
    : io_(io), interval_s_(interval_s), out_(out), format_(format), unit_(unit) {}

double PeerGroups::since_start(const Group& group) const {
  return std::chrono::duration<double>(Clock::now() - group.start).count();
}

void PeerGroups::joined(const std::string& address, std::uint64_t id, RawSink::Progress progress) {
  std::unique_ptr<Group>& slot = groups_[address];
  if (!slot) {
    slot = std::make_unique<Group>(io_);
    slot->sum.peer = address;
    if (interval_s_ > 0) schedule_tick(*slot);
  }
  slot->linger.cancel();
  slot->open.push_back(Member{id, std::move(progress)});
  ++slot->sum.connections;
}

void PeerGroups::left(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer) {
  auto found = groups_.find(address);
  if (found == groups_.end()) return;
  Group& group = *found->second;
  std::erase_if(group.open, [id](const Member& member) { return member.id == id; });
  group.sum.bytes += transfer.bytes;
  group.sum.calls += transfer.calls;
  if (!transfer.error.empty()) ++group.sum.incomplete;
  ++group.closed_since_tick;
  if (!group.open.empty()) return;
  group.last_close_s = since_start(group);
  group.linger.expires_after(kLinger);
  group.linger.async_wait([this, address](const asio::error_code& error) {
    if (error) return;  // another connection joined, or the group is gone
    if (auto lingering = groups_.find(address); lingering != groups_.end()) end(lingering);
  });
}

void PeerGroups::flush() {
  for (auto group = groups_.begin(); group != groups_.end();) {
    auto next = std::next(group);
    if (group->second->open.empty()) end(group);
    group = next;
  }
}

// The group ends at its last close, with its last (partial) interval and its sum.
void PeerGroups::end(std::map<std::string, std::unique_ptr<Group>>::iterator found) {
  Group& group = *found->second;
  if (interval_s_ > 0 && group.closed_since_tick > 0 && group.last_close_s > group.tick_s)
    close_interval(group, group.last_close_s);
  group.sum.elapsed_s = group.last_close_s;
  if (group.sum.connections >= 2) report::print_raw_sum(out_, group.sum, format_, unit_);
  groups_.erase(found);  // cancels its timers, whose handlers then touch nothing
}

// Ticks at fixed times from the group's start, so late handlers do not drift the intervals.
void PeerGroups::schedule_tick(Group& group) {
  ++group.ticks;
  group.ticker.expires_at(group.start + engines::clock_seconds(interval_s_ * static_cast<double>(group.ticks)));
  group.ticker.async_wait([this, &group](const asio::error_code& error) {
    if (error) return;
    close_interval(group, interval_s_ * static_cast<double>(group.ticks));
    schedule_tick(group);
  });
}

void PeerGroups::close_interval(Group& group, double now_s) {
  std::uint64_t bytes = group.sum.bytes;  // those closed, plus what the open ones have read so far
  for (const Member& member : group.open) bytes += member.progress->load(std::memory_order_relaxed);
  report::RawGroupInterval interval;
  interval.peer = group.sum.peer;
  interval.start_s = group.tick_s;
  interval.end_s = now_s;
  interval.connections = static_cast<std::uint32_t>(group.open.size()) + group.closed_since_tick;
  interval.bytes = bytes - std::min(bytes, group.bytes_at_tick);
  group.bytes_at_tick = bytes;
  group.tick_s = now_s;
  group.closed_since_tick = 0;
  // A lingering group's ticks with nothing open and nothing closed are not worth a line.
  if (group.sum.connections >= 2 && interval.connections > 0) report::print_raw_interval(out_, interval, format_, unit_);
}

}  // namespace testio::plain
