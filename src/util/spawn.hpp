// Child processes: the exporter's probes and the mesh's servers and pair tests are each a testio
// run as a process of its own, so their sockets, threads and signal handling stay apart and a
// stuck one can be killed outright.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace testio::util {

// A child's files: each a descriptor of the parent's, or -1 for /dev/null (`extra`: none).
struct ChildFiles {
  int out = -1;    // its stdout
  int err = -1;    // its stderr
  int extra = -1;  // its descriptor 3, e.g. for `--config /dev/fd/3`
};

// `binary` with `args` as a child that dies with its parent (PR_SET_PDEATHSIG, SIGKILL: a parent
// killed with SIGKILL leaves no child behind; the race with a parent that dies first is checked),
// holding stdin /dev/null, `files`, and no other descriptor of the parent's. Call it from a
// thread that lives as long as the child may: the death signal follows the thread that forked.
// The pid, or -1 with errno (the exec's own, when `binary` cannot run).
pid_t spawn_process(const std::string& binary, const std::vector<std::string>& args, const ChildFiles& files);
// The same with stdout and stderr to the files named (created, truncated; "" is /dev/null).
pid_t spawn_process(const std::string& binary, const std::vector<std::string>& args, const std::string& stdout_path,
                    const std::string& stderr_path);

// An anonymous file (memfd) for what a child writes or reads: nothing on disk to leave behind when
// the parent is killed, gone with its last descriptor. Owner: the thread that made it.
class MemoryFile {
 public:
  // Throws std::system_error. `name` shows in /proc's descriptor links only.
  explicit MemoryFile(const char* name);
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  int fd() const noexcept { return fd_; }
  std::string text() const;                    // all written so far, whoever wrote it
  void write_all(const std::string& content);  // before a child reads it (from its own offset 0)

 private:
  int fd_ = -1;
};

struct ProcessEnd {
  bool killed_at_deadline = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
};

// This process's own binary (/proc/self/exe), to run again as a child. Throws std::runtime_error.
std::string own_binary();

// The last line a testio child wrote on stderr (`text`), without its "testio: error: " prefixes
// and at most 300 bytes: what it said went wrong.
std::string last_complaint(const std::string& text);

// Blocks until `pid` ends, killing it with SIGKILL after `deadline_s` seconds (a pidfd's poll);
// `each_second`, when given, runs once a second while it waits (a mesh rank's "alive" to rank 0).
ProcessEnd wait_for_process(pid_t pid, double deadline_s, const std::function<void()>& each_second = {});
// Reaps `pid` (which has ended, or will) and says how it ended.
ProcessEnd reap_process(pid_t pid);

}  // namespace testio::util
