// `gpu-fabric-plugin journal history|state|verify|export` (SPEC §2.2) and `copy`: read-only views
// of the journal, safe while `serve` runs.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace gfp::store {
struct StoredEvent;
}

namespace gfp::cli {

struct JournalQuery {
  std::string path;
  std::string format = "text";  // text or json
  std::optional<std::uint32_t> partition;
  std::string device;
  std::string claim;                // history: a DRA claim's uid, or its namespace/name
  std::string since;                // RFC 3339
  std::optional<std::uint64_t> at;  // none: the latest state; 0: before any event
  std::string anchor;               // verify: "SEQ:HASH" recorded earlier, or empty
  bool follow = false;              // export: keep printing new events until SIGTERM/SIGINT
  std::string to;                   // copy: a new file's path, or "-" for stdout
};

// The verbs, printing to stdout; each returns the process exit code (0 ok, 1 damaged or the
// output could not be written, 2 unusable arguments or file; see cli/journal_output.h).
int PrintHistory(const JournalQuery& query, bool filtered);
int PrintState(const JournalQuery& query);
int VerifyJournal(const JournalQuery& query);
// `export`, and with query.follow `export --follow` (cli/journal_follow.cc).
int ExportJournal(const JournalQuery& query);
// `copy --to FILE|-`: a consistent SQLite copy, a new file or stdout (cli/journal_copy.cc).
int CopyJournal(const JournalQuery& query);

// Decodes one stored event and prints it as one JSON line (the `export` object) on stdout.
Status PrintEventJsonLine(const store::StoredEvent& stored);

// Adds the `journal` subcommand and its verbs to `app`; the verbs set *exit_code when they run.
void AddJournalCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
