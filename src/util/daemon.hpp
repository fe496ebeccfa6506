// iperf3's -D and -I for a server: detach from the terminal, and say where it went in a pid file.
#pragma once

#include <string>

namespace testio::util {

// Forks into the background (daemon(3)): the parent exits 0, the child keeps the working directory
// (so relative --logfile and -I paths still mean what was typed) and has stdin, stdout and stderr
// on /dev/null. Call it before any thread starts. Throws std::runtime_error with one sentence.
void detach();

// Writes this process's pid to `path` (-I) and removes the file when destroyed, unless another
// process has written its own pid there since. Owner: main().
class PidFile {
 public:
  // Throws std::runtime_error naming the path when it cannot be written.
  explicit PidFile(std::string path);
  ~PidFile();
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

 private:
  std::string path_;
};

}  // namespace testio::util
