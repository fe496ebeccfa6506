#include "net/udp_counters.hpp"

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace testio::net {
namespace {

bool parse_count(const std::string& text, std::uint64_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> all;
  for (std::string word; in >> word;) all.push_back(word);
  return all;
}

// /proc/net/snmp: a "Udp:" line of names, then a "Udp:" line of values.
std::optional<std::map<std::string, std::uint64_t>> udp_rows(std::istream& in) {
  std::string line;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    if (line.rfind("Udp: ", 0) != 0) continue;
    std::vector<std::string> fields = words(line);
    if (names.empty()) {
      names = std::move(fields);
      continue;
    }
    if (fields.size() != names.size()) return std::nullopt;
    std::map<std::string, std::uint64_t> values;
    for (std::size_t i = 1; i < fields.size(); ++i)
      if (!parse_count(fields[i], values[names[i]])) return std::nullopt;
    return values;
  }
  return std::nullopt;
}

// /proc/net/snmp6: "Udp6InErrors   0" per line.
std::map<std::string, std::uint64_t> udp6_lines(std::istream& in) {
  std::map<std::string, std::uint64_t> values;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = words(line);
    std::uint64_t value = 0;
    if (fields.size() == 2 && fields[0].rfind("Udp6", 0) == 0 && parse_count(fields[1], value))
      values[fields[0].substr(4)] = value;
  }
  return values;
}

}  // namespace

std::optional<UdpCounters> read_udp_counters(const std::string& proc_root) {
  std::ifstream snmp(proc_root + "/net/snmp");
  std::optional<std::map<std::string, std::uint64_t>> v4 = udp_rows(snmp);
  if (!v4) return std::nullopt;
  std::ifstream snmp6(proc_root + "/net/snmp6");
  std::map<std::string, std::uint64_t> v6 = udp6_lines(snmp6);
  auto both = [&](const char* name) {
    auto four = v4->find(name);
    auto six = v6.find(name);
    return (four == v4->end() ? 0 : four->second) + (six == v6.end() ? 0 : six->second);
  };
  return UdpCounters{both("InDatagrams"), both("InErrors"), both("RcvbufErrors"), both("SndbufErrors"),
                     both("NoPorts")};
}

}  // namespace testio::net
