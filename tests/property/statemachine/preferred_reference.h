// The first partition picker, kept as the oracle of PreferredByPartition (see the .cc).
#pragma once

#include <string>
#include <vector>

#include "statemachine/preferred.h"

namespace gfp::sm {

Result<std::vector<std::string>> ReferencePreferredByPartition(const State& state,
                                                               const PreferredRequest& request);

}  // namespace gfp::sm
