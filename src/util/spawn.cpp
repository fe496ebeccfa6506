#include "util/spawn.hpp"
#include "util/mapped_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace testio::util {

namespace {

// Async-signal-safe only: the forked child of a process that may have other threads.
[[noreturn]] void become_child(const char* binary, char* const* argv, const ChildFiles& files, pid_t parent,
                               int report) {
  // Dies with its parent, even one killed with SIGKILL; and if the parent is already gone (it
  // died between fork and here, so the death signal was never armed for it), dies now.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  report = ::fcntl(report, F_DUPFD_CLOEXEC, 10);  // out of the way of 0-3
  const int null = ::open("/dev/null", O_RDWR);
  if (report < 0 || null < 0 || ::dup2(null, 0) < 0 || ::dup2(files.out >= 0 ? files.out : null, 1) < 0 ||
      ::dup2(files.err >= 0 ? files.err : null, 2) < 0 || (files.extra >= 0 && ::dup2(files.extra, 3) < 0))
    ::_exit(127);
  // Nothing else of the parent's: under mpirun a child holding MPI's sockets keeps a dead rank
  // looking alive to its daemon, and the whole job's MPI_Finalize waits for it.
  const unsigned first = files.extra >= 0 ? 4 : 3;
  ::syscall(SYS_close_range, first, static_cast<unsigned>(report) - 1, 0);
  ::syscall(SYS_close_range, static_cast<unsigned>(report) + 1, ~0U, 0);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // a thread's blocked signals are not the child's
  ::execve(binary, argv, environ);
  const int error = errno;
  [[maybe_unused]] const ssize_t told = ::write(report, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

pid_t spawn_process(const std::string& binary, const std::vector<std::string>& args, const ChildFiles& files) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int report[2];  // the child's exec error, if any; closed by a successful exec
  if (::pipe2(report, O_CLOEXEC) != 0) return -1;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) become_child(binary.c_str(), argv.data(), files, parent, report[1]);
  const int fork_error = errno;
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    errno = fork_error;
    return -1;
  }
  int error = 0;
  ssize_t got = -1;
  while ((got = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof error)) {
    reap_process(pid);
    errno = error;
    return -1;
  }
  return pid;
}

pid_t spawn_process(const std::string& binary, const std::vector<std::string>& args, const std::string& stdout_path,
                    const std::string& stderr_path) {
  const auto open_output = [](const std::string& path) {
    return path.empty() ? -1 : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  };
  ChildFiles files{open_output(stdout_path), open_output(stderr_path), -1};
  const bool opened = (stdout_path.empty() || files.out >= 0) && (stderr_path.empty() || files.err >= 0);
  const pid_t pid = opened ? spawn_process(binary, args, files) : -1;
  const int error = errno;
  for (const int fd : {files.out, files.err})
    if (fd >= 0) ::close(fd);
  errno = error;
  return pid;
}

MemoryFile::MemoryFile(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
}

MemoryFile::~MemoryFile() { ::close(fd_); }

std::string MemoryFile::text() const {
  std::string content;
  char chunk[16384];
  for (off_t at = 0;;) {
    const ssize_t got = ::pread(fd_, chunk, sizeof chunk, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return content;
    content.append(chunk, static_cast<std::size_t>(got));
    at += got;
  }
}

void MemoryFile::write_all(const std::string& content) {
  for (std::size_t at = 0; at < content.size();) {
    const ssize_t put = ::pwrite(fd_, content.data() + at, content.size() - at, static_cast<off_t>(at));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) throw std::system_error(errno, std::generic_category(), "writing a memory file");
    at += static_cast<std::size_t>(put);
  }
}

std::string own_binary() {
  std::vector<char> path(4096);
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) throw std::runtime_error("cannot find this testio's own binary (/proc/self/exe)");
  return std::string(path.data(), static_cast<std::size_t>(n));
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
