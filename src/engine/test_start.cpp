#include "engine/test_start.hpp"

#include "net/socket_options.hpp"

namespace testio::engine {

report::StartInfo start_info(const control::TestRequest& request, unsigned server_threads, bool from_client) {
  report::StartInfo start;
  start.from_client = from_client;
  // Bulk and rr tests: the client sends. Transfers: the server does.
  start.local_is_sender = request.transfers ? !from_client : from_client;
  start.bidir = request.direction == config::Direction::bidir;
  start.connections = request.connections;
  start.client_threads = request.client_threads;
  start.server_threads = server_threads;
  start.duration_s = request.duration_s;
  start.total_bytes = request.total_bytes;
  start.omit_s = request.omit_s;
  start.interval_s = request.interval_s;
  start.buffer = request.buffer;
  start.window = request.window;
  start.recv_mode = request.recv_mode;
  start.engine = request.engine;
  start.rate_lowat = request.rate_lowat;
  start.rr = request.rr;
  start.msize = request.msize;
  start.depth = request.depth;
  start.transfers = request.transfers;
  start.transfer_size = request.transfer_size;
  start.reuse = request.reuse;
  if (request.hash != util::HashKind::none) start.hash = std::string(util::to_string(request.hash));
  start.congestion_requested = request.congestion;
  start.client_cpus = request.cpus;
  return start;
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
  start.connections = static_cast<std::uint32_t>(connections.size());
  start.local_is_sender = local_sends;
  return start;
}

report::SideReport side_report(control::SideResults results) {
  report::SideReport side;
  side.present = true;
  side.totals = std::move(results.streams);
  side.intervals = std::move(results.intervals);
  side.cpu = results.cpu;
  side.wall_s = results.wall_s;
  side.congestion = std::move(results.congestion);
  side.cores = std::move(results.cores);
  return side;
}

}  // namespace testio::engine
