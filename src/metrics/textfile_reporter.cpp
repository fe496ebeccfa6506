#include "metrics/textfile_reporter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "metrics/test_metrics.hpp"

namespace testio::metrics {

void TextfileReporter::end(const report::TestReport& report) {
  inner_.end(report);
  figures_ = Exposition{};
  add_test_metrics(figures_, report);
  if (failure_.empty()) failure_ = failure_in(report);
}

void TextfileReporter::error(const std::string& message) {
  inner_.error(message);
  if (failure_.empty()) failure_ = message;
}

bool TextfileReporter::finish(int exit_code) {
  Exposition up;
  add_up(up, exit_code == 0, failure_.empty() ? "exit code " + std::to_string(exit_code) : failure_);
  try {
    write_whole_file(path_, up.text() + figures_.text());
    return true;
  } catch (const std::runtime_error& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return false;
  }
}

void write_whole_file(const std::string& path, const std::string& text) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  // A leading dot: node_exporter reads only *.prom, and ls hides it.
  const std::string temporary = dir + "." + name + ".testio-" + std::to_string(::getpid());
  auto fail = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    ::unlink(temporary.c_str());
    return std::runtime_error(std::string("cannot ") + what + " " + path + ": " + reason);
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw fail("write");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::runtime_error error = fail("write");
      ::close(fd);
      throw error;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw fail("write");
  if (::rename(temporary.c_str(), path.c_str()) != 0) throw fail("rename the new file to");
}

}  // namespace testio::metrics
