#include "metrics/child_process.hpp"

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

extern char** environ;

namespace testio::metrics {
namespace {

// The children being waited for; touched only on the exporter's one thread.
std::set<pid_t>& children() {
  static std::set<pid_t> running;
  return running;
}

// posix_spawn, with the three standard descriptors set up; -1 and errno when it fails.
pid_t spawn(const std::string& binary, const std::vector<std::string>& args, const std::string& stderr_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    errno = error;
    return -1;
  }
  return pid;
}

}  // namespace

asio::awaitable<ChildEnd> run_child(asio::io_context& io, const std::string& binary,
                                    const std::vector<std::string>& args, const std::string& stderr_path,
                                    std::chrono::steady_clock::duration deadline) {
  ChildEnd end;
  const pid_t pid = spawn(binary, args, stderr_path);
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
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  children().erase(pid);
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  co_return end;
}

void kill_children() noexcept {
  for (pid_t pid : children()) ::kill(pid, SIGKILL);
}

}  // namespace testio::metrics
