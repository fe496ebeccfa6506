// How a client test runs on the main thread, whichever protocol it speaks: one io_context, and
// SIGINT/SIGTERM handled the same way (the first one while data flows ends the window early and
// the figures are reported; any other stops at once, and the reporter is told why).
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "net/asio_fwd.hpp"
#include "report/reporter.hpp"

namespace testio::lifecycle {

// What a signal handler may reach while the test coroutine runs. Owner: the control thread.
struct Interruption {
  std::function<void()> end_window;  // set while data is flowing
  bool window_opened = false;        // data has flowed: a signal now comes after the start
  int signal = 0;                    // the first SIGINT/SIGTERM seen, 0 for none
};

using ClientRun = std::function<net::Awaitable<int>(Interruption&)>;
// One sentence for the failure that ended a test, for the log and the reporter.
using DescribeFailure = std::function<std::string(const std::exception&)>;

// "interrupted by SIGINT" (or SIGTERM): why a report that a signal cut short is incomplete.
std::string interruption_text(int signal);

// Runs `test` to its end; returns its exit code, or 1 when it threw or a signal stopped it.
int run_client_test(const ClientRun& test, report::Reporter& reporter, const DescribeFailure& describe);

}  // namespace testio::lifecycle
