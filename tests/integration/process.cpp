#include "integration/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace testio::testing {
namespace {

std::string temp_file(const char* tag) {
  std::string path = std::string("/tmp/testio-test-") + tag + "-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv)
    : out_path_(temp_file("out")), err_path_(temp_file("err")) {
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_TRUNC);
    int err = open(err_path_.c_str(), O_WRONLY | O_TRUNC);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (running()) {
    kill(pid_, SIGKILL);
    wait(std::chrono::seconds(10));
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

bool ChildProcess::running() {
  if (status_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = decode_status(status);
    return false;
  }
  return true;
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

void ChildProcess::signal(int number) {
  if (running()) kill(pid_, number);
}

std::string ChildProcess::out() const { return slurp(out_path_); }
std::string ChildProcess::err() const { return slurp(err_path_); }

bool ChildProcess::wait_for_err(const std::string& text, std::chrono::milliseconds limit) const {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (err().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

Result run(std::vector<std::string> argv, std::chrono::milliseconds limit) {
  ChildProcess child(std::move(argv));
  Result result;
  std::optional<int> code = child.wait(limit);
  result.code = code ? *code : -1;
  result.out = child.out();
  result.err = child.err();
  return result;
}

}  // namespace testio::testing
