// A workload is what a test does on its data connections: bulk streams, request/response,
// transfers. Each is one unit (a folder here and a line in registry.cpp) that says which rules its
// tests keep, how each side's streams are made, and what it adds to the report. The lifecycles
// in lifecycle/ ask it and never branch on which one runs (docs/architecture.md).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "net/asio_fwd.hpp"
#include "engines/stream_task.hpp"
#include "report/test_report.hpp"
#include "spec/test_spec.hpp"
#include "stats/counters.hpp"
#include "util/mapped_file.hpp"
#include "workloads/layout.hpp"

namespace testio::engines {
class Worker;
}  // namespace testio::engines

namespace testio::workloads {

// Where one stream runs and what it writes to, as the lifecycle hands it over.
struct StreamPlace {
  std::uint32_t index = 0;          // the connection (or transfer slot), 0 .. layout().total() - 1
  std::uint32_t number = 0;         // ... as the peer numbers it: a composed test numbers its
                                    // workloads' connections in a row (a UDP flow's hello names it)
  engines::Worker& worker;          // the stream runs on this worker's thread
  unsigned workers = 1;             // how many workers this side's streams share
  stats::StreamCounters& counters;  // written by the stream, on its worker only
  std::string* digest = nullptr;    // where a hashing stream leaves its hex digest
  engines::StreamDone done;         // the stream calls it once, on its worker, when it has ended
  // Client, for streams that open their own connections: where to, and what each says first.
  const net::TcpEndpoint* server = nullptr;  // valid while make_stream() runs; copy what is kept
  std::array<unsigned char, 24> preamble{};
  std::uint64_t test_id = 0;        // the id the server gave the test (a UDP flow's hello names it)
  std::int64_t clock_offset_ns = 0; // client: the server's clock less this one's (UDP timestamps)
};

// How a test's data connections come about.
enum class Connections {
  before_start,  // the client opens all of them and the server gathers them before the test starts
  during_test,   // each stream opens its own while the test runs; the server routes each to its slot
};

// One test's part of a workload on one side. Made for each test; owned by the lifecycle and used
// on the control thread only (the streams it makes belong to their workers).
class TestSide {
 public:
  virtual ~TestSide() = default;
  virtual DirectionLayout layout() const = 0;
  virtual Connections connections() const { return Connections::before_start; }
  // The stream of connection place.index: on `socket` (already on place.worker's io_context) for
  // Connections::before_start, without one for during_test.
  virtual std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place,
                                                           std::optional<net::TcpSocket> socket) = 0;
  // Server, during_test: a data connection naming `slot` arrived while the test runs; it belongs to
  // `worker`'s io_context (the slot's stream's worker). Empty when taken, else why it was refused.
  virtual std::string route(std::uint32_t slot, net::TcpSocket socket, engines::Worker& worker);
  // Server, during_test: UDP flow `slot` said hello; `socket` (on `worker`'s io_context) is bound to
  // this server's port and connected to the flow's client. Empty when taken, else why refused.
  virtual std::string route_flow(std::uint32_t slot, net::UdpSocket socket, engines::Worker& worker);
  // This side's report beyond the streams' figures: at the start (what the streams really use),
  // and once they have ended.
  virtual void describe_start(report::StartInfo& start) const;
  virtual void add_to_report(report::TestReport& report) const;
  // Its own figures of an interval as it closes (IntervalRecord::figures), for the live reports;
  // the control thread.
  virtual void annotate(stats::IntervalRecord&) {}
  // Client: why a test whose streams all ended cleanly still failed its purpose (transfers that
  // did not complete, digests that differ), in one sentence; empty when it did not.
  virtual std::string failure(const report::TestReport& report) const;
  // The frame type in which the client sends its figures once its streams are done.
  virtual const char* done_message() const { return "sender_done"; }
};

// What a server has for the tests it serves beyond their spec.
struct ServerResources {
  const util::MappedFile* served_file = nullptr;  // -F: what --transfers download (null: generated data)
  std::uint16_t udp_port = 0;                      // where flows say hello; 0: the server has no UDP port
};

// The refusal of a test that needs the server's UDP port when it has none.
std::string no_udp_port_refusal();

class Workload {
 public:
  virtual ~Workload() = default;
  // The rules this workload's tests keep beyond spec::check_common(); throws spec::SpecError.
  virtual void check(const spec::TestSpec& spec, const spec::Limits& limits) const = 0;
  // The client's part of a test, before anything connects. It may complete `spec` (-F: the byte
  // count is the file's size). Throws std::runtime_error (one sentence) when it cannot run here.
  virtual std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const = 0;
  // The server's part of an accepted request; throws std::runtime_error (one sentence, sent to the
  // client as the refusal) when this server cannot run it.
  virtual std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources& resources) const = 0;
  // What ends its test, in a report's words ("20 transfers of 10 KiB ..."); empty when it is the
  // window (-t) or the byte count (-n).
  virtual std::string extent(const spec::TestSpec&) const { return {}; }
  // Whether `name` is a field of its part of the spec (workloads/part.hpp); a spec with any other
  // setting is refused.
  virtual bool takes_setting(std::string_view) const { return false; }
  // Whether its flows are datagrams rather than byte streams: iperf3's protocol carries them as its
  // UDP test.
  virtual bool datagrams() const { return false; }
  // Whether the peer answers what this side sends (request/response): a plain peer is then an
  // echo server rather than a sink.
  virtual bool answered() const { return false; }
};

// For workloads that run closed loops of their own (rr, transfers): refuses every option that only
// a bulk test's streams take (-R, --bidir, --engine, --send-mode, pacing, --no-lowat, -F). Throws
// spec::SpecError.
void check_no_bulk_options(const spec::TestSpec& spec);
// Downloads (transfers, http): COUNT within its cap, no window, no omit, no bulk options.
void check_download_count(const spec::TestSpec& spec, const spec::Limits& limits);
// --save DIR: throws std::runtime_error (one sentence) unless DIR is a directory this process can
// create files in.
void check_writable_directory(const std::string& dir, const std::string& option = "--save");

}  // namespace testio::workloads
