#include "lifecycle/start.hpp"

#include "util/descriptors.hpp"


namespace testio::lifecycle {

report::StartInfo start_info(const spec::TestSpec& spec, unsigned client_threads, unsigned server_threads,
                             bool from_client) {
  report::StartInfo start;
  start.spec = spec;
  start.from_client = from_client;
  start.client_threads = client_threads;
  start.server_threads = server_threads;
  return start;
}

net::TcpTuning data_tuning(const spec::TestSpec& spec, bool sending, std::uint32_t mss) {
  net::TcpTuning tuning;
  tuning.congestion = spec.congestion;
  tuning.mss = mss;
  tuning.no_delay = spec.no_delay;
  tuning.tos = static_cast<std::uint8_t>(spec.tos);
  tuning.fq_rate_bps = sending ? spec.fq_rate_bps : 0;
  return tuning;
}

std::string tune_data_connection(int fd, const spec::TestSpec& spec, bool sending, std::uint32_t mss) {
  std::string clamped;
  if (spec.window) clamped = net::clamp_warning(net::set_socket_buffers(fd, spec.window));
  net::apply_tuning(fd, data_tuning(spec, sending, mss));
  return clamped;
}

std::uint64_t descriptors_needed(const spec::TestSpec& spec, const workloads::DirectionLayout& layout,
                                 workloads::Side, unsigned threads) {
  // The control connection, a listener, the log, a sendfile source.
  constexpr std::uint64_t kOthers = 4;
  const std::uint64_t rings = spec.engine == spec::Engine::uring ? threads : 0;
  return layout.total() + rings + kOthers;
}

void check_descriptors(const spec::TestSpec& spec, const workloads::DirectionLayout& layout, workloads::Side side,
                       unsigned threads) {
  const std::string what = std::to_string(layout.total()) + (layout.total() == 1 ? " data connection" : " data connections");
  std::string shortfall = util::descriptor_shortfall(descriptors_needed(spec, layout, side, threads), what);
  if (!shortfall.empty()) throw std::runtime_error(shortfall);
}

void note_connection(report::StartInfo& start, asio::ip::tcp::socket& socket) {
  asio::ip::tcp::endpoint local = socket.local_endpoint(), remote = socket.remote_endpoint();
  start.connected.push_back({local.address().to_string(), local.port(), remote.address().to_string(), remote.port()});
  if (start.connected.size() != 1) return;
  net::SocketBuffers granted = net::read_socket_buffers(socket.native_handle());
  start.sndbuf_actual = granted.send_granted;
  start.rcvbuf_actual = granted.receive_granted;
  start.mss = net::read_mss(socket.native_handle());
  start.no_delay = net::read_no_delay(socket.native_handle());
  start.fq_rate_bps = net::read_pacing_rate_bps(socket.native_handle());
  start.bind_device = net::read_bound_device(socket.native_handle());
}

report::StartInfo direction_start(report::StartInfo start, const std::vector<std::uint32_t>& connections,
                                  bool local_sends) {
  std::vector<report::StreamEndpoints> connected;
  for (std::uint32_t connection : connections)
    if (connection < start.connected.size()) connected.push_back(start.connected[connection]);
  start.connected = std::move(connected);
  start.local_is_sender = local_sends;
  return start;
}

report::SideReport side_report(SideResults results) {
  report::SideReport side;
  side.present = true;
  side.totals = std::move(results.streams);
  side.intervals = std::move(results.intervals);
  side.cpu = results.cpu;
  side.wall_s = results.wall_s;
  side.congestion = std::move(results.congestion);
  side.cores = std::move(results.cores);
  side.nics_reason = std::move(results.nics_reason);
  side.paths = std::move(results.paths);
  side.incoming_cpus = std::move(results.incoming_cpus);
  side.worker_cpus = std::move(results.worker_cpus);
  side.mptcp_subflows = std::move(results.mptcp_subflows);
  return side;
}

}  // namespace testio::lifecycle
