// One check per rule; each failure is a util::UsageError with one clear sentence.
#pragma once

#include "config/config.hpp"

namespace testio::cli {

// Which options the user typed, as opposed to defaults: some are only meaningful for one role.
struct GivenOptions {
  bool server = false, client = false, one_off = false, ipv4 = false, ipv6 = false;
  bool connections = false, time = false, bytes = false, threads = false;
  bool buffer = false, window = false, recv_mode = false, send_mode = false, engine = false;
  bool interval = false, omit = false, json = false, json_stream = false;
  bool server_limits = false;  // --max-tests, --allow, --handshake-timeout, --max-frame
  bool raw = false, hash = false, file = false;
  bool rr = false, rr_options = false, num = false;
  bool udp = false, udp_options = false, udp_counters_64bit = false;
  bool transfers = false, size = false, reuse = false, save = false, force = false;
  bool urls = false, http_options = false;  // --urls; --location, --insecure, --max-time
  bool rate = false, total_rate = false, client_tuning = false;  // -M, --cport, -b, --total-rate, --fq-rate, --no-lowat
  bool iface_stats = false;
  bool iperf3 = false, reverse = false, bidir = false, psk_file = false;
  bool metrics = false, prometheus = false;  // --metrics, --prometheus
  bool mesh = false, mesh_options = false;   // --mesh; --mesh-schedule, --mesh-slow
};

void validate(const config::Config& config, const GivenOptions& given);

}  // namespace testio::cli
