// The raw sink's view of each peer address: the connections one address has open at once form a
// group (a multi-connection sender, as iperf2's server groups a -P client). Once a group has two
// or more, it is reported each interval and summed when its last connection has closed and no
// other has arrived for kLinger (a sender's later connections may be accepted only after its
// first ones finished); each connection still gets its own line from the sink. Owner: the server's control thread; the
// progress counters it reads are written by the workers' sinks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/steady_timer.hpp>

#include "config/config.hpp"
#include "report/raw_report.hpp"
#include "protocols/plain/raw_sink.hpp"

namespace testio::plain {

class PeerGroups {
 public:
  // `interval_s` 0: no interval lines, only the sums.
  PeerGroups(asio::any_io_executor io, double interval_s, std::ostream& out, config::OutputFormat format, char unit);

  // Connection `id` from `address` was accepted; its sink publishes what it has read in `progress`.
  void joined(const std::string& address, std::uint64_t id, RawSink::Progress progress);
  // It has closed, with these figures.
  void left(const std::string& address, std::uint64_t id, const report::RawTransfer& transfer);
  // The sink stops: the groups whose connections have all closed are summed now.
  void flush();

  static constexpr std::chrono::milliseconds kLinger{500};

 private:
  using Clock = std::chrono::steady_clock;
  struct Member {
    std::uint64_t id;
    RawSink::Progress progress;
  };
  struct Group {
    explicit Group(const asio::any_io_executor& io) : ticker(io), linger(io) {}
    Clock::time_point start = Clock::now();
    std::vector<Member> open;
    report::RawGroupSum sum;          // connections so far; bytes and calls of those closed
    std::uint32_t closed_since_tick = 0;
    std::uint64_t bytes_at_tick = 0;  // the group's bytes at the last interval's end
    double tick_s = 0;                // that end, since start
    std::uint64_t ticks = 0;
    double last_close_s = 0;
    asio::steady_timer ticker;
    asio::steady_timer linger;  // runs while no connection is open
  };

  void schedule_tick(Group& group);
  // Prints the interval from the last tick to `now_s` when the group has two connections or more.
  void close_interval(Group& group, double now_s);
  double since_start(const Group& group) const;
  // Prints the last interval and the sum, and forgets the group.
  void end(std::map<std::string, std::unique_ptr<Group>>::iterator found);

  asio::any_io_executor io_;
  double interval_s_;
  std::ostream& out_;
  config::OutputFormat format_;
  char unit_;
  std::map<std::string, std::unique_ptr<Group>> groups_;  // by address, while one is open
};

}  // namespace testio::plain
