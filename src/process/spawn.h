// Starting a child process for ChildProcess (child_process.h says what the child gets): fork,
// then only async-signal-safe calls in the child until execve.
#pragma once

#include <sys/types.h>

#include "common/status.h"
#include "process/child_process.h"

namespace gfp::process {

// The child's pid once execve succeeded; an error naming the binary, the step that failed in the
// child (opening the log, execve, ...) and why.
Result<pid_t> Spawn(const ProcessOptions& options);

}  // namespace gfp::process
