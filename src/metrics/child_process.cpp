#include "metrics/child_process.hpp"

#include "util/spawn.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

namespace testio::metrics {
namespace {

// The children being waited for; touched only on the exporter's one thread.
std::set<pid_t>& children() {
  static std::set<pid_t> running;
  return running;
}

}  // namespace

asio::awaitable<ChildEnd> run_child(asio::io_context& io, const std::string& binary,
                                    const std::vector<std::string>& args, const std::string& stderr_path,
                                    std::chrono::steady_clock::duration deadline) {
  ChildEnd end;
  const pid_t pid = util::spawn_process(binary, args, "", stderr_path);
  if (pid < 0) {
    end.start_problem = "cannot run " + binary + ": " + std::strerror(errno);
    co_return end;
  }
  end.started = true;
  children().insert(pid);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    // The pidfd turns readable when the child exits; the timer kills it first if it overstays.
    asio::posix::stream_descriptor exited(io, pidfd);
    asio::steady_timer limit(io, deadline);
    limit.async_wait([pid, &end](const asio::error_code& ec) {
      if (ec) return;
      end.killed_at_deadline = true;
      ::kill(pid, SIGKILL);
    });
    asio::error_code ignored;
    co_await exited.async_wait(asio::posix::stream_descriptor::wait_read,
                               asio::redirect_error(asio::use_awaitable, ignored));
    limit.cancel();
  }
  children().erase(pid);
  util::ProcessEnd process = util::reap_process(pid);
  end.exit_code = process.exit_code;
  end.signal = process.signal;
  co_return end;
}

void kill_children() noexcept {
  for (pid_t pid : children()) ::kill(pid, SIGKILL);
}

}  // namespace testio::metrics
