// The fault VFS (see fault_vfs.h for the model). Pending changes are kept per path, so that two
// handles on one file see the same content, and are written with their own descriptor so that
// the wrapped VFS's handles and locks are never disturbed.
#include "common/fault_vfs.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace gfp::testing::fault {
namespace {

// One pending change: a write (bytes at offset) or a truncate (to offset).
struct PendingOp {
  bool truncate = false;
  std::int64_t offset = 0;
  std::vector<unsigned char> bytes;
};

struct PathState {
  std::string path;
  int fd = -1;  // ours, for making changes durable
  std::vector<PendingOp> pending;
  ~PathState() {
    if (fd >= 0) ::close(fd);
  }
};

struct Fault {
  IoOp op;
  std::uint64_t nth;
  int code;
  bool sticky;
};

struct Shim {
  std::mutex mu;
  sqlite3_vfs* real = nullptr;
  sqlite3_vfs vfs{};
  std::map<std::string, std::shared_ptr<PathState>> paths;
  IoCounters counters;
  std::optional<std::uint64_t> cut_point;
  CutMode cut_mode = CutMode::kDiscardUnsynced;
  std::uint64_t tear_seed = 0;
  bool off = false;
  std::vector<Fault> faults;
  std::uint64_t fired = 0;
  int open_files = 0;
};

Shim& S() {
  static Shim* shim = new Shim();  // never destroyed: SQLite may use it until exit
  return *shim;
}

struct FaultFile {
  sqlite3_file base;
  std::shared_ptr<PathState>* state;  // null for nameless (temp) files
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

FaultFile* F(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f); }

std::uint64_t& CounterOf(IoCounters& c, IoOp op) {
  switch (op) {
    case IoOp::kWrite:
      return c.writes;
    case IoOp::kSync:
      return c.syncs;
    case IoOp::kOpen:
      return c.opens;
    case IoOp::kTruncate:
      return c.truncates;
  }
  return c.writes;
}

// Counts a call of `op` and returns the SQLite code of a fault armed for it, or SQLITE_OK.
int CountAndCheckFault(Shim& s, IoOp op) {
  const std::uint64_t n = ++CounterOf(s.counters, op);
  for (const Fault& f : s.faults) {
    if (f.op == op && (n == f.nth || (f.sticky && n > f.nth))) {
      ++s.fired;
      return f.code;
    }
  }
  return SQLITE_OK;
}

bool EnsureFd(PathState& p) {
  if (p.fd < 0) p.fd = ::open(p.path.c_str(), O_WRONLY | O_CLOEXEC);
  return p.fd >= 0;
}

bool Persist(PathState& p, const PendingOp& op, std::size_t write_bytes) {
  if (!EnsureFd(p)) return false;
  if (op.truncate) return ::ftruncate(p.fd, op.offset) == 0;
  return ::pwrite(p.fd, op.bytes.data(), write_bytes, op.offset) ==
         static_cast<ssize_t>(write_bytes);
}

std::size_t TornLength(std::size_t size, std::uint64_t seed) {
  if (size <= 1) return 0;
  return 1 + static_cast<std::size_t>(seed % (size - 1));  // 1 .. size-1 bytes
}

// The power goes off. `cut_file` is the file of the call at the cut; `cut_write` that call's
// data when it was a write (not yet pending).
void CutPower(Shim& s, PathState* cut_file, const PendingOp* cut_write) {
  s.off = true;
  const PendingOp* torn = cut_write;
  if (torn == nullptr && cut_file != nullptr) {
    for (auto it = cut_file->pending.rbegin(); it != cut_file->pending.rend(); ++it) {
      if (!it->truncate) {
        torn = &*it;
        break;
      }
    }
  }
  if (s.cut_mode == CutMode::kKeepPendingTearLast) {
    for (auto& [path, p] : s.paths) {
      for (const PendingOp& op : p->pending) {
        if (&op == torn) break;  // the torn write is the last op of its file
        Persist(*p, op, op.bytes.size());
      }
    }
  }
  if (s.cut_mode != CutMode::kDiscardUnsynced && torn != nullptr && cut_file != nullptr) {
    Persist(*cut_file, *torn, TornLength(torn->bytes.size(), s.tear_seed));
  }
  for (auto& [path, p] : s.paths) p->pending.clear();
}

// Counts a write or sync as a cut point; true when the power was cut there.
bool AtCutPoint(Shim& s, IoOp op, PathState* file, const PendingOp* write) {
  if (!s.cut_point) return false;
  const std::uint64_t point = s.counters.points() + (op == IoOp::kWrite || op == IoOp::kSync);
  if (point != *s.cut_point) return false;
  ++CounterOf(s.counters, op);
  CutPower(s, file, write);
  return true;
}

// --- io methods -------------------------------------------------------------------------------

int xClose(sqlite3_file* f) {
  FaultFile* ff = F(f);
  int rc = ff->real()->pMethods ? ff->real()->pMethods->xClose(ff->real()) : SQLITE_OK;
  std::lock_guard lock(S().mu);
  delete ff->state;
  ff->state = nullptr;
  --S().open_files;
  return S().off ? SQLITE_OK : rc;
}

// The real file's bytes [offset, offset+amount) with the pending changes applied; the logical
// size in *size.
int ReadThrough(FaultFile* ff, unsigned char* out, int amount, std::int64_t offset,
                std::int64_t* size) {
  sqlite3_file* real = ff->real();
  int rc = real->pMethods->xRead(real, out, amount, offset);
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
  sqlite3_int64 real_size = 0;
  rc = real->pMethods->xFileSize(real, &real_size);
  if (rc != SQLITE_OK) return rc;
  *size = real_size;
  if (ff->state == nullptr) return SQLITE_OK;
  const std::int64_t end = offset + amount;
  for (const PendingOp& op : (*ff->state)->pending) {
    if (op.truncate) {
      *size = op.offset;
      if (op.offset < end) {
        const std::int64_t from = std::max(op.offset, offset);
        std::memset(out + (from - offset), 0, static_cast<std::size_t>(end - from));
      }
      continue;
    }
    const std::int64_t op_end = op.offset + static_cast<std::int64_t>(op.bytes.size());
    *size = std::max(*size, op_end);
    const std::int64_t lo = std::max(op.offset, offset), hi = std::min(op_end, end);
    if (lo < hi) {
      std::memcpy(out + (lo - offset), op.bytes.data() + (lo - op.offset),
                  static_cast<std::size_t>(hi - lo));
    }
  }
  return SQLITE_OK;
}

int xRead(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  std::lock_guard lock(S().mu);
  if (S().off) return SQLITE_IOERR_READ;
  auto* bytes = static_cast<unsigned char*>(out);
  std::int64_t size = 0;
  const int rc = ReadThrough(F(f), bytes, amount, offset, &size);
  if (rc != SQLITE_OK) return rc;
  if (offset + amount <= size) return SQLITE_OK;
  const std::int64_t valid = std::max<std::int64_t>(0, size - offset);
  std::memset(bytes + valid, 0, static_cast<std::size_t>(amount - valid));
  return SQLITE_IOERR_SHORT_READ;
}

int xWrite(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  Shim& s = S();
  std::lock_guard lock(s.mu);
  if (s.off) return SQLITE_IOERR_WRITE;
  FaultFile* ff = F(f);
  if (ff->state == nullptr) return ff->real()->pMethods->xWrite(ff->real(), data, amount, offset);
  PendingOp op;
  op.offset = offset;
  const auto* bytes = static_cast<const unsigned char*>(data);
  op.bytes.assign(bytes, bytes + amount);
  if (AtCutPoint(s, IoOp::kWrite, ff->state->get(), &op)) return SQLITE_IOERR_WRITE;
  if (int rc = CountAndCheckFault(s, IoOp::kWrite); rc != SQLITE_OK) return rc;
  (*ff->state)->pending.push_back(std::move(op));
  return SQLITE_OK;
}

int xTruncate(sqlite3_file* f, sqlite3_int64 size) {
  Shim& s = S();
  std::lock_guard lock(s.mu);
  if (s.off) return SQLITE_IOERR_TRUNCATE;
  FaultFile* ff = F(f);
  if (ff->state == nullptr) return ff->real()->pMethods->xTruncate(ff->real(), size);
  if (int rc = CountAndCheckFault(s, IoOp::kTruncate); rc != SQLITE_OK) return rc;
  PendingOp op;
  op.truncate = true;
  op.offset = size;
  (*ff->state)->pending.push_back(std::move(op));
  return SQLITE_OK;
}

int xSync(sqlite3_file* f, int flags) {
  Shim& s = S();
  std::lock_guard lock(s.mu);
  if (s.off) return SQLITE_IOERR_FSYNC;
  FaultFile* ff = F(f);
  if (ff->state == nullptr) return ff->real()->pMethods->xSync(ff->real(), flags);
  PathState& p = **ff->state;
  if (AtCutPoint(s, IoOp::kSync, &p, nullptr)) return SQLITE_IOERR_FSYNC;
  if (int rc = CountAndCheckFault(s, IoOp::kSync); rc != SQLITE_OK) return rc;
  for (const PendingOp& op : p.pending) {
    if (!Persist(p, op, op.bytes.size())) return SQLITE_IOERR_FSYNC;
  }
  p.pending.clear();
  return SQLITE_OK;
}

int xFileSize(sqlite3_file* f, sqlite3_int64* size) {
  std::lock_guard lock(S().mu);
  if (S().off) return SQLITE_IOERR_FSTAT;
  FaultFile* ff = F(f);
  if (ff->state == nullptr) return ff->real()->pMethods->xFileSize(ff->real(), size);
  unsigned char ignored = 0;
  std::int64_t logical = 0;
  const int rc = ReadThrough(ff, &ignored, 1, 0, &logical);
  *size = logical;
  return rc;
}

int xLock(sqlite3_file* f, int level) {
  if (PoweredOff()) return SQLITE_IOERR_LOCK;
  return F(f)->real()->pMethods->xLock(F(f)->real(), level);
}
int xUnlock(sqlite3_file* f, int level) {
  return F(f)->real()->pMethods->xUnlock(F(f)->real(), level);
}
int xCheckReservedLock(sqlite3_file* f, int* out) {
  if (PoweredOff()) return SQLITE_IOERR_CHECKRESERVEDLOCK;
  return F(f)->real()->pMethods->xCheckReservedLock(F(f)->real(), out);
}
int xFileControl(sqlite3_file* f, int op, void* arg) {
  return F(f)->real()->pMethods->xFileControl(F(f)->real(), op, arg);
}
int xSectorSize(sqlite3_file* f) { return F(f)->real()->pMethods->xSectorSize(F(f)->real()); }
int xDeviceCharacteristics(sqlite3_file* f) {
  return F(f)->real()->pMethods->xDeviceCharacteristics(F(f)->real());
}
int xShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  if (PoweredOff()) return SQLITE_IOERR_SHMMAP;
  return F(f)->real()->pMethods->xShmMap(F(f)->real(), region, size, extend, out);
}
int xShmLock(sqlite3_file* f, int offset, int n, int flags) {
  if (PoweredOff() && (flags & SQLITE_SHM_LOCK)) return SQLITE_IOERR_SHMLOCK;
  return F(f)->real()->pMethods->xShmLock(F(f)->real(), offset, n, flags);
}
void xShmBarrier(sqlite3_file* f) { F(f)->real()->pMethods->xShmBarrier(F(f)->real()); }
int xShmUnmap(sqlite3_file* f, int delete_flag) {
  return F(f)->real()->pMethods->xShmUnmap(F(f)->real(), delete_flag);
}

// Version 2: no xFetch/xUnfetch, so SQLite never memory-maps the file past the shim.
const sqlite3_io_methods kMethods = {2,
                                     xClose,
                                     xRead,
                                     xWrite,
                                     xTruncate,
                                     xSync,
                                     xFileSize,
                                     xLock,
                                     xUnlock,
                                     xCheckReservedLock,
                                     xFileControl,
                                     xSectorSize,
                                     xDeviceCharacteristics,
                                     xShmMap,
                                     xShmLock,
                                     xShmBarrier,
                                     xShmUnmap,
                                     nullptr,
                                     nullptr};

// --- vfs methods ------------------------------------------------------------------------------

int xOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  Shim& s = S();
  FaultFile* ff = F(f);
  ff->base.pMethods = nullptr;
  ff->state = nullptr;
  {
    std::lock_guard lock(s.mu);
    if (s.off) return SQLITE_IOERR;
    if (name != nullptr) {
      if (int rc = CountAndCheckFault(s, IoOp::kOpen); rc != SQLITE_OK) return rc;
    }
  }
  const int rc = s.real->xOpen(s.real, name, ff->real(), flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  std::lock_guard lock(s.mu);
  if (name != nullptr) {
    auto& state = s.paths[name];
    if (!state) {
      state = std::make_shared<PathState>();
      state->path = name;
    }
    ff->state = new std::shared_ptr<PathState>(state);
  }
  ++s.open_files;
  ff->base.pMethods = &kMethods;
  return SQLITE_OK;
}

int xDelete(sqlite3_vfs*, const char* name, int sync_dir) {
  Shim& s = S();
  {
    std::lock_guard lock(s.mu);
    if (s.off) return SQLITE_IOERR_DELETE;
    s.paths.erase(name);  // open handles keep their (now orphaned) state
  }
  return s.real->xDelete(s.real, name, sync_dir);
}

int xAccess(sqlite3_vfs*, const char* name, int flags, int* out) {
  if (PoweredOff()) return SQLITE_IOERR_ACCESS;
  return S().real->xAccess(S().real, name, flags, out);
}

}  // namespace

const char* CutModeName(CutMode mode) {
  switch (mode) {
    case CutMode::kDiscardUnsynced:
      return "discard-unsynced";
    case CutMode::kTearLast:
      return "tear-last";
    case CutMode::kKeepPendingTearLast:
      return "keep-pending-tear-last";
  }
  return "?";
}

const char* IoOpName(IoOp op) {
  switch (op) {
    case IoOp::kWrite:
      return "xWrite";
    case IoOp::kSync:
      return "xSync";
    case IoOp::kOpen:
      return "xOpen";
    case IoOp::kTruncate:
      return "xTruncate";
  }
  return "?";
}

std::uint64_t IoCounters::of(IoOp op) const {
  IoCounters copy = *this;
  return CounterOf(copy, op);
}

std::string InstallFaultVfs() {
  Shim& s = S();
  std::lock_guard lock(s.mu);
  if (s.real != nullptr) return "";
  if (sqlite3_initialize() != SQLITE_OK) return "sqlite3_initialize failed";
  sqlite3_vfs* real = sqlite3_vfs_find(nullptr);
  if (real == nullptr) return "SQLite has no default VFS";
  s.real = real;
  s.vfs = *real;
  s.vfs.pNext = nullptr;
  s.vfs.zName = "gfp-fault";
  s.vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + real->szOsFile;
  s.vfs.xOpen = xOpen;
  s.vfs.xDelete = xDelete;
  s.vfs.xAccess = xAccess;
  if (sqlite3_vfs_register(&s.vfs, /*makeDflt=*/1) != SQLITE_OK) {
    s.real = nullptr;
    return "sqlite3_vfs_register failed";
  }
  return "";
}

int ResetFaultVfs() {
  Shim& s = S();
  std::lock_guard lock(s.mu);
  s.paths.clear();
  s.counters = {};
  s.cut_point.reset();
  s.off = false;
  s.faults.clear();
  s.fired = 0;
  return s.open_files;
}

void ArmPowerCut(std::uint64_t point, CutMode mode, std::uint64_t tear_seed) {
  std::lock_guard lock(S().mu);
  S().cut_point = S().counters.points() + point;
  S().cut_mode = mode;
  S().tear_seed = tear_seed;
}

void DisarmPowerCut() {
  std::lock_guard lock(S().mu);
  S().cut_point.reset();
}

void ArmFault(IoOp op, std::uint64_t nth, int sqlite_code, bool sticky) {
  std::lock_guard lock(S().mu);
  S().faults.push_back({op, nth, sqlite_code, sticky});
}

void ClearFaults() {
  std::lock_guard lock(S().mu);
  S().faults.clear();
}

bool PoweredOff() {
  std::lock_guard lock(S().mu);
  return S().off;
}

std::uint64_t FaultsFired() {
  std::lock_guard lock(S().mu);
  return S().fired;
}

IoCounters Counters() {
  std::lock_guard lock(S().mu);
  return S().counters;
}

}  // namespace gfp::testing::fault
