// libFuzzer target: everything the server does with bytes from the network before a test runs.
// The input is split as the wire splits it: a 24-byte preamble, then control frames, each frame
// handed to every message parser. Nothing may crash, hang, leak or read out of bounds; protocol
// errors are the expected outcome for almost every input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocols/testio/framing.hpp"
#include "protocols/testio/protocol.hpp"

namespace {

void parse_every_way(const nlohmann::json& message, const testio::spec::Limits& limits) {
  using namespace testio::control;
  auto guarded = [](auto&& parse) {
    try {
      parse();
    } catch (const ProtocolError&) {
    } catch (const PeerError&) {
    }
  };
  guarded([&] {
    // The request's frame, then the rules every workload shares, as a server applies them.
    TestRequest request = parse_test_request(message);
    try {
      testio::spec::check_composition(request.spec, limits);
      for (const testio::spec::TestSpec& workload : testio::spec::workloads_of(request.spec))
        testio::spec::check_common(workload, limits);
    } catch (const testio::spec::SpecError&) {
    }
  });
  guarded([&] { parse_test_accepted(message, limits); });
  guarded([&] { parse_server_hello(message); });
  guarded([&] { parse_start(message); });
  guarded([&] { parse_side_results(message, "results", 2); });
  guarded([&] { parse_side_results(message, "sender_done", 1); });
  guarded([&] { fail_unexpected(message, "while fuzzing"); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace testio::control;
  static const testio::spec::Limits limits;
  if (size >= kPreambleBytes) {
    PreambleBytes bytes;
    std::memcpy(bytes.data(), data, kPreambleBytes);
    decode_preamble(bytes);
    data += kPreambleBytes;
    size -= kPreambleBytes;
  }
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (!input.empty()) {
    nlohmann::json message;
    DecodedFrame frame = decode_frame(input, limits.max_frame, message);
    if (frame.status != DecodedFrame::Status::ok) break;
    parse_every_way(message, limits);
    input.remove_prefix(frame.consumed);
  }
  return 0;
}
