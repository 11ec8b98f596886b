// Fuzz target: a journal file made of random bytes (SQLite pages, torn or hostile). The bytes are
// written to a fresh file on tmpfs; store::Journal::Open read-only and then read-write must return
// a journal or an error value, and whatever opens must survive LastSeq, ForEach, ForEachVerified,
// LatestValidSnapshot and Verify. No crash, no hang, no leak.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/fuzz_support.h"
#include "store/journal.h"
#include "store/journal_types.h"

namespace {

namespace fs = std::filesystem;
using gfp::store::Journal;

void Exercise(const Journal& journal) {
  (void)journal.LastSeq();
  (void)journal.SchemaVersion();
  auto count = [](const gfp::store::StoredEvent&) { return gfp::Status::Ok(); };
  (void)journal.ForEach(1, 0, count);
  (void)journal.ForEachVerified(0, 0, count);
  (void)journal.LatestValidSnapshot(0, nullptr);
  (void)journal.Verify(count);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gfp::fuzz::ScratchDir scratch("journal");
  const fs::path file = scratch.path() / "journal.db";
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
    fs::remove(file.string() + suffix, ignored);
  }
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, ignored);
  if (auto ro = Journal::Open(file, gfp::store::OpenMode::kReadOnly); ro.ok()) Exercise(**ro);
  if (auto rw = Journal::Open(file, gfp::store::OpenMode::kReadWrite); rw.ok()) {
    Exercise(**rw);
    // A journal that opened for writing must take an append, or refuse it with an error value.
    const gfp::store::NewEvent event{1, "PluginStarted", "payload"};
    (void)(*rw)->Append({&event, 1});
    (void)(*rw)->SaveSnapshot(1, "x");
  }
  return 0;
}
