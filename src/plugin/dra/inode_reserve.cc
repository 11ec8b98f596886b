#include "plugin/dra/inode_reserve.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "adapters/host/atomic_file.h"
#include "common/text_escape.h"
#include "plugin/dra/claim_file_staging.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;

// A new empty folder, mode 0755 whatever the umask (its readers run as other users).
Result<fs::path> MakeSpareFolder(const fs::path& staging) {
  std::string name = (staging / "spare.XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr || ::chmod(name.c_str(), 0755) != 0) {
    const std::string reason = std::error_code(errno, std::generic_category()).message();
    ::rmdir(name.c_str());
    return Internal("cannot make a spare folder in " + EscapeAndTruncate(staging.string(), 300) +
                    ": " + reason);
  }
  return fs::path(name);
}

// Adds unnamed files in `dir` until `files` holds `size` or the refill is interrupted.
Status TopUp(const fs::path& dir, std::size_t size, std::vector<UniqueFd>& files,
             const std::function<bool()>& interrupted) {
  while (files.size() < size && !interrupted()) {
    GFP_ASSIGN_OR_RETURN(UniqueFd fd, adapters::host::UnnamedFile::Create(dir));
    files.push_back(std::move(fd));
  }
  return Status::Ok();
}

template <typename T>
std::optional<T> TakeLast(std::vector<T>& items) {
  if (items.empty()) return std::nullopt;
  std::optional<T> last(std::move(items.back()));
  items.pop_back();
  return last;
}

}  // namespace

InodeReserve::~InodeReserve() {
  for (const fs::path& folder : folders_) ::rmdir(folder.c_str());
}

Status InodeReserve::Refill(const std::function<bool()>& interrupted) {
  const fs::path staging = ClaimStagingDir(dirs_);
  Status made = EnsureClaimStaging(dirs_);
  while (made.ok() && folders_.size() < size_.folders && !interrupted()) {
    auto folder = MakeSpareFolder(staging);
    if (!folder.ok()) {
      made = folder.status();
      break;
    }
    folders_.push_back(std::move(folder).value());
  }
  if (made.ok()) made = TopUp(staging, size_.staging_files, staging_files_, interrupted);
  Status cdi = TopUp(dirs_.cdi_dir, size_.cdi_files, cdi_files_, interrupted);
  return made.ok() ? cdi : made;
}

bool InodeReserve::Full() const {
  return folders_.size() >= size_.folders && staging_files_.size() >= size_.staging_files &&
         cdi_files_.size() >= size_.cdi_files;
}

std::optional<fs::path> InodeReserve::TakeFolder() { return TakeLast(folders_); }
std::optional<UniqueFd> InodeReserve::TakeStagingFile() { return TakeLast(staging_files_); }
std::optional<UniqueFd> InodeReserve::TakeCdiFile() { return TakeLast(cdi_files_); }

}  // namespace gfp::plugin::dra
