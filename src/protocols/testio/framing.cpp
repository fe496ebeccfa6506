#include "protocols/testio/framing.hpp"

#include <nlohmann/json.hpp>

namespace testio::control {

std::string encode_frame(const nlohmann::json& message) {
  std::string body = message.dump();
  std::string frame(kFrameHeaderBytes, '\0');
  auto length = static_cast<std::uint32_t>(body.size());
  for (std::size_t i = 0; i < kFrameHeaderBytes; ++i)
    frame[i] = static_cast<char>((length >> (8 * (kFrameHeaderBytes - 1 - i))) & 0xff);
  frame += body;
  return frame;
}

DecodedFrame decode_frame(std::string_view input, std::uint32_t max_body) noexcept {
  DecodedFrame result;
  if (input.size() < kFrameHeaderBytes) return result;
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kFrameHeaderBytes; ++i)
    length = (length << 8) | static_cast<unsigned char>(input[i]);
  if (length > max_body) {
    result.status = DecodedFrame::Status::too_large;
    result.error = "control frame of " + std::to_string(length) + " bytes is above the cap of " +
                   std::to_string(max_body);
    return result;
  }
  if (input.size() - kFrameHeaderBytes < length) return result;
  std::string_view body = input.substr(kFrameHeaderBytes, length);
  nlohmann::json message = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded() || !message.is_object()) {
    result.status = DecodedFrame::Status::malformed;
    result.error = "control frame is not a JSON object";
    return result;
  }
  result.status = DecodedFrame::Status::ok;
  result.message = std::move(message);
  result.consumed = kFrameHeaderBytes + length;
  return result;
}

}  // namespace testio::control
