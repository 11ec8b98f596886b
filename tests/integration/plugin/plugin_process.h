// The names integration and crash tests use for running the real `gpu-fabric-plugin` binary (or
// any program) as a child process. They are the shared harness of src/process (the demo and the
// benchmarks use it too): spawn with arguments and environment, capture stdout+stderr to a log
// file, wait with a timeout, SIGTERM then SIGKILL, SIGKILL at an arbitrary moment.
#pragma once

#include "process/child_process.h"

namespace gfp::testing {

using PluginProcess = gfp::process::ChildProcess;
using gfp::process::CommandResult;
using gfp::process::ExitStatus;
using gfp::process::ProcessOptions;
using gfp::process::ReadFileOrEmpty;
using gfp::process::RunCommand;
using gfp::process::WaitUntil;

}  // namespace gfp::testing
