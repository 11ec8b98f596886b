// Runs the real gpu-fabric-plugin binary (GFP_BINARY) with `args` through the shell and
// collects what it printed and its exit code; the journal CLI tests' one way to call it.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace gfp::testing {

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout, and stderr unless `redirect` sends it elsewhere
};

inline CliRun Cli(const std::string& args, const std::string& redirect = "2>&1") {
  const std::string command = std::string(GFP_BINARY) + " " + args + " " + redirect;
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) run.output += buffer.data();
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace gfp::testing
