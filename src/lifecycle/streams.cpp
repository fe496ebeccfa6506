#include "lifecycle/streams.hpp"

#include <sched.h>

#include <tuple>

#include <asio/experimental/awaitable_operators.hpp>

#include "net/flow_path.hpp"
#include "net/socket_options.hpp"

namespace testio::lifecycle {

using asio::ip::tcp;

namespace {

// The CPUs this process may run on, in order: where --rx-affinity follow pins its workers.
std::vector<std::uint32_t> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<std::uint32_t> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (std::uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

}  // namespace

TestStreams::TestStreams(asio::any_io_executor control, const workloads::DirectionLayout& layout, unsigned threads,
                         const std::vector<std::uint32_t>& cpus, const spec::TestSpec& spec, workloads::Side local)
    : measurement_(layout, spec.interval_s, spec.omit_s, spec.window_s()),
      iface_stats_(spec.iface_stats),
      rx_follow_(spec.rx_follow),
      begins_s_(spec.begins_s),
      ends_s_(spec.ends_s),
      local_(local),
      done_{std::make_shared<engines::CompletionLatch>(control, layout.forward),
            std::make_shared<engines::CompletionLatch>(control, layout.reverse)},
      pool_(threads, spec.rx_follow && cpus.empty() ? allowed_cpus() : cpus) {}

TestStreams::~TestStreams() { pool_.stop(); }

tcp::socket TestStreams::move_to_worker(std::uint32_t i, tcp::socket socket) {
  const tcp protocol = socket.local_endpoint().protocol();  // before release(): argument order is unspecified
  return tcp::socket(worker_for(i).context(), protocol, socket.release());
}

void TestStreams::add(workloads::TestSide& side, std::uint32_t i, std::optional<tcp::socket> socket,
                      const tcp::endpoint& server, const std::array<unsigned char, 24>& preamble,
                      std::uint64_t test_id) {
  engines::Worker* worker = &worker_for(i);
  if (socket) {
    if (i == 0 && iface_stats_)
      measurement_.live().watch_nics(
          net::choose_nics(*iface_stats_, socket->local_endpoint().data(), socket->remote_endpoint().data()));
    // The CPU that processed its handshake is its receive queue's (or RPS's): its data land there too.
    if (rx_follow_ && !layout().sends_on(local_, i))
      if (engines::Worker* on_cpu = pool_.worker_on_cpu(net::read_incoming_cpu(socket->native_handle())))
        worker = on_cpu;
    const tcp protocol = socket->local_endpoint().protocol();
    socket = tcp::socket(worker->context(), protocol, socket->release());
    measurement_.watch_socket(i, socket->native_handle());
  }
  std::shared_ptr<engines::CompletionLatch> latch = done_[layout().is_forward(i) ? 0 : 1];
  if (rx_follow_) measurement_.note_worker_cpu(i, worker->cpu());
  workloads::StreamPlace place{i, first_number_ + i, *worker, pool_.size(), measurement_.counters(i), &measurement_.digest(i),
                               [latch] { latch->count_down(); }, server, preamble, test_id, clock_offset_ns_};
  worker->add_stream(side.make_stream(std::move(place), std::move(socket)));
}

std::string TestStreams::route_flow(workloads::TestSide& side, std::uint32_t i, asio::ip::udp::socket socket) {
  engines::Worker& worker = worker_for(i);
  const asio::ip::udp protocol = socket.local_endpoint().protocol();  // before release()
  return side.route_flow(i, asio::ip::udp::socket(worker.context(), protocol, socket.release()), worker);
}

void TestStreams::begin(const engines::TestClock& clock) {
  measurement_.begin(clock);  // every part's intervals on the test's clock
  pool_.begin(clock.within(begins_s_, ends_s_));
}

asio::awaitable<bool> TestStreams::all_done(std::chrono::steady_clock::duration limit) {
  using namespace asio::experimental::awaitable_operators;
  std::tuple<bool, bool> done = co_await (done_[0]->wait(limit) && done_[1]->wait(limit));
  co_return std::get<0>(done) && std::get<1>(done);
}

}  // namespace testio::lifecycle
