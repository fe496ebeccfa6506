#include "lifecycle/deadline.hpp"

#include "lifecycle/deadline_race.hpp"

namespace testio::lifecycle {

template asio::awaitable<void> within(asio::awaitable<void>, std::chrono::steady_clock::duration, std::string);
template asio::awaitable<std::size_t> within(asio::awaitable<std::size_t>, std::chrono::steady_clock::duration,
                                             std::string);

}  // namespace testio::lifecycle
