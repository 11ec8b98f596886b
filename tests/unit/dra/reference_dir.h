// The checkout's neighbour ../shared/reference (schemas, partition tables), for the tests that
// check against it; "" when it is absent (they skip).
#pragma once

#include <string>

namespace gfp::plugin::dra {

inline const std::string kReference = GFP_REFERENCE_DIR;

}  // namespace gfp::plugin::dra
