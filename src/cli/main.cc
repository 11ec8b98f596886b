// gpu-fabric-plugin: one binary, subcommands per SPEC §2.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/demo_launcher.h"
#include "cli/flag_values.h"
#include "cli/journal_command.h"
#include "cli/log_setup.h"
#include "cli/module_mapping_command.h"
#include "cli/serve_command.h"

namespace {

int Main(int argc, char** argv) {
  // Nothing here writes stdout through C stdio, so std::cout keeps its own buffer (the journal
  // verbs print up to millions of lines).
  std::ios::sync_with_stdio(false);
  // Every log line of every subcommand goes to stderr (SPEC §2.1, docs/operations.md); stdout
  // carries only a command's real output (journal history, state, ...).
  gfp::cli::InstallLogging();
  CLI::App app{
      "gpu-fabric-plugin: KubeVirt GPU device plugin with NVIDIA Fabric Manager partitions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", GFP_VERSION);
  int exit_code = 0;
  gfp::cli::AddServeCommand(app, &exit_code);
  gfp::cli::AddJournalCommand(app, &exit_code);
  gfp::cli::AddDemoCommand(app, &exit_code);
  gfp::cli::AddModuleMappingCommand(app, &exit_code);
  // CLI11 would take the argument after `--flag=` as the flag's value.
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  // serve --log-format=json: its command-line errors are JSON lines too.
  if (gfp::cli::ServeAsksForJson(args)) gfp::cli::UseLogFormat(gfp::LogFormat::kJson);
  if (const gfp::Status empty = gfp::cli::CheckNoEmptyValues(args); !empty.ok()) {
    gfp::cli::ReportStartupError(empty.message());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0 || gfp::cli::CurrentLogFormat() != gfp::LogFormat::kJson) {
      return app.exit(e);  // --help and --version print to stdout
    }
    gfp::cli::ReportStartupError(e.what());
    return e.get_exit_code();
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Errors are values; an exception reaching here is a bug: say so instead of aborting silently.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gpu-fabric-plugin: unexpected exception: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "gpu-fabric-plugin: unexpected exception\n";
  }
  return 70;  // EX_SOFTWARE
}
