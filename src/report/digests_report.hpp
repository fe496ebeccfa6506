// --transfers and -F figures in text and JSON: the summary lines under the usual stream report.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "report/test_report.hpp"

namespace testio::report {

// "transfers: 1000 of 1000 x 6 MiB ... 101.3/s, 4.86 Gbit/s" and the connect/transfer percentiles.
std::string transfers_text(const TransfersSummary& transfers, char unit);
nlohmann::ordered_json transfers_json(const TransfersSummary& transfers);

// "sha1 connection 1: <hex> sent, <hex> received: match" per stream.
std::string digests_text(const DigestCheck& digests);
nlohmann::ordered_json digests_json(const DigestCheck& digests);

}  // namespace testio::report
