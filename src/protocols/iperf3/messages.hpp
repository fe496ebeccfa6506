// The two JSON messages of an iperf3 test: the client's parameters and each side's results.
// Parsers never trust the peer: every field's type and range is checked, and anything wrong is
// one ProtocolError naming the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/test_spec.hpp"

namespace testio::iperf3 {

struct Params {
  bool udp = false;             // -u; SCTP is not supported by this side
  bool udp_counters_64bit = false;
  bool sctp = false;
  double omit_s = 0;
  double time_s = 10;
  std::uint64_t bytes = 0;      // "num": a byte count instead of a time
  std::uint64_t blocks = 0;     // "blockcount": blocks of `len` instead of a time
  std::uint32_t parallel = 1;
  std::uint64_t len = 128 * 1024;
  std::uint64_t window = 0;     // 0: not set
  std::uint32_t mss = 0;
  bool nodelay = false;
  bool reverse = false;
  bool bidirectional = false;
  std::string congestion;
  std::uint32_t tos = 0;        // -S: "TOS", the data packets' TOS byte
  std::string title;            // --title: "title"
  std::string extra_data;       // --extra-data: "extra_data", carried into each side's JSON
  bool get_server_output = false;  // --get-server-output: the server adds its output to its results
  bool mptcp = false;           // -m: "mptcp", the client's data connections are MPTCP
  std::uint32_t flow_label = 0; // -L: "flowlabel", the client's data connections' IPv6 flow label
  std::uint64_t bandwidth = 0;  // -b, bits/s per stream: UDP's pace (testio paces no TCP for iperf3)
  bool authenticated = false;   // the client sent an RSA token; this side does not check them
  std::string client_version;

  // Bytes a counted test moves in total (num, or blockcount * len); 0 for a timed test.
  std::uint64_t total_bytes() const noexcept { return bytes ? bytes : blocks * len; }
  // Data connections the client opens: parallel, twice that for a bidirectional test.
  std::uint32_t connections() const noexcept { return bidirectional ? 2 * parallel : parallel; }
};

// Throws ProtocolError. `limits` are the server's caps (-P, -l, -w, -t).
Params parse_params(std::string_view text, const spec::Limits& limits);
// Boolean flags are left out when false: iperf3 tests them for presence only.
std::string to_json(const Params& params);

struct StreamResult {
  std::int32_t id = 0;
  std::uint64_t bytes = 0;
  std::int64_t retransmits = -1;  // -1 unless this side sent on the stream and read TCP_INFO
  double start_s = 0;
  double end_s = 0;
  // UDP: a receiver's jitter (seconds) and lost datagrams ("errors"); "packets" is a sender's
  // count, a receiver's highest sequence number.
  double jitter_s = 0;
  std::uint64_t errors = 0;
  std::uint64_t packets = 0;
};

struct Results {
  double cpu_total = 0, cpu_user = 0, cpu_system = 0;  // percent of one core
  int sender_has_retransmits = -1;
  std::string congestion;
  std::vector<StreamResult> streams;
  // Asked for with "get_server_output": the server's own -J document (as JSON text), or its text.
  std::string server_output_json, server_output_text;
};

// Throws ProtocolError; at most `max_streams` streams, each id among `ids` once.
Results parse_results(std::string_view text, const std::vector<std::int32_t>& ids);
std::string to_json(const Results& results);

// iperf3 numbers a test's streams 1, 3, 4, 5, ...: the second is 3 (a compatibility quirk).
std::int32_t stream_id(std::uint32_t index) noexcept;
std::vector<std::int32_t> stream_ids(std::uint32_t count);
// The connection index of a stream id; nullopt for 0, 2 and negative ids.
std::optional<std::uint32_t> connection_of(std::int32_t id) noexcept;

}  // namespace testio::iperf3
