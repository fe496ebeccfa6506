#include "workloads/http/curl_setup.hpp"

#include <mutex>
#include <stdexcept>

namespace testio::workloads::http {

void init_curl_once() {
  static std::once_flag done;
  std::call_once(done, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl failed to initialise");
  });
}

long ip_resolve_of(const config::Config& config) noexcept {
  return config.family == config::AddressFamily::v4   ? CURL_IPRESOLVE_V4
         : config.family == config::AddressFamily::v6 ? CURL_IPRESOLVE_V6
                                                      : CURL_IPRESOLVE_WHATEVER;
}

void skip_certificate_checks(CURL* easy) noexcept {
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
}

}  // namespace testio::workloads::http
