// `gpu-fabric-plugin journal history|state|verify|export` (SPEC §2.2): read-only views of the
// journal, safe while `serve` runs.
#pragma once

#include <CLI/CLI.hpp>

namespace gfp::cli {

// Adds the `journal` subcommand and its verbs to `app`; the verbs set *exit_code when they run.
void AddJournalCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
