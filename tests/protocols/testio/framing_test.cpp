#include "protocols/testio/framing.hpp"

#include <gtest/gtest.h>

namespace testio::control {
namespace {

using Status = DecodedFrame::Status;

std::string header(std::uint32_t length) {
  return {static_cast<char>(length >> 24), static_cast<char>(length >> 16),
          static_cast<char>(length >> 8), static_cast<char>(length)};
}

TEST(Framing, RoundTrip) {
  nlohmann::json message = {{"type", "start"}, {"n", 42}};
  std::string frame = encode_frame(message);
  ASSERT_EQ(frame.size(), 4 + message.dump().size());
  DecodedFrame decoded = decode_frame(frame, 1024);
  ASSERT_EQ(decoded.status, Status::ok);
  EXPECT_EQ(decoded.message, message);
  EXPECT_EQ(decoded.consumed, frame.size());
}

TEST(Framing, TwoFramesBackToBack) {
  std::string bytes = encode_frame({{"a", 1}}) + encode_frame({{"b", 2}});
  DecodedFrame first = decode_frame(bytes, 1024);
  ASSERT_EQ(first.status, Status::ok);
  DecodedFrame second = decode_frame(std::string_view(bytes).substr(first.consumed), 1024);
  ASSERT_EQ(second.status, Status::ok);
  EXPECT_EQ(second.message["b"], 2);
}

TEST(Framing, TruncatedNeedsMoreAtEveryLength) {
  std::string frame = encode_frame({{"type", "results"}, {"streams", {1, 2, 3}}});
  for (std::size_t cut = 0; cut < frame.size(); ++cut)
    EXPECT_EQ(decode_frame(std::string_view(frame).substr(0, cut), 1024).status, Status::need_more)
        << "cut at " << cut;
}

TEST(Framing, OversizedRejectedFromTheHeaderAlone) {
  DecodedFrame decoded = decode_frame(header(0xffffffff), 65536);
  EXPECT_EQ(decoded.status, Status::too_large);
  EXPECT_NE(decoded.error.find("cap"), std::string::npos);
  EXPECT_EQ(decode_frame(header(65537), 65536).status, Status::too_large);
  EXPECT_EQ(decode_frame(header(65536), 65536).status, Status::need_more);
}

TEST(Framing, MalformedBodies) {
  for (std::string body : {"{", "not json", "[1,2]", "42", "\"text\"", "", "{\"a\":1}}"}) {
    DecodedFrame decoded = decode_frame(header(static_cast<std::uint32_t>(body.size())) + body, 1024);
    EXPECT_EQ(decoded.status, Status::malformed) << body;
  }
}

TEST(Framing, GarbageNeverThrows) {
  std::string garbage;
  std::uint32_t state = 1;
  for (int i = 0; i < 5000; ++i) {
    state = state * 1103515245u + 12345u;
    garbage.push_back(static_cast<char>(state >> 16));
    EXPECT_NO_THROW(decode_frame(garbage, 4096));
  }
}

}  // namespace
}  // namespace testio::control
