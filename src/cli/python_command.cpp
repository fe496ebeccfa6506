#include "cli/python_command.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <vector>

#include "cli/python_source_dir.hpp"  // generated: TESTIO_SOURCE_PYTHON_DIR
#include "util/spawn.hpp"

namespace testio::cli {
namespace {

constexpr int kExitRuntime = 1;
// Debian's own interpreter: python3-matplotlib installs for it, not for a python3 that a version
// manager may put first on PATH.
constexpr const char* kDebianPython = "/usr/bin/python3";

bool holds_program(const std::filesystem::path& dir, const std::string& package) {
  std::error_code error;
  return std::filesystem::is_regular_file(dir / package / "__main__.py", error);
}

}  // namespace

std::string python_command_package(int argc, const char* const* argv) {
  if (argc < 2) return "";
  if (std::strcmp(argv[1], "plot") == 0) return "testio_plot";
  if (std::strcmp(argv[1], "campaign") == 0 || std::strcmp(argv[1], "compare") == 0) return "testio_campaign";
  return "";
}

std::string python_program_dir(const std::string& own_binary, const std::string& package) {
  if (const char* asked = std::getenv("TESTIO_PYTHON_DIR"); asked && *asked)
    return holds_program(asked, package) ? asked : "";
  const std::filesystem::path installed =
      std::filesystem::path(own_binary).parent_path().parent_path() / "share" / "testio" / "python";
  if (holds_program(installed, package)) return installed.string();
  if (holds_program(TESTIO_SOURCE_PYTHON_DIR, package)) return TESTIO_SOURCE_PYTHON_DIR;
  return "";
}

int run_python_command(const std::string& package, int argc, char** argv) {
  std::string dir, binary;
  try {
    binary = util::own_binary();
    dir = python_program_dir(binary, package);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "testio: %s\n", error.what());
    return kExitRuntime;
  }
  if (dir.empty()) {
    std::fprintf(stderr, "testio: the %s program (share/testio/python/%s) is not installed beside this testio\n",
                 argv[1], package.c_str());
    return kExitRuntime;
  }
  const char* python = access(kDebianPython, X_OK) == 0 ? kDebianPython : "python3";
  std::vector<char*> args{const_cast<char*>(python), const_cast<char*>("-m"), const_cast<char*>(package.c_str())};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  // The package is found through PYTHONPATH; no bytecode is written into /usr/share or the tree.
  // TESTIO_BINARY tells a program that runs tests (campaign) which testio to run: this one.
  const char* earlier = std::getenv("PYTHONPATH");
  const std::string path = earlier && *earlier ? dir + ":" + earlier : dir;
  setenv("PYTHONPATH", path.c_str(), 1);
  setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
  setenv("TESTIO_BINARY", binary.c_str(), 1);
  execvp(python, args.data());
  std::fprintf(stderr, "testio: testio %s needs python3%s\n", argv[1],
               package == "testio_plot" ? " and matplotlib: apt-get install python3-matplotlib" : "");
  return kExitRuntime;
}

}  // namespace testio::cli
