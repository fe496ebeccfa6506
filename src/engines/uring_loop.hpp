// --engine uring: one io_uring per worker, shared by that worker's streams. The worker runs the
// loop as one blocking job after every stream's begin(): it submits each stream's next operation,
// waits for completions (at most 100 ms at a time, so it sees the worker's BlockingSignals, the
// window's deadline and pacing times), and hands each completion to its stream, until every
// stream has ended and nothing is left in flight. Owner: the Worker. Made by the stream factory
// (whichever thread builds the test) with its ring disabled; run() enables it on the worker's
// thread, which from then on is its only user and the ring's only submitter.
#pragma once

// The kernel's uapi header first when it is newer than liburing's copy: it names
// IORING_SEND_ZC_REPORT_USAGE (Linux 6.2), which says whether a zero-copy send was copied.
#include <linux/io_uring.h>
#include <liburing.h>

#include <memory>
#include <string>
#include <vector>

#include "engines/stream_task.hpp"
#include "engines/uring_buffers.hpp"

namespace testio::engines {

class UringLoop;

// A stream the loop drives. It keeps at most one data operation queued at a time (two sends on
// one TCP socket could complete out of order), and learns of its completions through complete().
class UringStream {
 public:
  virtual ~UringStream() = default;
  // Queues the first operation (the test has started).
  virtual void start(const TestClock& clock) = 0;
  virtual void complete(const io_uring_cqe& completion) = 0;
  // The window ended: a sender stops and half-closes; a receiver reads on to EOF.
  virtual void window_ended() {}
  // The worker is aborting: cancel what is queued and end as failed.
  virtual void abort() = 0;
  // A paced sender's pause (UringLoop::pause) is over.
  virtual void resume() {}

 private:
  friend class UringLoop;
  Clock::time_point paused_until_ = Clock::time_point::max();
};

class UringLoop final : public StreamLoop {
 public:
  // Throws std::runtime_error (one sentence) when this host cannot set up an io_uring.
  UringLoop();
  ~UringLoop() override;
  UringLoop(const UringLoop&) = delete;
  UringLoop& operator=(const UringLoop&) = delete;

  // Before run(); `stream` outlives the loop's run.
  void add(UringStream& stream) { streams_.push_back(&stream); }
  void run(const TestClock& clock, const BlockingSignals& signals) override;

  // For streams: an entry to prepare, tagged as `stream`'s; it counts as in flight until its last
  // completion (a zero-copy send's notification, when its first completion says one follows).
  io_uring_sqe& queue(UringStream& stream);
  // Asks the kernel to cancel `stream`'s queued operation; that operation still completes.
  void cancel(UringStream& stream);
  // Calls stream.resume() at `until` (pacing).
  void pause(UringStream& stream, Clock::time_point until) noexcept;
  // Each stream calls this once, when it has ended.
  void stream_ended() noexcept { --active_; }

  // The worker's provided-buffer ring for multishot receives, every entry `size` bytes at `memory`
  // (registered with the first call). Null, and the receiver queues one receive per completion,
  // when the ring holds other memory or the kernel cannot: it must run completion work only in
  // the loop's waits (Linux 6.1), take bundles (one completion spans several buffers, 6.10) and
  // have buffer rings (5.19), and no receive may have refused a cap (6.17).
  ProvidedBuffers* receive_buffers(char* memory, std::size_t size);
  // Whether operations may ask to wait for readiness first (IORING_RECVSEND_POLL_FIRST, Linux
  // 5.19): a ring that defers its completion work says the kernel is 6.1 or later.
  bool polls_first() const noexcept { return deferred_; }
  // The kernel refused a multishot receive (`why`): from now on receivers queue one receive per
  // completion. Warned about once a process.
  void no_multishot_receives(const char* why);

 private:
  io_uring_sqe& next_entry();
  // Waits up to `limit` for completions and dispatches them.
  void complete_some(Clock::duration limit);
  // Resumes the streams whose pause is over; the earliest pause still running (or `wake`).
  Clock::time_point resume_due(Clock::time_point now, Clock::time_point wake);

  io_uring ring_;
  unsigned features_ = 0;  // IORING_FEAT_* of this kernel
  bool deferred_ = false;  // made with kDeferredFlags
  bool disabled_ = false;  // made disabled, until run() enables it on the worker's thread
  std::unique_ptr<ProvidedBuffers> receive_buffers_;
  bool multishot_receives_ = true;
  std::vector<UringStream*> streams_;
  std::size_t active_ = 0;     // streams not yet ended
  std::size_t in_flight_ = 0;  // operations whose last completion has not come
  std::size_t paused_ = 0;     // streams waiting for resume()
};

}  // namespace testio::engines
