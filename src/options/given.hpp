// Which options one command line typed, as opposed to defaults, for the rules that ask whether
// the user set something (some options are one role's, some exclude each other). Filled by the
// option groups (cli/ and each workload's), read by their checks. Owner: the main thread, while
// it parses the command line.
#pragma once

namespace testio::options {

struct GivenOptions {
  bool server = false, client = false, one_off = false, ipv4 = false, ipv6 = false;
  bool connections = false, time = false, bytes = false, threads = false;
  bool buffer = false, window = false, recv_mode = false, send_mode = false, engine = false;
  bool interval = false, omit = false, json = false, json_stream = false;
  bool server_limits = false;  // --max-tests, --queue, --allow, --handshake-timeout, --max-frame ...
  bool max_wait = false;       // --max-wait
  bool raw = false, hash = false, file = false;
  bool rr = false, rr_options = false, num = false;
  bool latency = false, latency_options = false;  // --latency; its kinds, interval, size, phases
  bool rpm = false, rpm_options = false;          // --rpm; its URLs, time and probe rate
  bool udp = false, udp_options = false, udp_counters_64bit = false;
  bool transfers = false, size = false, reuse = false, save = false, force = false;
  bool urls = false, http_options = false;  // --urls; --location, --insecure, --max-time
  bool rate = false, total_rate = false, client_tuning = false;  // -M, --cport, -b, --total-rate, --fq-rate, --no-lowat
  bool iface_stats = false;
  bool iperf3 = false, reverse = false, bidir = false, psk_file = false;
  bool metrics = false, prometheus = false;  // --metrics, --prometheus
  bool mesh = false, mesh_options = false;   // --mesh; --mesh-schedule, --mesh-slow
  bool profile_buffer = false;  // a --config profile's spec set -l: the smaller defaults of -u and --iperf3 do not apply
};

}  // namespace testio::options
