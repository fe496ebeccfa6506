#include "mesh/world.hpp"

#include <stdexcept>

#ifdef TESTIO_HAVE_MPI
// The C API only: OpenMPI's deprecated C++ bindings do not build with -Werror.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace testio::mesh {

#ifdef TESTIO_HAVE_MPI

namespace {

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

}  // namespace

bool World::available() noexcept { return true; }

World::World() {
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_ = static_cast<std::uint32_t>(rank);
  size_ = static_cast<std::uint32_t>(size);
}

World::~World() { MPI_Finalize(); }

void World::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

std::vector<std::string> World::all_gather(const std::string& mine, std::size_t width) {
  std::string padded = mine.substr(0, width);
  padded.resize(width, '\0');
  std::string all(width * size_, '\0');
  check(MPI_Allgather(padded.data(), static_cast<int>(width), MPI_CHAR, all.data(), static_cast<int>(width), MPI_CHAR,
                      MPI_COMM_WORLD),
        "MPI_Allgather");
  std::vector<std::string> records;
  for (std::uint32_t i = 0; i < size_; ++i) {
    std::string record = all.substr(i * width, width);
    record.resize(record.find('\0') == std::string::npos ? width : record.find('\0'));
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<std::string> World::gather_to_first(const std::string& mine) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size_), offsets(size_);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::string all;
  if (rank_ == 0) {
    std::size_t total = 0;
    for (std::uint32_t i = 0; i < size_; ++i) {
      offsets[i] = static_cast<int>(total);
      total += static_cast<std::size_t>(lengths[i]);
    }
    all.resize(total);
  }
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> texts;
  if (rank_ == 0)
    for (std::uint32_t i = 0; i < size_; ++i)
      texts.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  return texts;
}

#else

bool World::available() noexcept { return false; }

World::World() {
  throw std::runtime_error("this testio was built without MPI, so --mesh cannot run: apt-get install libopenmpi-dev "
                           "openmpi-bin, then build it again (meson finds MPI by itself)");
}

World::~World() = default;
void World::barrier() {}
std::vector<std::string> World::all_gather(const std::string&, std::size_t) { return {}; }
std::vector<std::string> World::gather_to_first(const std::string&) { return {}; }

#endif

}  // namespace testio::mesh
