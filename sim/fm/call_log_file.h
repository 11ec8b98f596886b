// Trimming the simulated FM's call log file. The simulator runs inside serve (dlopen'ed as
// libnvfm), so its memory is serve's memory as the soak benchmark measures it: the trim streams
// the file instead of holding the log.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace gfp::fmsim {

// Keeps the last `keep` lines of the text file at `path`, in order and byte for byte, through a
// fixed buffer into `path`.tmp renamed over it; a file of at most `keep` lines is left as it is.
// Returns how many lines the file holds afterwards. A last line without its newline counts as
// one and is kept as it is.
Result<std::uint64_t> KeepLastLines(const std::string& path, std::uint64_t keep);

}  // namespace gfp::fmsim
