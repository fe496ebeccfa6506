#include "report/diagnosis_report.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

namespace testio::report {

namespace {

using json = nlohmann::ordered_json;

// A figure as people read it: shares as percentages, rates in Gbit/s, the rest as they are.
std::string figure_text(const NamedFigure& figure) {
  if (figure.unit.rfind("share", 0) == 0 || figure.unit.find(" share") != std::string::npos)
    return fmt::format("{} {:.0f}%", figure.name, figure.value * 100);
  if (figure.unit == "bit/s") return fmt::format("{} {:.2f} Gbit/s", figure.name, figure.value / 1e9);
  return fmt::format("{} {:.6g} {}", figure.name, figure.value, figure.unit);
}

std::string variations_text(const std::vector<Variation>& variations) {
  if (variations.empty()) return "";
  std::string text = "diagnose: variation            options            goodput        change  limit            held\n";
  for (const Variation& variation : variations) {
    if (variation.bps <= 0) {
      text += fmt::format("          {:<24} {:<18} skipped: {}\n", variation.name, variation.options, variation.note);
      continue;
    }
    double change = variation.base_bps > 0 ? variation.bps / variation.base_bps : 0;
    text += fmt::format("          {:<24} {:<18} {:>8.2f} Gbit/s {:>5.2f}x  {:<16} {}\n", variation.name,
                        variation.options, variation.bps / 1e9, change, variation.limit,
                        variation.held ? "yes" : "no");
    if (!variation.note.empty()) text += "            " + variation.note + "\n";
  }
  return text;
}

}  // namespace

std::string diagnosis_text(const std::vector<Verdict>& verdicts, const std::vector<Variation>& variations) {
  std::string text;
  for (const Verdict& verdict : verdicts) {
    text += fmt::format("limit ({}): {}, {:.0f}% sure: {}.\n", verdict.direction, verdict.limit,
                        verdict.confidence * 100, verdict.summary);
    std::string figures;
    for (const NamedFigure& figure : verdict.evidence) figures += (figures.empty() ? "" : ", ") + figure_text(figure);
    if (!figures.empty()) text += "  evidence: " + figures + "\n";
    for (const std::string& advice : verdict.advice) text += "  try: " + advice + "\n";
    if (!verdict.missing.empty()) {
      std::string names;
      for (const std::string& name : verdict.missing) names += (names.empty() ? "" : ", ") + name;
      text += "  not in this kernel, left out: " + names + "\n";
    }
  }
  return text + variations_text(variations);
}

json diagnosis_json(const std::vector<Verdict>& verdicts) {
  json list = json::array();
  for (const Verdict& verdict : verdicts) {
    json evidence = json::object();
    for (const NamedFigure& figure : verdict.evidence) evidence[figure.name] = {{"value", figure.value}, {"unit", figure.unit}};
    json others = json::array();
    for (const RuledOut& other : verdict.others) others.push_back({{"limit", other.limit}, {"why", other.why}});
    list.push_back({{"direction", verdict.direction},
                    {"limit", verdict.limit},
                    {"confidence", verdict.confidence},
                    {"summary", verdict.summary},
                    {"evidence", std::move(evidence)},
                    {"advice", verdict.advice},
                    {"others", std::move(others)},
                    {"missing", verdict.missing}});
  }
  return list;
}

json variations_json(const std::vector<Variation>& variations) {
  json list = json::array();
  for (const Variation& variation : variations)
    list.push_back({{"name", variation.name},
                    {"options", variation.options},
                    {"base_bits_per_second", variation.base_bps},
                    {"bits_per_second", variation.bps},
                    {"ran", variation.bps > 0},
                    {"limit", variation.limit},
                    {"held", variation.held},
                    {"note", variation.note}});
  return list;
}

}  // namespace testio::report
