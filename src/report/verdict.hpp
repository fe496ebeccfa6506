// What limited one direction of a test, as the diagnosis (diagnosis/verdict.hpp) judged it from
// both sides' evidence: plain values the reporters print (text, end.diagnosis, Prometheus).
#pragma once

#include <string>
#include <vector>

namespace testio::report {

// One figure behind a verdict, with its unit ("share of busy time", "bit/s", "us", "CPU-s").
struct NamedFigure {
  std::string name;
  double value = 0;
  std::string unit;
};

// A limit considered and set aside, and why.
struct RuledOut {
  std::string limit;
  std::string why;
};

struct Verdict {
  std::string direction;            // "forward" (client to server), "reverse"
  std::string limit;                // one of diagnosis::kLimits ("network", "receiver_cpu", ...)
  double confidence = 0;            // 0..1
  std::string summary;              // one sentence: what limited it and the figure that shows it
  std::vector<NamedFigure> evidence;
  std::vector<std::string> advice;  // what to try next, each a sentence
  std::vector<RuledOut> others;
  std::vector<std::string> missing;  // counters this kernel lacks, so left out of the evidence
};

// --diagnose: one short variation run after the test, and what it showed.
struct Variation {
  std::string name;                 // "2x connections"
  std::string options;              // what changed, as command-line options ("-P 8")
  double base_bps = 0;              // the test's own goodput in that direction
  double bps = 0;                   // the variation's; 0 when it did not run
  std::string limit;                // the variation's own verdict
  bool held = false;                // the variation confirmed the verdict
  std::string note;                 // why it did not run, or what it showed
};

}  // namespace testio::report
