// What the user asked for: the test both sides agree on (spec) and what only this side knows.
// Filled by cli/, read by everything else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/test_spec.hpp"

namespace testio::config {

enum class Role { server, client };
enum class AddressFamily { any, v4, v6 };
// text: the human table; json: one iperf3-shaped document; json_stream: one JSON line per event.
enum class OutputFormat { text, json, json_stream };

inline constexpr std::uint16_t kDefaultPort = 5201;

// --cntl-ka's IDLE/INTERVAL/COUNT: seconds, seconds, probes; 0 for the kernel's.
struct Keepalive {
  std::uint32_t idle_s = 0;
  std::uint32_t interval_s = 0;
  std::uint32_t count = 0;
};

struct Config {
  // The client: the test it asks for. The server: its own -A (cpus) pins its workers; a raw sink
  // reads -l, -T and --hash from here too.
  spec::TestSpec spec;

  Role role = Role::client;
  std::string host;                 // client: where the server is
  std::string bind_address;         // server: listen address; client: source address
  std::string bind_device;          // -B ADDRESS%DEV: SO_BINDTODEVICE on every socket
  std::uint16_t port = kDefaultPort;
  AddressFamily family = AddressFamily::any;
  bool one_off = false;             // server: exit after one test

  OutputFormat output = OutputFormat::text;
  char unit = 'a';                  // -f: a(uto), k/m/g bits, K/M/G bytes
  std::string logfile;              // --logfile: report and diagnostics go there instead
  std::string psk_file;             // --psk-file: HMAC-SHA256 challenge-response on the control connection
  std::string allow;                // server: --allow CIDR list; empty = everyone

  bool raw = false;                 // --raw: plain TCP, no testio protocol (sink or sender)
  std::string file;                 // -F: what a client sends (--raw, or to a testio server with digests);
                                    // on a server, what --transfers download
  std::string save_dir;             // --save: write each transfer to its own file there
  bool force = false;               // --force: overwrite existing files under --save
  // HTTP downloads: -c URL (a {i} in it is the transfer number) or --urls FILE's lines.
  std::vector<std::string> urls;
  bool follow_redirects = false;    // --location
  bool insecure = false;            // --insecure: https without checking the server's certificate
  double max_time_s = 60;           // --max-time: the most one transfer may take
  std::uint32_t mss = 0;            // -M: TCP_MAXSEG before connect, so the SYN announces it; 0 = path's
  std::uint16_t cport_first = 0;    // --cport: data connection i binds source port cport_first + i
  std::uint16_t cport_last = 0;
  bool spread_even = false;         // --spread even: the client picks its sending flows' ports (net::PortSpreader)
  bool iperf3 = false;              // --iperf3: the server at -c is a stock iperf3 -s
  bool udp_counters_64bit = false;  // --iperf3 -u --udp-counters-64bit: iperf3's 64-bit datagram counter

  std::string metrics_listen;       // server: --metrics ADDRESS:PORT serves /metrics
  std::string prometheus_file;      // client: --prometheus FILE, node_exporter's textfile
  bool mesh = false;                // --mesh: every pair of the MPI ranks (src/mesh)
  std::string mesh_schedule = "all";  // --mesh-schedule all|pairs|ring
  double mesh_slow_fraction = 0.8;  // --mesh-slow: a host below this share of the median is named
  std::string mesh_results;         // --mesh-results FILE: rank 0 appends each round's pairs as they arrive

  double stall_timeout_s = 10;      // --stall-timeout: a peer silent this long has stopped (0: never)
  double max_wait_s = 60;           // client: --max-wait in a busy server's queue

  int verbosity = 0;                // 0 quiet, 1 -v, 2 --debug
  // iperf3's options for the text report's lines and the JSON document (cli/iperf3_options.cpp).
  std::string title;                // --title: every text line begins "TITLE:  "; "title" in the JSON
  std::optional<std::string> timestamp_format;  // --timestamps[=FORMAT]: strftime(3) before every text line
  bool flush_lines = false;         // --forceflush: each text line is flushed as it ends
  std::string extra_data;           // --extra-data: "extra_data" in the JSON
  bool server_output = false;       // --get-server-output: the server's side after the client's report
  bool diagnose = false;            // --diagnose: short variations after the test to confirm its verdict
  double diagnose_time_s = 20;      // --diagnose-time: the variations' time in all, seconds
  bool stream_full_document = false;  // --json-stream-full-output
  double idle_timeout_s = 0;        // --idle-timeout: with -1, exit when no test comes within it; 0 = wait
  bool daemon = false;              // -D: the server detaches into the background
  std::string pidfile;              // -I: this process's pid, while it runs
  std::uint32_t connect_timeout_ms = 0;  // --connect-timeout: 0 = 10 s
  std::uint32_t snd_timeout_ms = 0;      // --snd-timeout: TCP_USER_TIMEOUT on every connection; 0 = the kernel's
  std::optional<Keepalive> control_keepalive;  // --cntl-ka: TCP keepalive on the control connection
  bool mptcp = false;               // -m/--mptcp: the client's data connections, the server's listener
  std::uint32_t flow_label = 0;     // -L: the IPv6 flow label of the client's data connections; 0 = none
  spec::Limits limits;
};

}  // namespace testio::config
