// The commands testio runs as Python programs installed beside it (share/testio/python): `testio
// plot` (matplotlib's pictures of any report), `testio campaign` (a grid of tests, repeated, with
// statistics) and `testio compare` (two campaigns, cell by cell). The binary only finds the
// program and hands over; it links nothing of Python, so testio runs where Python is not installed.
#pragma once

#include <string>

namespace testio::cli {

// The Python package that runs argv[1] ("testio_plot", "testio_campaign"), or "" when argv[1] is
// not one of those commands.
std::string python_command_package(int argc, const char* const* argv);

// Where the Python programs' packages are: beside an installed binary (BIN/../share/testio/python),
// else the source tree this binary was built from; $TESTIO_PYTHON_DIR first when set. "" when none
// of them holds `package`.
std::string python_program_dir(const std::string& own_binary, const std::string& package);

// Replaces this process with `package`'s program, handed argv[1..] (the command first, so one
// package may serve two commands). Returns only when it could not: the exit code, with one
// sentence said.
int run_python_command(const std::string& package, int argc, char** argv);

}  // namespace testio::cli
