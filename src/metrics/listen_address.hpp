// Whether a --listen or --metrics-listen value names an address to listen on, for the command
// line to refuse a bad one before anything starts: without Asio, which only the listener needs.
#pragma once

#include <string>

namespace testio::metrics {

// "127.0.0.1:9201", "[::1]:9201" or ":9201" (every address). Defined in http_listener.cpp, beside
// the parse the listener itself uses.
bool is_listen_address(const std::string& text);

}  // namespace testio::metrics
