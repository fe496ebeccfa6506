// One check per rule; each failure is a util::UsageError with one clear sentence.
#pragma once

#include "config/config.hpp"
#include "options/given.hpp"

namespace testio::cli {

using options::GivenOptions;

void validate(const config::Config& config, const GivenOptions& given);

}  // namespace testio::cli
