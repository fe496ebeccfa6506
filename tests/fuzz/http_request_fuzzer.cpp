// libFuzzer target: what anyone who connects to /metrics or /probe sends, through the request
// head parser and the probe's plan. Neither may crash, hang or leak; whatever the bytes, a plan
// either names a problem or is a command line whose every word passed its pattern.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "metrics/http_request.hpp"
#include "metrics/probe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace testio::metrics;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ParsedHead head = parse_request_head(bytes);
  if (head.status == ParsedHead::Status::complete) {
    if (head.size > bytes.size()) std::abort();
    Probe probe = plan_probe(head.request, testio::config::ExporterConfig{});
    if (probe.problem.empty() == probe.args.empty()) std::abort();
    for (const std::string& word : probe.args)
      if (word.empty() || (word[0] == '-' && word != "-c" && word != "-p" && word != "-t" && word != "-R" &&
                           word != "--bidir" && word != "-u" && word != "--rr" && word != "--iperf3" && word != "-b" &&
                           word != "-l"))
        std::abort();
  } else if (head.status == ParsedHead::Status::bad && head.problem.empty()) {
    std::abort();
  }
  return 0;
}
