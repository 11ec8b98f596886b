#include "cli/demo_launcher.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/private_files.h"
#include "process/child_process.h"

namespace gfp::cli {
namespace {

struct DemoFlags {
  std::string dir;
  std::string fm_library;
  bool keep = false;
  std::string mode;  // empty: the demo program's default, the device-plugin day
};

// Replaces this process with the demo program; returns only when that failed.
int ExecDemo(const DemoFlags& flags) {
  const std::filesystem::path self = process::SelfExecutable();
  auto program = FindPrivateFile(kDemoProgram, "", self);
  if (!program.ok()) {
    std::cerr << "error: " << program.status().message() << "\n";
    return 1;
  }
  std::vector<std::string> args = {program->string(), "--plugin-binary=" + self.string()};
  if (!flags.dir.empty()) args.push_back("--dir=" + flags.dir);
  if (!flags.fm_library.empty()) args.push_back("--fm-library=" + flags.fm_library);
  if (flags.keep) args.push_back("--keep");
  if (!flags.mode.empty()) args.push_back("--mode=" + flags.mode);
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(program->c_str(), argv.data());
  std::cerr << "error: cannot run " << program->string() << ": " << std::strerror(errno) << "\n";
  return 1;
}

}  // namespace

void AddDemoCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DemoFlags>();
  CLI::App* demo = app.add_subcommand(
      "demo", "A simulated HGX H100 node's day: VMs come and go, crashes and restarts");
  demo->add_option("--dir", flags->dir, "where to build the simulated world (kept)");
  demo->add_option("--fm-library", flags->fm_library, "the simulated libnvfm to load");
  demo->add_flag("--keep", flags->keep, "keep the temporary world afterwards");
  demo->add_option("--mode", flags->mode,
                   "device-plugin (the default) or dra: the same day with serve --mode=dra")
      ->check(CLI::IsMember({"device-plugin", "dra"}));
  demo->callback([flags, exit_code] { *exit_code = ExecDemo(*flags); });
}

}  // namespace gfp::cli
