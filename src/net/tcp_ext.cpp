#include "net/tcp_ext.hpp"

#include <charconv>

#include "util/mapped_file.hpp"

namespace testio::net {
namespace {

constexpr std::string_view kTcpExtSection = "TcpExt:";

// The next line of `text` (without its '\n'), consumed; false at the end.
bool next_netstat_line(std::string_view& text, std::string_view& line) {
  if (text.empty()) return false;
  const std::size_t end = text.find('\n');
  line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return true;
}

// The next space-separated word of `rest`, consumed; empty at the end.
std::string_view next_netstat_word(std::string_view& rest) {
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  std::size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t' && rest[end] != '\r') ++end;
  std::string_view word = rest.substr(0, end);
  rest.remove_prefix(end);
  return word;
}

bool parse_counter_value(std::string_view word, std::uint64_t& value) {
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  return error == std::errc() && end == word.data() + word.size() && !word.empty();
}

// "TcpExt:" exactly: "MPTcpExt:" (MPTCP's own section) is another line.
bool in_tcp_ext_section(std::string_view line) { return line.substr(0, kTcpExtSection.size()) == kTcpExtSection; }

}  // namespace

std::vector<NamedCounter> parse_tcp_ext(std::string_view netstat_text) {
  std::string_view names, values;
  do {
    if (!next_netstat_line(netstat_text, names)) return {};
  } while (!in_tcp_ext_section(names));
  // The values are the line right after the names; anything else there is no pair.
  if (!next_netstat_line(netstat_text, values) || !in_tcp_ext_section(values)) return {};
  names.remove_prefix(kTcpExtSection.size());
  values.remove_prefix(kTcpExtSection.size());
  std::vector<NamedCounter> counters;
  for (;;) {
    const std::string_view name = next_netstat_word(names);
    const std::string_view text = next_netstat_word(values);
    std::uint64_t value = 0;
    if (name.empty() || !parse_counter_value(text, value)) break;
    counters.push_back({std::string(name), value});
  }
  return counters;
}

std::vector<NamedCounter> read_tcp_ext(const std::string& root) {
  return parse_tcp_ext(util::read_whole_file(root + "/proc/net/netstat").value_or(""));
}

std::optional<std::uint64_t> find_counter(const std::vector<NamedCounter>& counters, std::string_view name) {
  for (const NamedCounter& counter : counters)
    if (counter.name == name) return counter.value;
  return std::nullopt;
}

}  // namespace testio::net
