// A testio client run as a child process, for a probe: its own process, so a probe's sockets,
// threads and signal handling never touch the exporter, and a stuck one is killed outright.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "net/asio_fwd.hpp"

namespace testio::metrics {

struct ChildEnd {
  bool started = false;
  bool killed_at_deadline = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  std::string start_problem;  // why it could not start
};

// Runs `binary` with `args` (stdin and stdout /dev/null, stderr to `stderr_path`) and waits for it
// on `io` without blocking (a pidfd); at `deadline` it is killed with SIGKILL.
net::Awaitable<ChildEnd> run_child(asio::io_context& io, const std::string& binary,
                                   const std::vector<std::string>& args, const std::string& stderr_path,
                                   std::chrono::steady_clock::duration deadline);

// Kills every child run_child() is waiting for (the exporter is stopping).
void kill_children() noexcept;

}  // namespace testio::metrics
