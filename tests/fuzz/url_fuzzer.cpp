// libFuzzer target: a URL as a user or a --urls file gives it, and what an HTTP server answers
// for /.well-known/nq (--rpm's configuration). testio's own code on top of libcurl's parser must
// never crash, the file name --save derives from any URL must stay inside DIR (no '/', never "."
// or ".."), and a configuration read gives http(s) URLs or a sentence.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "workloads/http/http.hpp"
#include "workloads/rpm/rpm.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string url(reinterpret_cast<const char*>(data), size);
  (void)testio::workloads::http::url_problem(url);
  const std::string numbered = testio::workloads::http::url_with_number(url, 1234567);
  if (numbered.find(testio::workloads::http::kNumberToken) != std::string::npos) std::abort();
  const std::string name = testio::workloads::http::file_name_of(numbered);
  if (name.find('/') != std::string::npos || name == "." || name == "..") std::abort();
  std::string why;
  if (const auto urls = testio::workloads::rpm::parse_nq_config(url, why)) {
    if (urls->large.rfind("http", 0) != 0 || urls->small.rfind("http", 0) != 0) std::abort();
  } else if (why.empty()) {
    std::abort();
  }
  return 0;
}
