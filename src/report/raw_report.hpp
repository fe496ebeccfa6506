// One plain-TCP transfer (raw sink or raw send): a line of text or one JSON line per transfer.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "config/config.hpp"

namespace testio::report {

struct RawTransfer {
  std::string role;             // "received" (sink) or "sent" (client)
  std::string peer;             // "127.0.0.1:45678"
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;      // read or write system calls that moved data
  double elapsed_s = 0;         // connect/accept to EOF (or to the end of sending)
  std::string hash;             // "sha1", "sha256", "none"
  std::string digest;           // lower-case hex; empty for "none"
  std::string error;            // why it ended early; empty when it ended cleanly
};

void print_raw_transfer(std::ostream& out, const RawTransfer& transfer, config::OutputFormat format, char unit);

// The connections one peer address has open at once, as a raw sink groups them (iperf2's server
// does so for a multi-stream client): one interval of the group, times since its first connection.
struct RawGroupInterval {
  std::string peer;  // the address, without a port
  double start_s = 0;
  double end_s = 0;
  std::uint32_t connections = 0;  // open at the interval's end, or closed during it
  std::uint64_t bytes = 0;
};

// A group once its last connection has closed.
struct RawGroupSum {
  std::string peer;
  std::uint32_t connections = 0;
  std::uint32_t incomplete = 0;  // connections that ended with an error
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;
  double elapsed_s = 0;  // first accept to last close
};

void print_raw_interval(std::ostream& out, const RawGroupInterval& interval, config::OutputFormat format, char unit);
void print_raw_sum(std::ostream& out, const RawGroupSum& sum, config::OutputFormat format, char unit);

}  // namespace testio::report
