// `journal copy --to DEST|-`: a consistent, self-contained SQLite copy of the journal, taken in
// one read transaction (store::ConsistentImage), for checking off the node
// (docs/audit.md). Read-only on the journal, as the other verbs.
#include <unistd.h>

#include <iostream>
#include <string>

#include "cli/journal_command.h"
#include "cli/journal_output.h"
#include "cli/new_file.h"
#include "common/text_escape.h"
#include "store/hash_chain.h"
#include "store/journal.h"
#include "store/journal_image.h"

namespace gfp::cli {
namespace {

int ExitFor(const Status& status) {
  const ErrorCode code = status.code();
  return code == ErrorCode::kAlreadyExists || code == ErrorCode::kInvalidArgument ? kExitUnusable
                                                                                  : kExitDamaged;
}

void PrintDone(const JournalQuery& o, const store::DatabaseImage& image, const std::string& to) {
  std::cerr << "journal " << EscapeAndTruncate(o.path, 300) << " copied as of seq "
            << image.last_seq << " (" << image.size << " bytes; chain hash as stored "
            << store::HashToHex(image.last_hash) << ") to " << to << "\n";
}

}  // namespace

int CopyJournal(const JournalQuery& o) {
  if (o.to.empty()) {
    PrintError(
        InvalidArgument("--to: the value is empty; give a new file's path, or - for stdout"));
    return kExitUnusable;
  }
  const bool to_stdout = o.to == "-";
  if (to_stdout && ::isatty(STDOUT_FILENO) == 1) {
    PrintError(InvalidArgument("--to -: stdout is a terminal; redirect it to a file or a pipe"));
    return kExitUnusable;
  }
  // Refused before the journal is read: the copy is held in memory while it is written.
  if (Status free = to_stdout ? Status::Ok() : RefuseExisting(o.to); !free.ok()) {
    PrintError(free.WithContext("--to"));
    return kExitUnusable;
  }
  // Opened first as every verb opens it (an unusable file: exit 2); the copy then reads on a
  // connection of its own, opened by the same rules.
  if (auto journal = store::Journal::Open(o.path, store::OpenMode::kReadOnly); !journal.ok()) {
    PrintError(journal.status());
    return kExitUnusable;
  }
  auto image = store::ConsistentImage(o.path);
  if (!image.ok()) {
    PrintError(image.status());
    return kExitDamaged;
  }
  if (to_stdout) {
    const auto bytes = image->bytes();
    std::cout.write(reinterpret_cast<const char*>(bytes.data()),
                    static_cast<std::streamsize>(bytes.size()));
    const int code = FinishOutput(kExitOk);
    if (code == kExitOk) PrintDone(o, *image, "stdout");
    return code;
  }
  if (Status written = WriteNewFile(o.to, image->bytes()); !written.ok()) {
    PrintError(written.WithContext("--to"));
    return ExitFor(written);
  }
  PrintDone(o, *image, EscapeAndTruncate(o.to, 300));
  return kExitOk;
}

}  // namespace gfp::cli
