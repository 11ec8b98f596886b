// What a benchmark reads from serve's log: the line the plugin writes after recovering its
// journal ("journal ... recovered in 1.2 ms (snapshot at seq N, M events replayed)").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace gfp::bench {

// The last recovery line at or after byte `from` of `log` (a log appended to by several starts
// is read only from where the latest start began), from "recovered in" on; a note when none.
std::string RecoveryLine(const std::filesystem::path& log, std::uintmax_t from = 0);

// The milliseconds of a RecoveryLine ("recovered in 1.2 ms ..." -> 1.2); NaN when it has none.
double RecoveryMillis(const std::string& recovery_line);

}  // namespace gfp::bench
