// Standalone Asio's own implementation, compiled once. meson.build sets ASIO_SEPARATE_COMPILATION
// for every unit, so the headers declare the scheduler, the epoll reactor, the socket calls and
// the error categories instead of defining them inline; without it each of the 60 units that use
// Asio compiled all of that again at -O3 and the linker kept one copy.
#include <asio/impl/src.hpp>
