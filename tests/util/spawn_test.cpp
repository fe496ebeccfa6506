// Child processes as testio starts them: their files (memory files, nothing on disk), nothing
// else of the parent's inherited, an exec error reported as such, and death with the parent,
// even a parent killed with SIGKILL (issue 33: a mesh rank's server outlived it by minutes).
#include "util/spawn.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace testio::util {
namespace {

TEST(Spawn, ABinaryThatCannotRunIsTheExecsError) {
  EXPECT_EQ(spawn_process("/nonexistent/testio", {}, ChildFiles{}), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST(Spawn, TheChildHasItsFilesAndNothingElseOfTheParents) {
  int pipe_ends[2];
  ASSERT_EQ(::pipe(pipe_ends), 0);
  // Not close-on-exec, at numbers the child's shell would not use itself: posix_spawn passed such on.
  const int stray[2] = {::fcntl(pipe_ends[0], F_DUPFD, 50), ::fcntl(pipe_ends[1], F_DUPFD, 50)};
  MemoryFile out("out"), err("err"), input("in");
  input.write_all("from the parent");
  const pid_t pid = spawn_process(
      "/bin/sh", {"-c", "cat <&3; echo; echo complaint >&2; for f in /proc/$$/fd/*; do echo \"${f##*/}\"; done"},
      ChildFiles{out.fd(), err.fd(), input.fd()});
  ASSERT_GT(pid, 0);
  EXPECT_EQ(wait_for_process(pid, 30).exit_code, 0);
  // 0-3, and the shell's own descriptor of the directory it lists.
  const std::string text = out.text();
  EXPECT_EQ(text.rfind("from the parent\n0\n1\n2\n3\n", 0), 0u) << text;
  for (const int fd : stray) EXPECT_EQ(text.find("\n" + std::to_string(fd) + "\n"), std::string::npos) << text;
  EXPECT_EQ(err.text(), "complaint\n");
  for (const int fd : {pipe_ends[0], pipe_ends[1], stray[0], stray[1]}) ::close(fd);
}

bool running(pid_t pid) {
  char state = 0;
  FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!stat) return false;
  const int read = std::fscanf(stat, "%*d (%*[^)]) %c", &state);
  std::fclose(stat);
  return read == 1 && state != 'Z';
}

TEST(Spawn, AChildDiesWithItsParentKilledOutright) {
  int told[2];
  ASSERT_EQ(::pipe(told), 0);
  const pid_t parent = ::fork();
  if (parent == 0) {  // the parent to be killed: starts a long child, says its pid, waits
    const pid_t child = spawn_process("/bin/sleep", {"60"}, ChildFiles{});
    [[maybe_unused]] const ssize_t put = ::write(told[1], &child, sizeof child);
    ::pause();
    ::_exit(0);
  }
  pid_t child = -1;
  ASSERT_EQ(::read(told[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ASSERT_GT(child, 0);
  EXPECT_TRUE(running(child));
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (running(child) && std::chrono::steady_clock::now() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(running(child)) << "the child outlived its parent killed with SIGKILL";
  if (running(child)) ::kill(child, SIGKILL);
  ::close(told[0]);
  ::close(told[1]);
}

}  // namespace
}  // namespace testio::util
