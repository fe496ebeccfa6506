// The verdicts (report/verdict.hpp) for people and for programs: a short paragraph after the
// summary, end.diagnosis in JSON, and --diagnose's table of variations.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/verdict.hpp"

namespace testio::report {

// "Limit (forward): receiver_cpu, 87% sure. ..." with its evidence and advice; empty without verdicts.
std::string diagnosis_text(const std::vector<Verdict>& verdicts, const std::vector<Variation>& variations);

// end.diagnosis: one object per direction (direction, limit, confidence, summary, evidence,
// advice, others, missing).
nlohmann::ordered_json diagnosis_json(const std::vector<Verdict>& verdicts);
// end.diagnose: --diagnose's variations, in the order they ran.
nlohmann::ordered_json variations_json(const std::vector<Variation>& variations);

}  // namespace testio::report
