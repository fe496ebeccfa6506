// `testio plot REPORT.json... -o OUT`: pictures of a run, drawn by the Python program installed
// beside testio (share/testio/plot, matplotlib's plots). The binary only finds that program and
// hands over; it links nothing of Python, so testio runs where matplotlib is not installed.
#pragma once

#include <string>

namespace testio::cli {

bool is_plot_command(int argc, const char* const* argv);

// Where the plot program's package (testio_plot/) is: beside an installed binary
// (BIN/../share/testio/plot), else the source tree this binary was built from; $TESTIO_PLOT_DIR
// first when set. "" when none of them holds it.
std::string plot_program_dir(const std::string& own_binary);

// Replaces this process with the plot program (argv[2..] handed over). Returns only when it could
// not: the exit code, with one sentence said.
int run_plot(int argc, char** argv);

}  // namespace testio::cli
