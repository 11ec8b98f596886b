// A parent for the parent-death test (child_process_test.cc): starts `sleep 300` through
// ChildProcess, prints "child <pid>" and waits to be killed. Usage: process_test_parent <log>
#include <unistd.h>

#include <cstdio>

#include "process/child_process.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <log file of the child>\n", argv[0]);
    return 2;
  }
  gfp::process::ProcessOptions o;
  o.binary = "/bin/sh";
  o.args = {"-c", "exec sleep 300"};
  o.log_path = argv[1];
  auto child = gfp::process::ChildProcess::Start(o);
  if (!child.ok()) {
    std::fprintf(stderr, "%s\n", child.status().message().c_str());
    return 1;
  }
  std::printf("child %d\n", static_cast<int>((*child)->pid()));
  std::fflush(stdout);
  while (true) ::pause();  // until SIGKILLed; the child must not outlive this
}
