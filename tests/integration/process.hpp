// A child process for integration tests: argv in, stdout/stderr captured to files, bounded waits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace testio::testing {

class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv);
  ~ChildProcess();  // SIGKILLs a child still running and removes the capture files
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Exit code, or 128+signal; nullopt if still running after `limit` (the child is left running).
  std::optional<int> wait(std::chrono::milliseconds limit);
  void signal(int number);
  pid_t pid() const noexcept { return pid_; }
  bool running();

  std::string out() const;
  std::string err() const;
  // Polls stderr until it contains `text`; false after `limit`.
  bool wait_for_err(const std::string& text, std::chrono::milliseconds limit) const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string out_path_, err_path_;
};

// Runs to completion (killing it after `limit`) and returns the exit code, -1 on timeout.
struct Result {
  int code = -1;
  std::string out, err;
};
Result run(std::vector<std::string> argv, std::chrono::milliseconds limit = std::chrono::seconds(60));

}  // namespace testio::testing
