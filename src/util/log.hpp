// Diagnostics through spdlog. Include this, not <spdlog/spdlog.h>: it also keeps fmt's formatting
// core out of every unit that logs.
//
// Why: spdlog formats with fmt::detail::vformat_to<char>, which Debian's libfmt (9.x) compiles and
// exports, but fmt's header declares no extern template for it. So every unit that logged
// instantiated its own copy, with the float and integer writers under it (about 80 KB of code per
// unit, a quarter of session/client.cpp's compile time at -O3), and the linker threw all but one
// away. The declaration below makes each unit call the library's copy instead.
#pragma once

#include <fmt/format.h>

#if FMT_VERSION >= 90000 && FMT_VERSION < 100000
FMT_BEGIN_NAMESPACE
FMT_BEGIN_DETAIL_NAMESPACE
extern template void vformat_to<char>(buffer<char>& buf, basic_string_view<char> format,
                                      basic_format_args<FMT_BUFFER_CONTEXT(type_identity_t<char>)> args,
                                      locale_ref loc);
FMT_END_DETAIL_NAMESPACE
FMT_END_NAMESPACE
#endif

#include <spdlog/spdlog.h>
