// --engine uring: one io_uring per worker carrying all of that worker's connections (UringLoop),
// and the bulk streams that submit to it (UringSender, UringReceiver) (docs/engines.md). The
// worker's ring of provided buffers is uring_buffers.cpp's.
//
// uring_loop.hpp first: it includes the kernel's uapi header before liburing's own copy, which
// names IORING_SEND_ZC_REPORT_USAGE; whichever comes first wins (both guard on one name).
#include "engines/uring_loop.hpp"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <asio/ip/tcp.hpp>

#include "util/log.hpp"

#include "engines/blocking_socket.hpp"
#include "engines/uring_bulk.hpp"
#include "engines/worker.hpp"

namespace testio::engines {

class UringSender final : public StreamTask, public UringStream {
 public:
  // `parts.source.mode` is send or zerocopy (sendfile is refused with this engine). Registers
  // with `loop`, which starts it.
  UringSender(asio::ip::tcp::socket socket, SenderParts parts, UringLoop& loop);

  void begin(const TestClock&) override {}  // the loop starts it, after every stream's begin()
  void close() noexcept override;

  void start(const TestClock& clock) override;
  void complete(const io_uring_cqe& completion) override;
  void window_ended() override;
  void abort() override;
  void resume() override {
    if (!finished_) send_next();  // it may have ended while paused
  }

 private:
  void send_next();
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  SenderParts parts_;
  UringLoop& loop_;
  TestClock clock_;
  std::size_t queued_size_ = 0;   // what the queued send asked for
  bool socket_was_full_ = false;  // the last send was short
  bool sending_ = false;  // a send is queued (otherwise, before the end, it is paused for its pace)
  bool window_over_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};

// recv_into into the worker's buffer (which nothing reads) keeps one multishot receive queued for
// the whole test, into the worker's provided-buffer ring (UringLoop::multishot_receives says when
// the kernel can); every other receive mode, and an older kernel, queues one receive per completion.
class UringReceiver final : public StreamTask, public UringStream {
 public:
  UringReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, UringLoop& loop);

  void begin(const TestClock&) override {}
  void close() noexcept override;

  void start(const TestClock& clock) override;
  void complete(const io_uring_cqe& completion) override;
  void abort() override;

 private:
  void receive_next();
  void receive_many();
  void complete_many(const io_uring_cqe& completion);
  void finish(bool failed);

  asio::ip::tcp::socket socket_;
  ReceiverParts parts_;
  UringLoop& loop_;
  TestClock clock_;
  ProvidedBuffers* buffers_ = nullptr;  // the loop's, while receiving multishot
  bool received_multishot_ = false;      // the queued multishot receive has brought bytes
  bool receiving_ = false;
  bool aborting_ = false;
  bool finished_ = false;
};
namespace {

// Room for every stream's operation and a cancel beside it, up to 2,048 streams a worker, and a
// completion queue (twice as long) that a round of every stream's completions cannot overflow: at
// 1,024 connections the 256 entries this was overflowed the completion queue into the kernel's
// slow list and submitted in pieces, and 4,096 took uring from 32.4 to 41.9 Gbit/s (medians of 5,
// loopback; docs/engines.md). The rings hold 4,096 64-byte entries and 8,192 16-byte completions:
// some 400 KiB per worker.
constexpr unsigned kRingEntries = 4096;
// After an abort, how long the loop waits for cancelled operations before it leaves the rest to
// the ring's teardown.
constexpr auto kAbortDrainLimit = std::chrono::seconds(2);
// Entries of the provided-buffer ring (16 bytes each: 256 KiB). Completions give back what they
// used as the loop handles them, so the ring runs dry only when the kernel fills more than this
// many within one wait; a receive that finds it dry ends (ENOBUFS) and is queued again. At 1,024
// connections 4,096 entries ran dry in 4% of completions, 16,384 in fewer than 1 in 300.
constexpr unsigned kReceiveBufferEntries = 16384;
// IORING_FEAT_RECVSEND_BUNDLE (Linux 6.10), newer than the headers Debian 12 builds with.
constexpr unsigned kFeatureBundles = 1U << 14;
// The worker's thread is the ring's one submitter, and the kernel runs the ring's completion work
// only when that thread waits in io_uring_enter (Linux 6.1), not whenever it returns from a system
// call: a multishot receive then does its work in the loop's waits, which end when a completion is
// there, instead of draining sockets for as long as data keeps coming. The ring starts disabled,
// so the thread that enables it in run() becomes that submitter.
constexpr unsigned kDeferredFlags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED;

std::string setup_failure(int error) {
  return "io_uring cannot be set up on this host (" + std::string(std::strerror(error)) +
         "; kernel.io_uring_disabled or a seccomp filter may forbid it)";
}

constexpr const char* kOtherEngines = "use --engine asio or threads";

// A send or receive that moved nothing and may simply be tried again. After 128 poll wake-ups
// without progress (APOLL_MAX_RETRY: 4,096 connections under TCP memory pressure, say) the kernel
// hands an operation to its io-wq threads, and on a socket in non-blocking mode (which Asio leaves
// set) that ends it with -EAGAIN. A fresh operation waits for room again; the count stays exact.
bool moved_nothing_yet(int result) noexcept { return result == -EAGAIN || result == -EINTR; }

}  // namespace

UringLoop::UringLoop() {
  io_uring_params params{};
  params.flags = kDeferredFlags;
  int result = io_uring_queue_init_params(kRingEntries, &ring_, &params);
  if (result == -EINVAL) {  // before Linux 6.1: completions run whenever the thread returns to user space
    params = io_uring_params{};
    result = io_uring_queue_init_params(kRingEntries, &ring_, &params);
  }
  if (result < 0) throw std::runtime_error(setup_failure(-result) + ": " + kOtherEngines);
  features_ = params.features;
  deferred_ = params.flags & IORING_SETUP_DEFER_TASKRUN;
  disabled_ = params.flags & IORING_SETUP_R_DISABLED;
}

UringLoop::~UringLoop() {
  receive_buffers_.reset();  // unregistered while the ring is open
  io_uring_queue_exit(&ring_);
}

ProvidedBuffers* UringLoop::receive_buffers(char* memory, std::size_t size) {
  if (receive_buffers_)
    return receive_buffers_->memory() == memory && receive_buffers_->size() == size ? receive_buffers_.get() : nullptr;
  if (!multishot_receives_) return nullptr;
  if (!deferred_) {
    no_multishot_receives("this kernel cannot defer a ring's completion work (Linux 6.1 can)");
    return nullptr;
  }
  if (!(features_ & kFeatureBundles)) {
    no_multishot_receives("this kernel's receives take no bundles (Linux 6.10's do)");
    return nullptr;
  }
  try {
    receive_buffers_ = std::make_unique<ProvidedBuffers>(ring_, memory, size, kReceiveBufferEntries);
  } catch (const std::system_error& refused) {
    const std::string why = "this kernel has no provided-buffer rings (Linux 5.19 has: " + refused.code().message() + ")";
    no_multishot_receives(why.c_str());
    return nullptr;
  }
  return receive_buffers_.get();
}

void UringLoop::no_multishot_receives(const char* why) {
  multishot_receives_ = false;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    util::log_warn("--engine uring: receiving with one operation per completion: {}", why);
}

io_uring_sqe& UringLoop::next_entry() {
  io_uring_sqe* entry = io_uring_get_sqe(&ring_);
  while (!entry) {  // the submission queue is full: hand it to the kernel and take a fresh entry
    io_uring_submit(&ring_);
    entry = io_uring_get_sqe(&ring_);
  }
  return *entry;
}

io_uring_sqe& UringLoop::queue(UringStream& stream) {
  io_uring_sqe& entry = next_entry();
  io_uring_sqe_set_data(&entry, &stream);
  ++in_flight_;
  return entry;
}

void UringLoop::cancel(UringStream& stream) {
  io_uring_sqe& entry = next_entry();
  io_uring_prep_cancel(&entry, &stream, 0);
  io_uring_sqe_set_data(&entry, nullptr);  // its own completion goes to no stream
  ++in_flight_;
}

void UringLoop::pause(UringStream& stream, Clock::time_point until) noexcept {
  stream.paused_until_ = until;
  ++paused_;
}

Clock::time_point UringLoop::resume_due(Clock::time_point now, Clock::time_point wake) {
  if (paused_ == 0) return wake;
  for (UringStream* stream : streams_) {
    const Clock::time_point until = stream->paused_until_;
    if (until == Clock::time_point::max()) continue;
    if (until > now) {
      wake = std::min(wake, until);
      continue;
    }
    stream->paused_until_ = Clock::time_point::max();
    --paused_;
    stream->resume();
  }
  return wake;
}

void UringLoop::complete_some(Clock::duration limit) {
  const auto nanos = std::max<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count(), 0);
  __kernel_timespec timeout{nanos / 1'000'000'000, nanos % 1'000'000'000};
  io_uring_cqe* first = nullptr;
  // Submits what the streams queued and waits in one system call.
  io_uring_submit_and_wait_timeout(&ring_, &first, 1, &timeout, nullptr);
  unsigned head = 0;
  unsigned seen = 0;
  io_uring_cqe* completion = nullptr;
  io_uring_for_each_cqe(&ring_, head, completion) {
    ++seen;
    if (!(completion->flags & IORING_CQE_F_MORE)) --in_flight_;
    if (auto* stream = static_cast<UringStream*>(io_uring_cqe_get_data(completion))) stream->complete(*completion);
  }
  io_uring_cq_advance(&ring_, seen);
}

void UringLoop::run(const TestClock& clock, const BlockingSignals& signals) {
  // io_uring_enable_rings(), which Debian 12's liburing 2.3 declares but does not export.
  if (disabled_) {
    if (syscall(__NR_io_uring_register, ring_.ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0) < 0)
      throw std::system_error(errno, std::generic_category(), "enabling the worker's io_uring");
    disabled_ = false;
  }
  active_ = streams_.size();
  for (UringStream* stream : streams_) stream->start(clock);
  bool window_over = false;
  bool aborting = false;
  Clock::time_point abort_limit = Clock::time_point::max();
  while (active_ > 0 || in_flight_ > 0) {
    const Clock::time_point now = Clock::now();
    if (!aborting && signals.aborted.load(std::memory_order_relaxed)) {
      aborting = true;
      abort_limit = now + kAbortDrainLimit;
      for (UringStream* stream : streams_) stream->abort();
    }
    if (now >= abort_limit) break;  // closing the ring cancels whatever is left
    if (!window_over && (signals.window_closed.load(std::memory_order_relaxed) || now >= clock.deadline)) {
      window_over = true;
      for (UringStream* stream : streams_) stream->window_ended();
    }
    Clock::time_point wake = now + kBlockingCallLimit;
    if (!window_over) wake = std::min(wake, clock.deadline);
    wake = resume_due(now, wake);
    complete_some(wake - Clock::now());
  }
}

UringRefusal uring_refusal(bool zerocopy) {
  io_uring ring;
  if (int result = io_uring_queue_init(2, &ring, 0); result < 0) return {setup_failure(-result), kOtherEngines};
  UringRefusal refusal;
  if (zerocopy) {
    io_uring_probe* probe = io_uring_get_probe_ring(&ring);
    if (!probe || !io_uring_opcode_supported(probe, IORING_OP_SEND_ZC))
      refusal = {"this kernel's io_uring has no zero-copy send (IORING_OP_SEND_ZC, Linux 6.0)",
                 "use --send-mode send or --engine asio or threads"};
    if (probe) io_uring_free_probe(probe);
  }
  io_uring_queue_exit(&ring);
  return refusal;
}

namespace {

// IORING_RECVSEND_BUNDLE (Linux 6.10: one receive completion spans several buffers), newer than
// the headers Debian 12 builds with.
constexpr unsigned kRecvSendBundle = 1U << 4;
// The size of each provided buffer. A pass takes up to -l bytes, a bundle of these, every one the
// same 64 KiB of the worker's buffer, which stays in the core's cache: measured against entries
// of -l (2 MiB), 32 connections 57.2 -> 62.4 Gbit/s and 0.079 -> 0.061 receiver CPU-s/GB
// (docs/engines.md).
constexpr std::size_t kBundleEntry = 64 * 1024;

}  // namespace

UringSender::UringSender(asio::ip::tcp::socket socket, SenderParts parts, UringLoop& loop)
    : socket_(std::move(socket)), parts_(std::move(parts)), loop_(loop) {
  loop_.add(*this);
}

void UringSender::start(const TestClock& clock) {
  clock_ = clock;
  send_next();
}

void UringSender::send_next() {
  const std::size_t size = parts_.cursor.next_size();
  queued_size_ = size;
  io_uring_sqe& entry = loop_.queue(*this);
  if (parts_.source.mode == spec::SendMode::zerocopy) {
#ifdef IORING_SEND_ZC_REPORT_USAGE
    // The notification then says whether the kernel copied after all (it does on loopback).
    io_uring_prep_send_zc(&entry, socket_.native_handle(), parts_.next_data(), size, MSG_NOSIGNAL,
                          IORING_SEND_ZC_REPORT_USAGE);
#else
    io_uring_prep_send_zc(&entry, socket_.native_handle(), parts_.next_data(), size, MSG_NOSIGNAL, 0);
#endif
  } else {
    io_uring_prep_send(&entry, socket_.native_handle(), parts_.next_data(), size, MSG_NOSIGNAL);
  }
  // Each send waits for room in its socket before its first try, unless it is paced (a paced send
  // finds the buffer nearly empty) and the last was not short. Tried inline, a round of sends
  // copies them all inside one io_uring_enter, far beyond the caches, while the sockets are
  // mostly full; polling first sends each as its socket drains, as epoll does. 1,024 connections
  // 46.4 -> 54.6 Gbit/s (medians of 5; asio 55.9), level at 1 and 32 (docs/engines.md).
  if (loop_.polls_first() && (socket_was_full_ || parts_.pacing.rate_bps <= 0))
    entry.ioprio |= IORING_RECVSEND_POLL_FIRST;
  sending_ = true;
}

void UringSender::complete(const io_uring_cqe& completion) {
  if (completion.flags & IORING_CQE_F_NOTIF) {
    // A zero-copy send's notification: the kernel is done with its bytes.
#ifdef IORING_NOTIF_USAGE_ZC_COPIED
    const bool copied = static_cast<std::uint32_t>(completion.res) & IORING_NOTIF_USAGE_ZC_COPIED;
#else
    const bool copied = false;  // these headers cannot ask
#endif
    parts_.counters->record_zerocopy(1, copied ? 1 : 0);
    return;
  }
  sending_ = false;
  if (finished_) return;
  if (completion.res <= 0) {
    if (moved_nothing_yet(completion.res) && !aborting_ && !window_over_) {
      socket_was_full_ = true;  // the next send polls first
      send_next();
      return;
    }
    // Cancelled at the window's end, or given up as it came: the send handed the kernel nothing,
    // so the count is exact.
    const bool nothing_at_the_end =
        window_over_ && (completion.res == -ECANCELED || moved_nothing_yet(completion.res));
    finish(aborting_ || !nothing_at_the_end);
    return;
  }
  const Clock::time_point now = Clock::now();
  socket_was_full_ = static_cast<std::size_t>(completion.res) < queued_size_;
  parts_.took(socket_.native_handle(), static_cast<std::size_t>(completion.res), clock_.since_start(now));
  if (aborting_ || parts_.cursor.quota_sent() || window_over_ || now >= clock_.deadline) {
    finish(aborting_);
    return;
  }
  if (parts_.pacing.rate_bps > 0) {
    const Clock::time_point due = parts_.pacing.due(clock_.start, parts_.cursor.sent());
    if (due > now) {
      loop_.pause(*this, due);
      return;
    }
  }
  send_next();
}

void UringSender::window_ended() {
  if (finished_) return;
  window_over_ = true;
  if (sending_)
    loop_.cancel(*this);  // its completion ends the stream
  else
    finish(false);  // paused for its pace
}

void UringSender::abort() {
  if (finished_) return;
  aborting_ = true;
  if (sending_)
    loop_.cancel(*this);
  else
    finish(true);
}

void UringSender::finish(bool failed) {
  finished_ = true;
  loop_.stream_ended();
  parts_.finish(socket_.native_handle(), failed);
}

void UringSender::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

UringReceiver::UringReceiver(asio::ip::tcp::socket socket, ReceiverParts parts, UringLoop& loop)
    : socket_(std::move(socket)), parts_(std::move(parts)), loop_(loop) {
  loop_.add(*this);
}

void UringReceiver::start(const TestClock& clock) {
  clock_ = clock;
  if (parts_.mode() == spec::RecvMode::recv_into && parts_.scratch() && parts_.next_buffer() == parts_.scratch())
    buffers_ = loop_.receive_buffers(parts_.scratch(), std::min(parts_.buffer_size(), kBundleEntry));
  if (buffers_)
    receive_many();
  else
    receive_next();
}

void UringReceiver::receive_many() {
  io_uring_sqe& entry = loop_.queue(*this);
  // The length caps what one pass takes before the kernel moves on to the worker's other sockets
  // (Linux 6.17; a bundle only): without it a pass drains its socket 32 times over while data comes.
  io_uring_prep_recv(&entry, socket_.native_handle(), nullptr, static_cast<std::uint32_t>(parts_.buffer_size()), 0);
  entry.ioprio |= IORING_RECV_MULTISHOT | kRecvSendBundle;
  entry.flags |= IOSQE_BUFFER_SELECT;
  entry.buf_group = ProvidedBuffers::kGroup;
  receiving_ = true;
  received_multishot_ = false;
}

void UringReceiver::complete_many(const io_uring_cqe& completion) {
  if (completion.flags & IORING_CQE_F_BUFFER) buffers_->give_back(completion.res);
  const bool more = completion.flags & IORING_CQE_F_MORE;
  if (!more) receiving_ = false;
  if (finished_) return;
  if (completion.res > 0) {
    received_multishot_ = true;
    parts_.took(socket_.native_handle(), static_cast<std::size_t>(completion.res), clock_.since_start(Clock::now()));
    if (aborting_)
      finish(true);
    else if (!more)
      receive_many();  // the kernel ended it (its completion queue was full, say): queue it again
    return;
  }
  if (more) return;
  if (aborting_) {
    finish(true);
    return;
  }
  if (completion.res == -ENOBUFS || moved_nothing_yet(completion.res)) {
    receive_many();  // the buffer ring ran dry within one wait (the completions gave them back), or try again
    return;
  }
  if (completion.res == -EINVAL && !received_multishot_) {
    // Before Linux 6.17 a multishot receive takes no length: this worker receives one at a time.
    loop_.no_multishot_receives("this kernel cannot cap what a multishot receive takes per pass (Linux 6.17 can)");
    buffers_ = nullptr;
    receive_next();
    return;
  }
  finish(completion.res < 0);  // 0: EOF, the sender half-closed after its last byte
}

void UringReceiver::receive_next() {
  io_uring_prep_recv(&loop_.queue(*this), socket_.native_handle(), parts_.next_buffer(), parts_.read_size(),
                     parts_.flags());
  receiving_ = true;
}

void UringReceiver::complete(const io_uring_cqe& completion) {
  if (buffers_) {
    complete_many(completion);
    return;
  }
  receiving_ = false;
  if (finished_) return;
  if (moved_nothing_yet(completion.res) && !aborting_) {
    receive_next();
    return;
  }
  if (completion.res <= 0) {
    finish(completion.res < 0 || aborting_);  // 0: EOF, the sender half-closed after its last byte
    return;
  }
  parts_.took(socket_.native_handle(), static_cast<std::size_t>(completion.res), clock_.since_start(Clock::now()));
  if (aborting_)
    finish(true);
  else
    receive_next();
}

void UringReceiver::abort() {
  if (finished_) return;
  aborting_ = true;
  if (receiving_)
    loop_.cancel(*this);
  else
    finish(true);
}

void UringReceiver::finish(bool failed) {
  finished_ = true;
  loop_.stream_ended();
  parts_.finish(failed);
}

void UringReceiver::close() noexcept {
  asio::error_code ignored;
  socket_.close(ignored);
}

namespace {

// The worker's io_uring loop, made with its first uring stream (only this engine sets a loop).
UringLoop& uring_loop_of(Worker& worker) {
  if (!worker.loop()) worker.set_loop(std::make_unique<UringLoop>());
  return static_cast<UringLoop&>(*worker.loop());
}

}  // namespace

std::unique_ptr<StreamTask> make_uring_sender(asio::ip::tcp::socket socket, SenderParts parts, Worker& worker) {
  return std::make_unique<UringSender>(std::move(socket), std::move(parts), uring_loop_of(worker));
}

std::unique_ptr<StreamTask> make_uring_receiver(asio::ip::tcp::socket socket, ReceiverParts parts, Worker& worker) {
  return std::make_unique<UringReceiver>(std::move(socket), std::move(parts), uring_loop_of(worker));
}

}  // namespace testio::engines
