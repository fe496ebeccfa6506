// The URLs of HTTP downloads: which can be downloaded, the transfer number in them, and the file
// name --save gives each. libcurl's URL parser reads them; nothing here touches the network.
#pragma once

#include <cstdint>
#include <string>

namespace testio::workloads::http {

// "{i}" in a URL stands for the transfer number, 1..COUNT.
inline constexpr const char* kNumberToken = "{i}";

// `url` with every "{i}" replaced by `number`.
std::string url_with_number(std::string url, std::uint64_t number);

// Why `url` cannot be downloaded (it does not parse, its scheme is not http or https, it has no
// host), in one sentence; empty when it can. A `{i}` in it stands for a transfer number.
std::string url_problem(const std::string& url);

// The URL's file name for --save: its path's last segment (without the query), or empty when it
// has none ("http://host/", "..").
std::string file_name_of(const std::string& url);

}  // namespace testio::workloads::http
