// What a side's bulk senders need before they start, for either side that sends: the sendfile
// source and SO_ZEROCOPY.
#pragma once

#include <cstddef>
#include <string>

#include "util/unique_fd.hpp"

namespace testio::engines {

// --send-mode sendfile: `file` (-F) opened for reading, or, when empty, a memfd holding the
// generated block of `block` bytes (the same bytes the other modes send). Throws with one sentence.
util::UniqueFd open_send_file(const std::string& file, std::size_t block, bool repeating_digits = false);

// --send-mode zerocopy needs SO_ZEROCOPY on each socket (its descriptor); false (errno set) when the
// kernel refuses.
bool enable_zerocopy(int socket) noexcept;

}  // namespace testio::engines
