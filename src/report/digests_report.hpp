// -F's digests in text and JSON: each stream's, both sides, and whether they match.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "report/test_report.hpp"

namespace testio::report {

// "sha1 connection 1: <hex> sent, <hex> received: match" per stream.
std::string digests_text(const DigestCheck& digests);
nlohmann::ordered_json digests_json(const DigestCheck& digests);

}  // namespace testio::report
