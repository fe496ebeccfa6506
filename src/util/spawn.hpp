// Child processes: the exporter's probes and the mesh's servers and pair tests are each a testio
// run as a process of its own, so their sockets, threads and signal handling stay apart and a
// stuck one can be killed outright.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace testio::util {

// posix_spawn of `binary` with `args`: stdin /dev/null, stdout and stderr to the files named
// (created, truncated; "" is /dev/null). The pid, or -1 with errno.
pid_t spawn_process(const std::string& binary, const std::vector<std::string>& args, const std::string& stdout_path,
                    const std::string& stderr_path);

struct ProcessEnd {
  bool killed_at_deadline = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
};

// This process's own binary (/proc/self/exe), to run again as a child. Throws std::runtime_error.
std::string own_binary();

// A child's file, whole ("" when it is missing).
std::string read_child_file(const std::string& path);
// The last line a testio child wrote on stderr (`text`), without its "testio: error: " prefixes
// and at most 300 bytes: what it said went wrong.
std::string last_complaint(const std::string& text);

// Blocks until `pid` ends, killing it with SIGKILL after `deadline_s` seconds (a pidfd's poll);
// `each_second`, when given, runs once a second while it waits (a mesh rank's "alive" to rank 0).
ProcessEnd wait_for_process(pid_t pid, double deadline_s, const std::function<void()>& each_second = {});
// Reaps `pid` (which has ended, or will) and says how it ended.
ProcessEnd reap_process(pid_t pid);

}  // namespace testio::util
