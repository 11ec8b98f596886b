// A SQLite VFS for tests that simulates power loss and storage errors. It wraps the default
// ("unix") VFS and, once installed, is itself the default: the real store::Journal uses it with
// no change to src/store/.
//
// The model:
// - Durable means "reached the real file". Each xWrite and xTruncate of a named file is kept in
//   memory, in order, as pending; reads and xFileSize see the real file with the pending changes
//   applied on top (as the OS page cache does). xSync of a file writes its pending changes to the
//   real file (no real fsync: durability is what the shim says it is, which keeps sweeps fast;
//   keep the files in a temp dir). Creating and deleting files is durable at once (SQLite syncs
//   the directory where that matters).
// - A power cut happens at a chosen point: the Nth xWrite or xSync overall (counted from the last
//   Reset). That call does not complete, and then, by mode: every un-synced change is lost
//   (kDiscardUnsynced); or only a prefix of the bytes of the write at the cut (or, for a cut at
//   xSync, of that file's last pending write) reaches the file (kTearLast); or every file's
//   pending changes reach it in order and the last write is torn (kKeepPendingTearLast: the OS
//   had flushed all but the end). From then on every I/O fails (the machine is off): opens,
//   reads, writes, syncs, locks, shared-memory maps, deletes, access checks. Closing still frees
//   the handle. Reset() is the reboot: pending changes vanish, counters restart at 0.
// - Errors: the Nth xWrite / xSync / xOpen / xTruncate (counted per kind) fails with a given
//   SQLite code (SQLITE_IOERR_*, SQLITE_FULL, ...), once or on every call of that kind from the
//   Nth on until ClearFaults(). A failed call changes nothing; a failed xSync leaves the file's
//   changes pending (a later successful xSync persists them).
// - The -shm wal-index is mapped through xShmMap and passes through (it is memory: SQLite
//   rebuilds it when the first connection opens after a crash). Files without a name (SQLite's
//   temp files) pass through uncounted, but fail after a cut like the rest.
// Not modelled: reordering of writes within one sync interval other than "a prefix in order",
// sector atomicity (a tear may split a sector), lost or reordered directory entries, a failed
// fsync dropping the dirty pages (Linux "fsyncgate"), and bit rot (see tests of damaged files).
//
// The shim is process-global (SQLite's VFS list is) and guarded by one mutex.
#pragma once

#include <cstdint>
#include <string>

namespace gfp::testing::fault {

enum class CutMode { kDiscardUnsynced, kTearLast, kKeepPendingTearLast };
enum class IoOp { kWrite, kSync, kOpen, kTruncate };

const char* CutModeName(CutMode mode);
const char* IoOpName(IoOp op);

struct IoCounters {
  std::uint64_t writes = 0;
  std::uint64_t syncs = 0;
  std::uint64_t opens = 0;
  std::uint64_t truncates = 0;
  std::uint64_t points() const { return writes + syncs; }  // where a power cut can happen
  std::uint64_t of(IoOp op) const;
};

// Registers the shim as the default VFS (once per process; later calls do nothing). Returns ""
// or what failed.
std::string InstallFaultVfs();

// The reboot: un-synced changes are gone, the power is on, counters restart, no cut or fault is
// armed. Call it when no SQLite file is open (returns how many still are, which should be 0).
int ResetFaultVfs();

// Cuts the power at the point-th xWrite/xSync from now on (1-based). tear_seed picks the length
// of a torn prefix.
void ArmPowerCut(std::uint64_t point, CutMode mode, std::uint64_t tear_seed);
// Cancels a cut armed and not reached.
void DisarmPowerCut();
// Fails the nth call of `op` (1-based, counted since the last reset) with sqlite_code; sticky:
// also every later call of that op until ClearFaults().
void ArmFault(IoOp op, std::uint64_t nth, int sqlite_code, bool sticky);
void ClearFaults();

bool PoweredOff();
// How many armed faults fired since the last reset.
std::uint64_t FaultsFired();
IoCounters Counters();

}  // namespace gfp::testing::fault
