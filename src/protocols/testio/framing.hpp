// Control frames: a 4-byte big-endian length, then that many bytes of JSON. The length is checked
// against a cap before anything is buffered, so a peer cannot make us allocate what it claims.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace testio::control {

inline constexpr std::size_t kFrameHeaderBytes = 4;

std::string encode_frame(const nlohmann::json& message);

struct DecodedFrame {
  enum class Status { need_more, ok, too_large, malformed } status = Status::need_more;
  std::size_t consumed = 0;    // bytes of `input` the frame used, when ok
  std::string error;           // one sentence when too_large or malformed
};

// Looks for one whole frame at the start of `input`; when it is ok, `message` is its body, always
// a JSON object (an out parameter, so this header needs only json_fwd.hpp). Never throws.
DecodedFrame decode_frame(std::string_view input, std::uint32_t max_body, nlohmann::json& message) noexcept;

}  // namespace testio::control
