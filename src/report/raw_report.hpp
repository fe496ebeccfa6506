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

}  // namespace testio::report
