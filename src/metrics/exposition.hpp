// Prometheus' text exposition format (version 0.0.4): families with HELP and TYPE, then their
// samples. Every metric testio writes goes through here, so the escaping and the layout are
// the same in /metrics, /probe and a textfile. Owner: whoever builds one; not shared.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace testio::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { counter, gauge, summary };

class Exposition {
 public:
  // Starts a family; its samples follow. Naming the current family again is harmless; taking an
  // earlier one up again throws std::logic_error, as its samples would no longer be together.
  void family(std::string_view name, MetricType type, std::string_view help);
  // One sample of the current family; `suffix` is "_sum" or "_count" for a summary's parts.
  void sample(double value, const Labels& labels = {}, std::string_view suffix = {});
  // A family of one sample, the common case.
  void single(std::string_view name, MetricType type, std::string_view help, double value, const Labels& labels = {});
  // The summary family `name` from quantiles (in seconds) and a count and sum.
  void summary(std::string_view name, std::string_view help, const std::vector<std::pair<std::string, double>>& quantiles,
               double sum, double count, const Labels& labels = {});

  const std::string& text() const noexcept { return text_; }
  bool empty() const noexcept { return text_.empty(); }

 private:
  std::string text_;
  std::string current_;
  std::vector<std::string> written_;
};

// A label value as the format wants it: backslash, double quote and newline escaped.
std::string escape_label(std::string_view value);
// A sample value: integers without a fraction, NaN and infinities by their names.
std::string format_value(double value);

inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace testio::metrics
