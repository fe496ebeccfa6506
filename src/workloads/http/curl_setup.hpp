// What every libcurl user here sets up the same way: the library once, the address family -4/-6
// ask for, and --insecure. The HTTP downloads and --rpm share them. Any thread, but
// init_curl_once() before a second thread uses libcurl.
#pragma once

#include <curl/curl.h>

#include "config/config.hpp"

namespace testio::workloads::http {

// libcurl's global set-up, once, on the control thread before any worker starts (it is not itself
// thread-safe). Throws std::runtime_error when libcurl cannot start.
void init_curl_once();
// CURLOPT_IPRESOLVE for -4, -6 or neither.
long ip_resolve_of(const config::Config& config) noexcept;
// --insecure: the server's certificate and name are not checked (a self-signed test server).
void skip_certificate_checks(CURL* easy) noexcept;

}  // namespace testio::workloads::http
