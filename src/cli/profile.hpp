// --config FILE: a JSON object whose keys are testio's long option names. Its entries become
// command-line tokens placed before the user's own, so anything typed on the command line wins.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace testio::cli {

// Reads `path` and turns each entry into "--key=value" ("--key" for true, nothing for false).
// `accepts(key)` says whether a key names an option a profile may set; `given(key)` whether the
// command line already set it (then the profile's entry is dropped). Throws util::UsageError
// naming the file and the key for an unreadable file, bad JSON, an unknown key or a bad value type.
std::vector<std::string> profile_tokens(const std::string& path,
                                        const std::function<bool(const std::string&)>& accepts,
                                        const std::function<bool(const std::string&)>& given);

}  // namespace testio::cli
