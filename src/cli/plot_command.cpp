#include "cli/plot_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <vector>

#include "cli/plot_source_dir.hpp"  // generated: TESTIO_SOURCE_PLOT_DIR
#include "util/spawn.hpp"

namespace testio::cli {
namespace {

constexpr int kExitRuntime = 1;
// Debian's own interpreter: python3-matplotlib installs for it, not for a python3 that a version
// manager may put first on PATH.
constexpr const char* kDebianPython = "/usr/bin/python3";

bool holds_program(const std::filesystem::path& dir) {
  std::error_code error;
  return std::filesystem::is_regular_file(dir / "testio_plot" / "__main__.py", error);
}

}  // namespace

bool is_plot_command(int argc, const char* const* argv) { return argc >= 2 && std::strcmp(argv[1], "plot") == 0; }

std::string plot_program_dir(const std::string& own_binary) {
  if (const char* asked = std::getenv("TESTIO_PLOT_DIR"); asked && *asked) return holds_program(asked) ? asked : "";
  const std::filesystem::path installed =
      std::filesystem::path(own_binary).parent_path().parent_path() / "share" / "testio" / "plot";
  if (holds_program(installed)) return installed.string();
  if (holds_program(TESTIO_SOURCE_PLOT_DIR)) return TESTIO_SOURCE_PLOT_DIR;
  return "";
}

int run_plot(int argc, char** argv) {
  std::string dir;
  try {
    dir = plot_program_dir(util::own_binary());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitRuntime;
  }
  if (dir.empty()) {
    std::fprintf(stderr, "testio: the plot program (share/testio/plot) is not installed beside this testio\n");
    return kExitRuntime;
  }
  const char* python = access(kDebianPython, X_OK) == 0 ? kDebianPython : "python3";
  std::vector<char*> args{const_cast<char*>(python), const_cast<char*>("-m"), const_cast<char*>("testio_plot")};
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  // The package is found through PYTHONPATH; no bytecode is written into /usr/share or the tree.
  const char* earlier = std::getenv("PYTHONPATH");
  const std::string path = earlier && *earlier ? dir + ":" + earlier : dir;
  setenv("PYTHONPATH", path.c_str(), 1);
  setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
  execvp(python, args.data());
  std::fprintf(stderr, "testio: testio plot needs python3 and matplotlib: apt-get install python3-matplotlib\n");
  return kExitRuntime;
}

}  // namespace testio::cli
