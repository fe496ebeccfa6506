#include "util/descriptors.hpp"

#include <dirent.h>
#include <sys/resource.h>

namespace testio::util {

std::uint64_t raise_descriptor_limit() noexcept {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  return descriptor_limit();
}

std::uint64_t descriptor_limit() noexcept {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : limit.rlim_cur;
}

std::uint64_t descriptors_in_use() noexcept {
  DIR* directory = opendir("/proc/self/fd");
  if (!directory) return 0;
  std::uint64_t open = 0;
  while (dirent* entry = readdir(directory))
    if (entry->d_name[0] != '.') ++open;
  closedir(directory);
  return open > 0 ? open - 1 : 0;  // less the one this listing holds
}

std::string descriptor_shortfall(std::uint64_t needed, const std::string& what) {
  const std::uint64_t limit = descriptor_limit(), in_use = descriptors_in_use();
  if (in_use + needed <= limit) return {};
  return what + " need about " + std::to_string(needed) + " file descriptors here, but ulimit -n is " +
         std::to_string(limit) + " and " + std::to_string(in_use) + " are open: raise it (ulimit -n " +
         std::to_string(in_use + needed) + ") or run fewer connections";
}

}  // namespace testio::util
