// `gpu-fabric-plugin journal history|state|verify|export` (SPEC §2.2): read-only views of the
// journal, safe while `serve` runs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace gfp::cli {

struct JournalQuery {
  std::string path;
  std::string format = "text";  // text or json
  std::optional<std::uint32_t> partition;
  std::string device;
  std::string since;                // RFC 3339
  std::optional<std::uint64_t> at;  // none: the latest state; 0: before any event
};

// The verbs, printing to stdout; each returns the process exit code (0 ok, 1 damaged or the
// output could not be written, 2 unusable arguments or file; see cli/journal_output.h).
int PrintHistory(const JournalQuery& query, bool filtered);
int PrintState(const JournalQuery& query);
int VerifyJournal(const JournalQuery& query);

// Adds the `journal` subcommand and its verbs to `app`; the verbs set *exit_code when they run.
void AddJournalCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
