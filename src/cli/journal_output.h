// Shared by the `journal` verbs: error reporting, the end-of-output check and argument checks.
#pragma once

#include <string>

#include "common/status.h"

namespace gfp::cli {

// Exit codes of the `journal` verbs (CLI11's own parse errors exit 105-114, see main.cc).
inline constexpr int kExitOk = 0;
inline constexpr int kExitDamaged = 1;   // damage found, or the output could not be written
inline constexpr int kExitUnusable = 2;  // unusable arguments or file

// "error: <message>" on stderr, control characters escaped.
void PrintError(const Status& status);

// Flushes stdout; when anything written to it failed (disk full, closed pipe), reports it on
// stderr and returns kExitDamaged, otherwise `exit_code`.
int FinishOutput(int exit_code);

// True once writing to stdout has failed (a scan can stop early).
bool OutputFailed();

// Checks the ranges an RFC 3339 time's fields must be in (month 1-12, day within the month,
// hour 0-23, minute 0-59, second 0-60, offset up to 23:59) before it is converted.
Status CheckRfc3339Ranges(const std::string& text);

}  // namespace gfp::cli
