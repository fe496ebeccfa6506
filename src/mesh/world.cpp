#include "mesh/world.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

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

// Polling MPI (it has no wait with a time limit): first at once, then sleeping 1 ms up to 20 ms
// between looks, so a round's long wait costs no CPU the tests need and a quick answer no delay.
class PollUntil {
 public:
  explicit PollUntil(double limit_s)
      : deadline_(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(limit_s))) {}
  bool again() {
    if (std::chrono::steady_clock::now() >= deadline_) return false;
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, std::chrono::microseconds(20000));
    return true;
  }

 private:
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::microseconds pause_{1000};
};

}  // namespace

bool World::available() noexcept { return true; }

World::World() {
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // An error on a send or receive returns to testio, which decides (a rank that died).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  rank_ = static_cast<std::uint32_t>(rank);
  size_ = static_cast<std::uint32_t>(size);
}

World::~World() {
  if (finalize_) MPI_Finalize();
}

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

bool World::send(std::uint32_t to, int tag, std::string text, double limit_s) {
  // On the heap before MPI sees it: moving a short string would move its bytes.
  auto kept = std::make_unique<std::string>(std::move(text));
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Isend(kept->data(), static_cast<int>(kept->size()), MPI_CHAR, static_cast<int>(to), tag, MPI_COMM_WORLD,
                  &request),
        "MPI_Isend");
  PollUntil poll(limit_s);
  int done = 0;
  while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && poll.again()) {}
  if (done) return true;
  MPI_Request_free(&request);  // MPI may still deliver it, from these bytes: kept
  abandoned_.push_back(std::move(kept));
  return false;
}

std::optional<World::Message> World::receive(int tag, std::optional<std::uint32_t> from, double limit_s) {
  const int source = from ? static_cast<int>(*from) : MPI_ANY_SOURCE;
  PollUntil poll(limit_s);
  int arrived = 0;
  MPI_Status status{};
  while (MPI_Iprobe(source, tag, MPI_COMM_WORLD, &arrived, &status) == MPI_SUCCESS && !arrived && poll.again()) {}
  if (!arrived) return std::nullopt;
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  Message message{static_cast<std::uint32_t>(status.MPI_SOURCE), std::string(static_cast<std::size_t>(length), '\0')};
  check(MPI_Recv(message.text.data(), length, MPI_CHAR, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return message;
}

#else

bool World::available() noexcept { return false; }

World::World() {
  throw std::runtime_error("this testio was built without MPI, so --mesh cannot run: apt-get install libopenmpi-dev "
                           "openmpi-bin, then build it again (meson finds MPI by itself)");
}

World::~World() = default;
std::vector<std::string> World::all_gather(const std::string&, std::size_t) { return {}; }
bool World::send(std::uint32_t, int, std::string, double) { return false; }
std::optional<World::Message> World::receive(int, std::optional<std::uint32_t>, double) { return std::nullopt; }

#endif

}  // namespace testio::mesh
