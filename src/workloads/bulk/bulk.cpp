#include "engines/worker.hpp"
#include "workloads/bulk/bulk.hpp"

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include <asio/ip/tcp.hpp>

#include "engines/bulk_streams.hpp"
#include "engines/rate_following_mark.hpp"
#include "engines/send_source.hpp"
#include "stats/summary.hpp"
#include "util/log.hpp"
#include "util/pattern.hpp"
#include "util/unique_fd.hpp"
#include "workloads/workload.hpp"

namespace testio::workloads::bulk {
namespace {

using asio::ip::tcp;

[[noreturn]] void refuse(const std::string& sentence) { throw spec::SpecError(sentence); }

// One side's senders and receivers. Owner: the lifecycle, on the control thread; the streams it
// makes belong to their workers.
class BulkSide final : public TestSide {
 public:
  BulkSide(Side side, const spec::TestSpec& spec, Options options, std::optional<util::MappedFile> file = {})
      : side_(side),
        spec_(spec),
        options_(options),
        layout_(DirectionLayout::of(spec.direction, spec.connections)),
        file_(std::move(file)),
        send_mode_(spec.send_mode) {
    const bool sends = (layout_.forward && layout_.sends(side, true)) || (layout_.reverse && layout_.sends(side, false));
    if (sends && send_mode_ == spec::SendMode::sendfile)
      send_file_ = engines::open_send_file(file_ ? file_->path() : std::string(), spec.buffer, spec.repeating_payload);
  }

  DirectionLayout layout() const override { return layout_; }

  std::unique_ptr<engines::StreamTask> make_stream(StreamPlace place, std::optional<tcp::socket> socket) override {
    if (layout_.sends_on(side_, place.index)) return make_sender(place, std::move(*socket));
    return make_receiver(place, std::move(*socket));
  }

  void describe_start(report::StartInfo& start) const override { start.spec.send_mode = send_mode_; }

  std::string failure(const report::TestReport& report) const override {
    if (!file_ || options_.peer_is_plain || report.digests.matches()) return {};
    return "the " + report.digests.hash + " digests of what was sent and what the server received differ";
  }

 private:
  std::unique_ptr<engines::StreamTask> make_sender(StreamPlace& place, tcp::socket socket);
  std::unique_ptr<engines::StreamTask> make_receiver(StreamPlace& place, tcp::socket socket);
  // The generated block a worker's senders share (read only): made with the worker's first sender.
  const char* payload_for(const engines::Worker& worker);

  Side side_;
  spec::TestSpec spec_;
  Options options_;
  DirectionLayout layout_;
  std::optional<util::MappedFile> file_;  // client, -F: each sender sends its contiguous part
  util::UniqueFd send_file_;              // --send-mode sendfile: the -F file or a memfd of the block
  spec::SendMode send_mode_;              // as used: zerocopy falls back to send where refused
  std::vector<util::PageBuffer> payloads_;  // by worker index
};

const char* BulkSide::payload_for(const engines::Worker& worker) {
  if (payloads_.size() <= worker.index()) payloads_.resize(worker.index() + 1);
  util::PageBuffer& payload = payloads_[worker.index()];
  if (!payload) payload = util::make_pattern(spec_.buffer, spec_.repeating_payload);
  return payload.data();
}

std::unique_ptr<engines::StreamTask> BulkSide::make_sender(StreamPlace& place, tcp::socket socket) {
  const bool forward = layout_.is_forward(place.index);
  const std::uint32_t senders = layout_.count(forward), k = layout_.index_in_direction(place.index);
  if (send_mode_ == spec::SendMode::zerocopy && !engines::enable_zerocopy(socket.native_handle())) {
    util::log_warn("SO_ZEROCOPY is not supported here ({}): sending by copy", std::strerror(errno));
    send_mode_ = spec::SendMode::send;
  }
  const std::uint64_t part = stats::share_of_total(spec_.total_bytes, senders, k);
  const std::uint64_t offset = file_ ? stats::offset_of_share(spec_.total_bytes, senders, k) : 0;
  engines::SenderSpec sender;
  sender.payload = file_ ? file_->data() + offset : payload_for(place.worker);
  sender.payload_size = file_ ? static_cast<std::size_t>(part) : static_cast<std::size_t>(spec_.buffer);
  sender.pacing = engines::SendPacing{spec_.rate_bps};
  sender.chunk = sender.pacing.chunk(spec_.buffer);
  sender.quota = part;
  sender.follow_rate = spec_.marks_follow_rate;
  sender.await_peer_close = options_.peer_is_plain;
  if (file_ || (options_.peer_is_plain && spec_.hash != util::HashKind::none))
    sender.digest.emplace(engines::StreamDigest{util::Digest(spec_.hash), place.digest});
  sender.source = engines::SendSource{send_mode_, send_file_.get(), offset};
  return engines::make_sender(place.worker, spec_.engine, std::move(socket), place.counters, std::move(sender),
                              std::move(place.done));
}

std::unique_ptr<engines::StreamTask> BulkSide::make_receiver(StreamPlace& place, tcp::socket socket) {
  engines::ReceiverSpec receiver{spec_.recv_mode, static_cast<std::size_t>(spec_.buffer), std::nullopt,
                                 options_.data_end_with_eof && spec_.marks_follow_rate &&
                                     engines::receivers_batch_wakeups(layout_.total(), place.workers)};
  // Only the forward direction is ever hashed (-F), so only the server's receivers hash.
  if (spec_.hash != util::HashKind::none)
    receiver.digest.emplace(engines::StreamDigest{util::Digest(spec_.hash), place.digest});
  return engines::make_receiver(place.worker, spec_.engine, std::move(socket), place.counters, std::move(receiver),
                                std::move(place.done));
}

class Bulk final : public Workload {
 public:
  void check(const spec::TestSpec& spec, const spec::Limits&) const override {
    if (!spec.timed() && spec.total_bytes == 0) refuse("-t must be more than 0 seconds");
    if (spec.timed() && spec.total_bytes) refuse("-t and -n exclude each other: give a time or a byte count");
    if (spec.hash != util::HashKind::none && spec.direction != spec::Direction::forward)
      refuse("-R and --bidir do not go with -F: the file is what the client sends, and only forward");
  }

  std::unique_ptr<TestSide> client(const config::Config& config, spec::TestSpec& spec) const override {
    Options options;
    options.peer_is_plain = config.raw;
    return make_client_side(config, spec, options);
  }

  std::unique_ptr<TestSide> server(const spec::TestSpec& spec, const ServerResources&) const override {
    return std::make_unique<BulkSide>(Side::server, spec, Options{});
  }
};

}  // namespace

const Workload& workload() {
  static const Bulk bulk;
  return bulk;
}

std::unique_ptr<TestSide> make_side(Side side, const spec::TestSpec& spec, Options options) {
  return std::make_unique<BulkSide>(side, spec, options);
}

std::unique_ptr<TestSide> make_client_side(const config::Config& config, spec::TestSpec& spec, Options options) {
  std::optional<util::MappedFile> file;
  if (!config.file.empty()) {
    file.emplace(config.file);
    if (file->size() < spec.connections)
      throw std::runtime_error(config.file + " has " + std::to_string(file->size()) +
                               " bytes: fewer than one per connection");
    spec.total_bytes = file->size();
    spec.duration_s = 0;
  }
  return std::make_unique<BulkSide>(Side::client, spec, options, std::move(file));
}

}  // namespace testio::workloads::bulk
