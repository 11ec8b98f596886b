// `journal export [--follow]`: the whole journal as JSON lines, then (with --follow) every new
// event as `serve` appends it, until SIGTERM/SIGINT. The journal is polled read-only, each poll
// its own short read transaction, so the writer is never blocked and its checkpoints are never
// held back by a snapshot this reader keeps open between polls.
#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "cli/journal_command.h"
#include "cli/journal_output.h"
#include "store/hash_chain.h"
#include "store/journal.h"

namespace gfp::cli {
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(250);
// Events printed per read transaction: a long first pass over a big journal is cut into short
// transactions too, so even then the writer's checkpoints are not held back for long.
constexpr int kMaxBatch = 1000;
// Sleep in slices so a stop request is seen quickly (sleep_for itself resumes after a signal).
constexpr auto kSleepSlice = std::chrono::milliseconds(25);

volatile std::sig_atomic_t stop_requested = 0;

void RequestStop(int) { stop_requested = 1; }

// SIGTERM/SIGINT ask for a clean stop; SA_RESTART keeps a write they interrupt from failing.
// SIGPIPE is ignored so a closed pipe is a write error reported with exit 1, not a silent death.
void InstallStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = RequestStop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void SleepUntilNextPoll() {
  const auto until = std::chrono::steady_clock::now() + kPollPeriod;
  while (!stop_requested && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(kSleepSlice);
  }
}

// Where the follower stands in the chain: the last event printed and its hash.
struct FollowPosition {
  std::uint64_t seq = 0;
  store::Hash hash = store::kZeroHash;
};

// Prints up to kMaxBatch events after `pos` and advances it; *more says the batch was full.
// Each poll re-reads the last printed event and checks that its hash is the one seen before, so
// the chain is checked across polls too.
Status PrintNewEvents(const store::Journal& journal, FollowPosition& pos, bool* more) {
  bool saw_last = pos.seq == 0;
  int printed = 0;
  *more = false;
  Status status = journal.ForEachVerified(
      pos.seq == 0 ? 1 : pos.seq, 0, [&](const store::StoredEvent& stored) -> Status {
        if (stored.seq == pos.seq) {
          saw_last = true;
          if (stored.hash == pos.hash) return Status::Ok();
          return DataLoss("journal event seq " + std::to_string(pos.seq) +
                          " changed while it was followed: its chain hash was " +
                          store::HashToHex(pos.hash) + ", now " + store::HashToHex(stored.hash));
        }
        if (printed == kMaxBatch) {
          *more = true;
          // Not an error: stops the scan, which ends this read transaction.
          return ResourceExhausted("batch of " + std::to_string(kMaxBatch) + " events printed");
        }
        GFP_RETURN_IF_ERROR(PrintEventJsonLine(stored));
        pos.seq = stored.seq;
        pos.hash = stored.hash;
        ++printed;
        return Status::Ok();
      });
  if (*more) return Status::Ok();
  GFP_RETURN_IF_ERROR(status);
  if (!saw_last) {
    return DataLoss("journal event seq " + std::to_string(pos.seq) +
                    " disappeared while it was followed (the journal was truncated or replaced)");
  }
  return Status::Ok();
}

int Follow(const store::Journal& journal) {
  InstallStopHandlers();
  FollowPosition pos;
  while (true) {
    // Read before checking the flag: events appended before the stop request are printed.
    const bool stopping = stop_requested != 0;
    bool more = false;
    Status status = PrintNewEvents(journal, pos, &more);
    std::cout.flush();
    if (OutputFailed()) return FinishOutput(kExitDamaged);
    if (!status.ok()) {
      PrintError(status);
      return FinishOutput(kExitDamaged);
    }
    if (more) continue;  // the rest at once, in the next transaction
    // A deleted or replaced journal: serve writes elsewhere (or nowhere) now; a restarted
    // follower opens whatever is at the path.
    if (Status moved = journal.CheckStillAtPath(); !moved.ok()) {
      PrintError(moved);
      return FinishOutput(kExitDamaged);
    }
    if (stopping) return FinishOutput(kExitOk);
    SleepUntilNextPoll();
  }
}

}  // namespace

int ExportJournal(const JournalQuery& o) {
  if (!o.follow) return PrintHistory(o, false);
  auto journal = store::Journal::Open(o.path, store::OpenMode::kReadOnly);
  if (!journal.ok()) {
    PrintError(journal.status());
    return kExitUnusable;
  }
  return Follow(**journal);
}

}  // namespace gfp::cli
