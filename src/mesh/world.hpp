// What --mesh needs of MPI, and nothing more: who this rank is, how many there are, everyone's
// fixed-size record to everyone (once, at the start, when every rank is alive), and text from one
// rank to another that never waits past a limit: the rounds run on those, not on collectives, as
// a collective with a dead rank in it never returns (mpirun --enable-recovery keeps the job when a
// rank dies; tried on Debian's OpenMPI 4.1: MPI_Barrier then hangs, point-to-point to the living
// works). One instance per process, on the main thread (MPI is initialised without thread
// support). A build without MPI has the same class, whose constructor says so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace testio::mesh {

class World {
 public:
  // MPI_Init. Throws std::runtime_error when this testio was built without MPI.
  World();
  ~World();  // MPI_Finalize, unless leave_without_finalize()
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  std::uint32_t rank() const noexcept { return rank_; }
  std::uint32_t size() const noexcept { return size_; }
  // Every rank's `mine` (at most `width` bytes), in rank order, on every rank.
  std::vector<std::string> all_gather(const std::string& mine, std::size_t width);

  struct Message {
    std::uint32_t from = 0;
    std::string text;
  };
  // `text` to rank `to` under `tag`; false when it was not taken within `limit_s` (the peer is
  // dead or stuck). An abandoned send may still go out later, so its text is kept until the end.
  bool send(std::uint32_t to, int tag, std::string text, double limit_s);
  // The next message under `tag` from `from` (any rank when empty), or nothing within `limit_s`.
  std::optional<Message> receive(int tag, std::optional<std::uint32_t> from, double limit_s);

  // After a rank was lost: MPI_Finalize's fence counts the dead rank in and may never end (OpenMPI
  // 4.1.4 under --enable-recovery hung there in 2 runs of 6); such a job's ranks leave without it.
  void leave_without_finalize() noexcept { finalize_ = false; }

  static bool available() noexcept;

 private:
  std::uint32_t rank_ = 0;
  std::uint32_t size_ = 1;
  bool finalize_ = true;
  std::vector<std::unique_ptr<std::string>> abandoned_;  // the texts of sends that did not finish in time
};

}  // namespace testio::mesh
