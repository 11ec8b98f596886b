// The labels file must never be one of the journal's files (SPEC §8.2): a rename onto it would
// replace the journal. Paths are compared by what they name, not how they are spelled: the
// folders by device and inode (a symlinked folder, a bind mount or `..` cannot hide one), the
// names against the journal's database and its -wal, -shm and -journal companions.
#pragma once

#include <filesystem>

#include "common/status.h"

namespace gfp::plugin::labels {

// InvalidArgument "is the journal's own file (--journal=…)" when `labels` names the journal or a
// companion, by spelling (also for folders that do not exist yet) or, where both folders exist,
// by identity. Checked at start and again before every write (a folder can be swapped for a
// symlink while serve runs).
Status CheckNotAJournalFile(const std::filesystem::path& labels,
                            const std::filesystem::path& journal);

}  // namespace gfp::plugin::labels
