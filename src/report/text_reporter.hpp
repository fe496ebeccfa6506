// The human table: per-connection lines (with -v or few connections), then sender and receiver sums.
#pragma once

#include <ostream>

#include "report/test_report.hpp"

namespace testio::report {

void print_text_report(std::ostream& out, const TestReport& report);

}  // namespace testio::report
