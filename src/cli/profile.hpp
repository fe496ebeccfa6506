// --config FILE: a JSON object whose keys are testio's long option names, and optionally "spec": a
// test spec in its one JSON mapping (what the wire request carries). A testio JSON report works as
// a profile too: its start.testio.spec is the test it ran, so the same test runs again.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spec/test_spec.hpp"

namespace testio::cli {

struct Profile {
  // Each option entry as "--key=value" ("--key" for true, nothing for false), to go before the
  // command line's own tokens.
  std::vector<std::string> tokens;
  // The spec the command line changes, when the profile gives one.
  std::optional<spec::TestSpec> spec;
  bool names_buffer = false;  // that spec sets -l ("buffer") itself
};

// Reads `path`. `accepts(key)` says whether a key names an option a profile may set; `given(key)`
// whether the command line already set it (then the profile's entry is dropped). Throws
// util::UsageError naming the file and the key for an unreadable file, bad JSON, an unknown key or
// a bad value.
Profile read_profile(const std::string& path, const std::function<bool(const std::string&)>& accepts,
                     const std::function<bool(const std::string&)>& given);

}  // namespace testio::cli
