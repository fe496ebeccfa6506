#include "metrics/exposition.hpp"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <stdexcept>

namespace testio::metrics {
namespace {

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::counter: return "counter";
    case MetricType::gauge: return "gauge";
    case MetricType::summary: return "summary";
  }
  return "untyped";
}

// HELP text escapes only backslash and newline.
std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string escape_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest text that reads back as the same double: a Unix time keeps its digits.
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : std::string("NaN");
}

void Exposition::family(std::string_view name, MetricType type, std::string_view help) {
  if (name == current_) return;
  current_ = std::string(name);
  // The format wants a family's samples together: a family cannot be taken up again later.
  if (std::find(written_.begin(), written_.end(), current_) != written_.end())
    throw std::logic_error("metric family " + current_ + " written twice");
  written_.push_back(current_);
  text_.append("# HELP ").append(name).append(" ").append(escape_help(help)).append("\n");
  text_.append("# TYPE ").append(name).append(" ").append(type_name(type)).append("\n");
}

void Exposition::sample(double value, const Labels& labels, std::string_view suffix) {
  text_.append(current_).append(suffix);
  if (!labels.empty()) {
    text_ += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i) text_ += ',';
      text_.append(labels[i].first).append("=\"").append(escape_label(labels[i].second)).append("\"");
    }
    text_ += '}';
  }
  text_.append(" ").append(format_value(value)).append("\n");
}

void Exposition::single(std::string_view name, MetricType type, std::string_view help, double value,
                        const Labels& labels) {
  family(name, type, help);
  sample(value, labels);
}

void Exposition::summary(std::string_view name, std::string_view help,
                         const std::vector<std::pair<std::string, double>>& quantiles, double sum, double count,
                         const Labels& labels) {
  family(name, MetricType::summary, help);
  for (const auto& [quantile, value] : quantiles) {
    Labels with = labels;
    with.emplace_back("quantile", quantile);
    sample(value, with);
  }
  sample(sum, labels, "_sum");
  sample(count, labels, "_count");
}

}  // namespace testio::metrics
