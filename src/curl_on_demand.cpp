// libcurl, loaded the first time a curl function is called instead of when testio starts.
//
// Linked in, libcurl and the 27 libraries it needs (GnuTLS, Kerberos, LDAP, SASL, ...) were mapped,
// relocated and initialised by every testio process, though only HTTP downloads, --rpm and a URL
// on the command line use it: `testio --version` took 24 ms of CPU, 11 without them. So the binary
// does not link libcurl: it defines the curl functions it calls (the declarations of
// <curl/curl.h>), and each forwards to libcurl.so.4, opened with dlopen on the first call. The
// Debian package names libcurl4 in its Depends (tools/deb.sh), as dpkg-shlibdeps no longer sees it.
//
// Thread safety: the library is opened once, in a function-local static (C++ makes its first
// initialisation thread safe); after that the table of functions is read only.
#include <curl/curl.h>
#include <dlfcn.h>

#include <cstdarg>
#include <stdexcept>
#include <string>

namespace {

constexpr const char* kCurlLibrary = "libcurl.so.4";

struct LoadedCurl {
  void* handle = nullptr;
  decltype(&curl_global_init) global_init;
  decltype(&curl_free) free;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_perform) easy_perform;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_multi_init) multi_init;
  decltype(&curl_multi_setopt) multi_setopt;
  decltype(&curl_multi_add_handle) multi_add_handle;
  decltype(&curl_multi_remove_handle) multi_remove_handle;
  decltype(&curl_multi_perform) multi_perform;
  decltype(&curl_multi_poll) multi_poll;
  decltype(&curl_multi_socket_action) multi_socket_action;
  decltype(&curl_multi_info_read) multi_info_read;
  decltype(&curl_multi_cleanup) multi_cleanup;
  decltype(&curl_multi_strerror) multi_strerror;
  decltype(&curl_url) url;
  decltype(&curl_url_set) url_set;
  decltype(&curl_url_get) url_get;
  decltype(&curl_url_cleanup) url_cleanup;
  decltype(&curl_url_strerror) url_strerror;

  template <typename Function>
  void resolve(Function& function, const char* name) {
    function = reinterpret_cast<Function>(dlsym(handle, name));
    if (!function)
      throw std::runtime_error(std::string(kCurlLibrary) + " has no " + name + ": libcurl 7.80 or later is needed");
  }

  LoadedCurl() {
    // RTLD_LOCAL: its symbols stay its own, so these definitions never stand in for libcurl's.
    handle = dlopen(kCurlLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      throw std::runtime_error(std::string("HTTP needs libcurl (Debian's libcurl4), which could not be loaded: ") +
                               dlerror());
    try {
      resolve_all();
    } catch (...) {
      dlclose(handle);  // too old a libcurl: the next call finds the same, and says so again
      throw;
    }
  }

  void resolve_all() {
    resolve(global_init, "curl_global_init"), resolve(free, "curl_free");
    resolve(easy_init, "curl_easy_init"), resolve(easy_setopt, "curl_easy_setopt");
    resolve(easy_getinfo, "curl_easy_getinfo"), resolve(easy_perform, "curl_easy_perform");
    resolve(easy_cleanup, "curl_easy_cleanup"), resolve(easy_strerror, "curl_easy_strerror");
    resolve(multi_init, "curl_multi_init"), resolve(multi_setopt, "curl_multi_setopt");
    resolve(multi_add_handle, "curl_multi_add_handle"), resolve(multi_remove_handle, "curl_multi_remove_handle");
    resolve(multi_perform, "curl_multi_perform"), resolve(multi_poll, "curl_multi_poll");
    resolve(multi_socket_action, "curl_multi_socket_action"), resolve(multi_info_read, "curl_multi_info_read");
    resolve(multi_cleanup, "curl_multi_cleanup"), resolve(multi_strerror, "curl_multi_strerror");
    resolve(url, "curl_url"), resolve(url_set, "curl_url_set"), resolve(url_get, "curl_url_get");
    resolve(url_cleanup, "curl_url_cleanup"), resolve(url_strerror, "curl_url_strerror");
  }
};

const LoadedCurl& loaded_curl() {
  static const LoadedCurl loaded;
  return loaded;
}

// curl_easy_setopt and curl_multi_setopt take one more argument, whose type the option's number
// says (curl.h's CURLOPTTYPE_ ranges, as libcurl itself reads it): a long, a curl_off_t, or a
// pointer (data, string, list or function: one size here).
template <typename Result, typename Handle, typename Option>
Result set_curl_option(Result (*set)(Handle*, Option, ...), Handle* handle, Option option, va_list value) {
  const long type = static_cast<long>(option) / 10000 * 10000;
  if (type == CURLOPTTYPE_LONG) return set(handle, option, va_arg(value, long));
  if (type == CURLOPTTYPE_OFF_T) return set(handle, option, va_arg(value, curl_off_t));
  return set(handle, option, va_arg(value, void*));
}

}  // namespace

extern "C" {

CURLcode curl_global_init(long flags) { return loaded_curl().global_init(flags); }
void curl_free(void* pointer) { loaded_curl().free(pointer); }

CURL* curl_easy_init() { return loaded_curl().easy_init(); }
CURLcode curl_easy_setopt(CURL* handle, CURLoption option, ...) {
  va_list value;
  va_start(value, option);
  const CURLcode result = set_curl_option(loaded_curl().easy_setopt, handle, option, value);
  va_end(value);
  return result;
}
// Every CURLINFO_ takes a pointer to where the answer goes.
CURLcode curl_easy_getinfo(CURL* handle, CURLINFO info, ...) {
  va_list value;
  va_start(value, info);
  const CURLcode result = loaded_curl().easy_getinfo(handle, info, va_arg(value, void*));
  va_end(value);
  return result;
}
CURLcode curl_easy_perform(CURL* handle) { return loaded_curl().easy_perform(handle); }
void curl_easy_cleanup(CURL* handle) { loaded_curl().easy_cleanup(handle); }
const char* curl_easy_strerror(CURLcode code) { return loaded_curl().easy_strerror(code); }

CURLM* curl_multi_init() { return loaded_curl().multi_init(); }
CURLMcode curl_multi_setopt(CURLM* multi, CURLMoption option, ...) {
  va_list value;
  va_start(value, option);
  const CURLMcode result = set_curl_option(loaded_curl().multi_setopt, multi, option, value);
  va_end(value);
  return result;
}
CURLMcode curl_multi_add_handle(CURLM* multi, CURL* handle) { return loaded_curl().multi_add_handle(multi, handle); }
CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* handle) {
  return loaded_curl().multi_remove_handle(multi, handle);
}
CURLMcode curl_multi_perform(CURLM* multi, int* running) { return loaded_curl().multi_perform(multi, running); }
CURLMcode curl_multi_poll(CURLM* multi, curl_waitfd extra[], unsigned extra_count, int timeout_ms, int* ready) {
  return loaded_curl().multi_poll(multi, extra, extra_count, timeout_ms, ready);
}
CURLMcode curl_multi_socket_action(CURLM* multi, curl_socket_t socket, int events, int* running) {
  return loaded_curl().multi_socket_action(multi, socket, events, running);
}
CURLMsg* curl_multi_info_read(CURLM* multi, int* queued) { return loaded_curl().multi_info_read(multi, queued); }
CURLMcode curl_multi_cleanup(CURLM* multi) { return loaded_curl().multi_cleanup(multi); }
const char* curl_multi_strerror(CURLMcode code) { return loaded_curl().multi_strerror(code); }

CURLU* curl_url() { return loaded_curl().url(); }
CURLUcode curl_url_set(CURLU* url, CURLUPart part, const char* text, unsigned flags) {
  return loaded_curl().url_set(url, part, text, flags);
}
CURLUcode curl_url_get(CURLU* url, CURLUPart part, char** text, unsigned flags) {
  return loaded_curl().url_get(url, part, text, flags);
}
void curl_url_cleanup(CURLU* url) { loaded_curl().url_cleanup(url); }
const char* curl_url_strerror(CURLUcode code) { return loaded_curl().url_strerror(code); }

}  // extern "C"
