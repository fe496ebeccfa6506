// What a flow's sender and receiver share: the client's socket and hello, the server's attach, the
// watchdog that ends a flow whose peer never came or went away.
#include "workloads/udp/udp_flow.hpp"

#include <cerrno>
#include <cstring>

#include <netinet/in.h>

#include "net/socket_options.hpp"
#include "net/udp_socket.hpp"
#include "util/log.hpp"
#include "util/unique_fd.hpp"
#include "workloads/udp/datagram.hpp"

namespace testio::workloads::udp {
namespace {

using namespace std::chrono_literals;
using asio::ip::udp;

constexpr auto kHelloRetry = 100ms;   // a hello (or its answer) lost on the way is said again
constexpr unsigned kHelloTries = 50;  // 5 s in all, then the flow fails
constexpr auto kPeerGrace = 3s;       // beyond the window before a flow gives its peer up

udp::endpoint udp_endpoint(const asio::ip::tcp::endpoint& endpoint) { return {endpoint.address(), endpoint.port()}; }

}  // namespace

UdpFlow::UdpFlow(StreamPlace& place, FlowSettings settings, FastPaths& paths)
    : context_(place.worker.context()),
      socket_(context_),
      server_(udp_endpoint(place.server)),
      counters_(place.counters),
      settings_(settings),
      paths_(paths),
      timer_(context_),
      done_(std::move(place.done)),
      client_(place.server.port() != 0),
      watchdog_(context_) {}

void UdpFlow::begin(const engines::TestClock& clock) {
  clock_ = clock;
  begun_ = true;
  watch_for_peer();
  if (attached_) {  // iperf3's sessions hand the sockets over before the test begins
    running_ = true;
    run();
  } else if (client_ && prepare_socket()) {
    say_hello(kHelloTries);
  }
}

void UdpFlow::attach(udp::socket socket) {
  if (closed_ || finished_) return;
  socket_ = std::move(socket);
  if (!prepare_socket()) return;
  attached_ = true;
  if (!begun_) return;
  running_ = true;
  run();
}

// The client's socket opened (and connected unless --no-connect), either side's given -w and the
// drop count; the fast paths are the sender's and receiver's own. False (the flow failed) when the
// kernel refused.
void UdpFlow::check_path_mtu() {
  if (paths_.fragmented.load(std::memory_order_relaxed)) return;
  const bool v4 = server_.address().is_v4();
  // A socket of its own, connected to learn the route's MTU (a --no-connect flow's is not).
  util::UniqueFd probe(::socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  int mtu = 0;
  socklen_t size = sizeof(mtu);
  if (!probe.valid() || ::connect(probe.get(), server_.data(), static_cast<socklen_t>(server_.size())) != 0 ||
      ::getsockopt(probe.get(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MTU : IPV6_MTU, &mtu, &size) != 0 || mtu <= 0)
    return;
  const std::size_t carried = static_cast<std::size_t>(mtu) - (v4 ? 28 : 48);  // IP and UDP headers
  if (settings_.datagram <= carried || !FastPaths::first(paths_.fragmented)) return;
  const std::size_t fragments = (settings_.datagram + carried - 1) / carried;
  spdlog::warn("-l {} is more than one packet of the path to the server carries (MTU {}: {} bytes): each datagram "
               "goes in about {} IP fragments, and losing one loses the datagram",
               settings_.datagram, mtu, carried, fragments);
}

bool UdpFlow::prepare_socket() {
  try {
    if (client_) socket_.open(server_.protocol());
    if (settings_.window) (void)net::set_socket_buffers(fd(), settings_.window);
    if (settings_.tos) net::set_tos(fd(), settings_.tos);
    if (settings_.dont_fragment) net::set_dont_fragment(fd());
    if (client_ && settings_.connected) socket_.connect(server_);
    if (client_) check_path_mtu();
  } catch (const std::runtime_error& error) {  // a system_error, or the kernel refused -S
    spdlog::error("UDP flow {}: {}", settings_.stream + 1, error.what());
    finish(true);
    return false;
  }
  if (std::string refused = net::enable_drop_counts(fd()); !refused.empty() && FastPaths::first(paths_.drops_unknown))
    spdlog::warn("{}: the receiving socket's own drops cannot be told from loss", refused);
  return true;
}

void UdpFlow::say_hello(unsigned tries_left) {
  if (closed_ || finished_ || running_) return;
  if (tries_left == 0) {
    spdlog::error("UDP flow {}: the server did not answer its hello on UDP port {} within 5 s (is UDP blocked on "
                  "the way?)",
                  settings_.stream + 1, server_.port());
    finish(true);
    return;
  }
  unsigned char hello[kHelloSize];
  write_hello({settings_.test_id, settings_.stream}, false, hello);
  // A lost hello or a refused port (ICMP) is answered by the next try.
  (void)::sendto(fd(), hello, sizeof(hello), MSG_DONTWAIT, settings_.connected ? nullptr : server_.data(),
                 settings_.connected ? 0 : static_cast<socklen_t>(server_.size()));
  timer_.expires_after(kHelloRetry);
  timer_.async_wait([this, tries_left](const asio::error_code& error) {
    if (error || running_ || finished_ || closed_) return;
    asio::error_code ignored;
    socket_.cancel(ignored);
    say_hello(tries_left - 1);
  });
  await_answer(tries_left);
}

void UdpFlow::await_answer(unsigned tries_left) {
  socket_.async_wait(udp::socket::wait_read, [this, tries_left](const asio::error_code& error) {
    if (error || running_ || finished_ || closed_) return;
    unsigned char answer[kTestioHeader];
    for (;;) {
      udp::endpoint from;
      socklen_t from_size = static_cast<socklen_t>(from.capacity());
      // MSG_TRUNC: the datagram's whole size, though only its header is read.
      const ssize_t size = ::recvfrom(fd(), answer, sizeof(answer), MSG_DONTWAIT | MSG_TRUNC, from.data(), &from_size);
      if (size < 0) break;  // EAGAIN, or a refused hello's ICMP: wait on
      if (!settings_.connected && from != server_) continue;  // not the server's
      std::optional<FlowHello> hello = read_hello(answer, static_cast<std::size_t>(size), true);
      const bool answered = hello && hello->test_id == settings_.test_id && hello->stream == settings_.stream;
      if (answered || take_early(answer, static_cast<std::size_t>(size))) {
        running_ = true;
        timer_.cancel();
        run();
        return;
      }
    }
    await_answer(tries_left);
  });
}

// A timed flow gives its peer the window and a grace beyond it; a counted one waits for the end
// of the test (end_window) or, receiving, for a quiet spell.
void UdpFlow::watch_for_peer() {
  if (clock_.deadline == engines::Clock::time_point::max()) return;
  watchdog_.expires_at(clock_.deadline + kPeerGrace);
  watchdog_.async_wait([this](const asio::error_code& error) {
    if (error || finished_ || closed_) return;
    if (!running_) spdlog::warn("UDP flow {}: its peer never came", settings_.stream + 1);
    overdue();
  });
}

void UdpFlow::end_window() noexcept {
  window_closed_ = true;
  if (!running_ && !client_ && !finished_) {
    finish(true);  // the client is done and this flow's hello never came
    return;
  }
  if (running_) window_ended();
}

void UdpFlow::overdue() { finish(!running_); }

void UdpFlow::finish(bool failed) {
  if (finished_) return;
  finished_ = true;
  timer_.cancel();
  watchdog_.cancel();
  engines::report_finished(counters_, failed, done_);
}

void UdpFlow::close() noexcept {
  closed_ = true;
  timer_.cancel();
  watchdog_.cancel();
  asio::error_code ignored;
  socket_.close(ignored);
}

double UdpFlow::seconds_since_start() const noexcept {
  return std::chrono::duration<double>(engines::Clock::now() - clock_.start).count();
}

}  // namespace testio::workloads::udp
