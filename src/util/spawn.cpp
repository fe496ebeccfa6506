#include "util/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace testio::util {

pid_t spawn_process(const std::string& binary, const std::vector<std::string>& args, const std::string& stdout_path,
                    const std::string& stderr_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const int out_flags = O_WRONLY | O_CREAT | O_TRUNC;
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.empty() ? "/dev/null" : stdout_path.c_str(), out_flags, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.empty() ? "/dev/null" : stderr_path.c_str(), out_flags, 0600);
  // Nothing else of the parent's: under mpirun a child holding MPI's sockets keeps a dead rank
  // looking alive to its daemon, and the whole job's MPI_Finalize waits for it.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    errno = error;
    return -1;
  }
  return pid;
}

std::string own_binary() {
  std::vector<char> path(4096);
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) throw std::runtime_error("cannot find this testio's own binary (/proc/self/exe)");
  return std::string(path.data(), static_cast<std::size_t>(n));
}

std::string read_child_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_complaint(const std::string& text) {
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  if (const std::size_t bracket = last.rfind("] "); bracket != std::string::npos) last = last.substr(bracket + 2);
  for (const char* prefix : {"testio: ", "error: "})
    if (last.rfind(prefix, 0) == 0) last = last.substr(std::string(prefix).size());
  return last.substr(0, 300);
}

ProcessEnd reap_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessEnd end;
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  return end;
}

ProcessEnd wait_for_process(pid_t pid, double deadline_s, const std::function<void()>& each_second) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool killed = false;
  if (pidfd >= 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd exited{pidfd, POLLIN, 0};
      const long long wait_ms = std::max<long long>(0, left.count());
      const int ready = ::poll(&exited, 1, static_cast<int>(each_second ? std::min<long long>(wait_ms, 1000) : wait_ms));
      if (ready > 0) break;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0 && wait_ms > 1000 && each_second) {
        each_second();
        continue;
      }
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    ::close(pidfd);
  }
  ProcessEnd end = reap_process(pid);
  end.killed_at_deadline = killed;
  return end;
}

}  // namespace testio::util
