// Runs the real gpu-fabric-plugin binary (GFP_BINARY), or another program, through the shared
// child-process harness (src/process) and collects what it printed and its exit code; the
// journal CLI tests' one way to call it.
#pragma once

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "process/child_process.h"

namespace gfp::testing {

struct CliRun {
  int exit_code = -1;  // -1: killed by a signal, or not started (output says why)
  std::string output;
};

// What a run collects.
enum class CliOutput {
  kBoth,              // stdout and stderr, interleaved (2>&1)
  kStdout,            // stdout; stderr dropped (2>/dev/null)
  kStderr,            // stderr; stdout dropped (2>&1 >/dev/null)
  kStderrStdoutFull,  // stderr; stdout to /dev/full, where every write fails (2>&1 >/dev/full)
};

// Runs `command_line`, split at spaces (no quoting: the tests' paths have none), with `env` set.
inline CliRun RunProgram(const std::string& command_line, CliOutput output = CliOutput::kBoth,
                         const std::map<std::string, std::string>& env = {}) {
  std::istringstream words(command_line);
  std::vector<std::string> argv;
  for (std::string word; words >> word;) argv.push_back(word);
  CliRun run;
  if (argv.empty()) return run;
  TempDir dir;
  process::ProcessOptions o;
  o.binary = argv[0];
  o.args.assign(argv.begin() + 1, argv.end());
  o.env = env;
  o.log_path = dir.path() / "output";
  if (output == CliOutput::kStdout) {
    o.stdout_path = o.log_path;
    o.log_path = "/dev/null";
  } else if (output != CliOutput::kBoth) {
    o.stdout_path = output == CliOutput::kStderr ? "/dev/null" : "/dev/full";
  }
  auto result = process::RunCommand(o, std::chrono::seconds(60));
  if (!result.ok()) {
    run.output = result.status().message();
    return run;
  }
  run.exit_code = result->status.exited ? result->status.code : -1;
  run.output = output == CliOutput::kStdout ? result->stdout_text : result->output;
  return run;
}

// `gpu-fabric-plugin <args>`.
inline CliRun Cli(const std::string& args, CliOutput output = CliOutput::kBoth) {
  return RunProgram(std::string(GFP_BINARY) + " " + args, output);
}

}  // namespace gfp::testing
