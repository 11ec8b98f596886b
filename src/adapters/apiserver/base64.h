// Standard base64 (RFC 4648 §4, with padding), as kubeconfig's *-data fields hold it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::apiserver {

// Decodes `text`; line breaks (\n, \r) are skipped as Go's decoder skips them. Anything else that
// is not of the alphabet, or a length that is not a whole number of quads, is an InvalidArgument
// error naming the offset only: the text may be a private key, so none of it is quoted.
Result<std::string> DecodeBase64(std::string_view text);

}  // namespace gfp::adapters::apiserver
