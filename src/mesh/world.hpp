// What --mesh needs of MPI, and nothing more: who this rank is, how many there are, a barrier,
// everyone's fixed-size record to everyone, and variable-length text to rank 0. One instance per
// process, on the main thread (MPI is initialised without thread support). A build without MPI
// has the same class, whose constructor says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace testio::mesh {

class World {
 public:
  // MPI_Init. Throws std::runtime_error when this testio was built without MPI.
  World();
  ~World();  // MPI_Finalize
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  std::uint32_t rank() const noexcept { return rank_; }
  std::uint32_t size() const noexcept { return size_; }
  void barrier();
  // Every rank's `mine` (at most `width` bytes), in rank order, on every rank.
  std::vector<std::string> all_gather(const std::string& mine, std::size_t width);
  // Every rank's `mine` on rank 0, in rank order; empty on the others.
  std::vector<std::string> gather_to_first(const std::string& mine);

  static bool available() noexcept;

 private:
  std::uint32_t rank_ = 0;
  std::uint32_t size_ = 1;
};

}  // namespace testio::mesh
