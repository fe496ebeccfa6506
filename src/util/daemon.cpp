#include "util/daemon.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace testio::util {

void detach() {
  if (::daemon(1, 0) != 0) throw std::runtime_error(std::string("-D: cannot detach: ") + std::strerror(errno));
}

PidFile::PidFile(std::string path) : path_(std::move(path)) {
  std::ofstream file(path_, std::ios::trunc);
  file << ::getpid() << "\n";
  file.close();
  if (!file) throw std::runtime_error("-I: cannot write the pid file " + path_ + ": " + std::strerror(errno));
}

PidFile::~PidFile() {
  std::ifstream file(path_);
  long pid = 0;
  if (file >> pid && pid == static_cast<long>(::getpid())) std::remove(path_.c_str());
}

}  // namespace testio::util
