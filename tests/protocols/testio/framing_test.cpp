#include "protocols/testio/framing.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace testio::control {
namespace {

using Status = DecodedFrame::Status;

// What a frame's checks look at when its body does not matter.
Status status_of(std::string_view input, std::uint32_t max_body) {
  nlohmann::json ignored;
  return decode_frame(input, max_body, ignored).status;
}

std::string header(std::uint32_t length) {
  return {static_cast<char>(length >> 24), static_cast<char>(length >> 16),
          static_cast<char>(length >> 8), static_cast<char>(length)};
}

TEST(Framing, RoundTrip) {
  nlohmann::json message = {{"type", "start"}, {"n", 42}};
  std::string frame = encode_frame(message);
  ASSERT_EQ(frame.size(), 4 + message.dump().size());
  nlohmann::json decoded_message;
  DecodedFrame decoded = decode_frame(frame, 1024, decoded_message);
  ASSERT_EQ(decoded.status, Status::ok);
  EXPECT_EQ(decoded_message, message);
  EXPECT_EQ(decoded.consumed, frame.size());
}

TEST(Framing, TwoFramesBackToBack) {
  std::string bytes = encode_frame({{"a", 1}}) + encode_frame({{"b", 2}});
  nlohmann::json message;
  DecodedFrame first = decode_frame(bytes, 1024, message);
  ASSERT_EQ(first.status, Status::ok);
  EXPECT_EQ(message["a"], 1);
  DecodedFrame second = decode_frame(std::string_view(bytes).substr(first.consumed), 1024, message);
  ASSERT_EQ(second.status, Status::ok);
  EXPECT_EQ(message["b"], 2);
}

TEST(Framing, TruncatedNeedsMoreAtEveryLength) {
  std::string frame = encode_frame({{"type", "results"}, {"streams", {1, 2, 3}}});
  for (std::size_t cut = 0; cut < frame.size(); ++cut)
    EXPECT_EQ(status_of(std::string_view(frame).substr(0, cut), 1024), Status::need_more)
        << "cut at " << cut;
}

TEST(Framing, OversizedRejectedFromTheHeaderAlone) {
  nlohmann::json message;
  DecodedFrame decoded = decode_frame(header(0xffffffff), 65536, message);
  EXPECT_EQ(decoded.status, Status::too_large);
  EXPECT_NE(decoded.error.find("cap"), std::string::npos);
  EXPECT_EQ(status_of(header(65537), 65536), Status::too_large);
  EXPECT_EQ(status_of(header(65536), 65536), Status::need_more);
}

TEST(Framing, MalformedBodies) {
  for (std::string body : {"{", "not json", "[1,2]", "42", "\"text\"", "", "{\"a\":1}}"}) {
    EXPECT_EQ(status_of(header(static_cast<std::uint32_t>(body.size())) + body, 1024), Status::malformed) << body;
  }
}

TEST(Framing, GarbageNeverThrows) {
  std::string garbage;
  std::uint32_t state = 1;
  for (int i = 0; i < 5000; ++i) {
    state = state * 1103515245u + 12345u;
    garbage.push_back(static_cast<char>(state >> 16));
    EXPECT_NO_THROW(status_of(garbage, 4096));
  }
}

}  // namespace
}  // namespace testio::control
