// iperf3's --get-server-output: the server's side of a test, as the server's own report would
// show it, carried in the client's (JSON: "server_output_json"; text: after "Server output:").
// testio's server sends its figures and intervals with its results, so the client tells that
// side from them; an iperf3 server sends its own output, which is kept as it came.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "report/reporter.hpp"

namespace testio::report {

// The same test told from the server: its intervals and figures as the local side's.
TestReport seen_by_server(const TestReport& report);

nlohmann::ordered_json server_output_json(const TestReport& report);
std::string server_output_text(const TestReport& report, const ReporterOptions& options);

}  // namespace testio::report
