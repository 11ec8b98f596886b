// gpu-fabric-plugin: one binary, subcommands per SPEC §2.
#include <CLI/CLI.hpp>

#include "cli/demo/demo_command.h"
#include "cli/journal_command.h"
#include "cli/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "gpu-fabric-plugin: KubeVirt GPU device plugin with NVIDIA Fabric Manager partitions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", GFP_VERSION);
  int exit_code = 0;
  gfp::cli::AddServeCommand(app, &exit_code);
  gfp::cli::AddJournalCommand(app, &exit_code);
  gfp::cli::AddDemoCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
