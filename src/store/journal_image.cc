// ConsistentImage: the journal's database as of one read transaction, for `journal copy`.
//
// Why sqlite3_serialize: it reads every page through this connection's pager inside the read
// transaction opened here, so the bytes are one consistent snapshot, -wal frames included, and
// a writer appending meanwhile is neither blocked nor seen (WAL readers). It works on every
// opening a reader can have, the immutable one included, and creates no file. The online backup
// API needs a destination database: a file SQLite opens by name (its own creation rules, its
// -journal beside it) or an in-memory one that costs the same memory as this. VACUUM INTO
// rebuilds the file and creates it itself (follows a symlink, takes the process umask), and
// cannot write to a pipe. The price of serialize is memory: the whole database is held once. And
// a page it fails to read comes out zeroed instead of failing the call: `journal verify` on the
// copy then reports damage, which is what the copy is made for.
#include "store/journal_image.h"

#include <sqlite3.h>

#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "store/journal_impl.h"
#include "store/read_only_open.h"
#include "store/sqlite_status.h"

namespace gfp::store {
namespace {

// Offsets in the 100-byte SQLite file header (https://sqlite.org/fileformat2.html).
constexpr std::size_t kWriteVersionOffset = 18;  // 1 legacy (rollback journal), 2 WAL
constexpr std::size_t kReadVersionOffset = 19;
constexpr std::size_t kHeaderBytes = 100;

// Ends the read transaction however the copy ends (a read transaction has nothing to undo).
class ReadTransaction {
 public:
  explicit ReadTransaction(sqlite3* db) : db_(db) {}
  ~ReadTransaction() { sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr); }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  sqlite3* db_;
};

// The newest event's seq and stored hash; reading it also opens the read transaction's snapshot.
Status ReadHead(sqlite3* db, const std::filesystem::path& path, DatabaseImage& image) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1", -1,
                              &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db, "reading the newest event", path);
  rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_DONE) return Status::Ok();
  if (rc != SQLITE_ROW) return SqliteStatus(rc, db, "reading the newest event", path);
  image.last_seq = static_cast<std::uint64_t>(sqlite3_column_int64(stmt.get(), 0));
  if (!ToHash(ColumnView(stmt.get(), 1), &image.last_hash)) {
    return DataLoss("event seq " + std::to_string(image.last_seq) + " of journal " + path.string() +
                    " has a hash that is not 32 bytes");
  }
  return Status::Ok();
}

Result<DatabaseImage> ImageInOneReadTransaction(sqlite3* db, const std::filesystem::path& path) {
  GFP_RETURN_IF_ERROR(ExecSql(db, "BEGIN DEFERRED", "starting the copy", path));
  ReadTransaction transaction(db);
  DatabaseImage image;
  GFP_RETURN_IF_ERROR(ReadHead(db, path, image));
  sqlite3_int64 size = -1;
  // Inside the transaction begun above: the pages are those of the snapshot ReadHead saw.
  unsigned char* bytes = sqlite3_serialize(db, "main", &size, 0);
  if (bytes == nullptr) {
    if (size > 0) {
      return ResourceExhausted("copying journal " + path.string() + ": not enough memory for " +
                               std::to_string(size) + " bytes");
    }
    return SqliteStatus(sqlite3_errcode(db), db, "copying the journal", path);
  }
  image.data = std::shared_ptr<const unsigned char>(
      bytes, [](const unsigned char* p) { sqlite3_free(const_cast<unsigned char*>(p)); });
  image.size = static_cast<std::size_t>(size);
  // The pages are those of a WAL database, whose header says so: whoever opens the copy would
  // then need a -wal and -shm beside it. Marked a rollback-journal database instead, it is one
  // self-contained file (the pages are the same in both modes).
  if (image.size >= kHeaderBytes && bytes[kWriteVersionOffset] == 2) {
    bytes[kWriteVersionOffset] = 1;
    bytes[kReadVersionOffset] = 1;
  }
  return image;
}

}  // namespace

Result<DatabaseImage> ConsistentImage(const std::filesystem::path& path) {
  if (path.empty()) return InvalidArgument("journal path is empty");
  try {
    GFP_ASSIGN_OR_RETURN(ReadOnlyConnection opened, OpenReadOnlyConnection(path));
    return ImageInOneReadTransaction(opened.db->getHandle(), path);
  } catch (const std::exception& e) {
    return StatusFromException(e, "copying the journal", path);
  }
}

}  // namespace gfp::store
