// Replacing a file so that its readers never see a part of it: the NFD feature file (SPEC §8.2),
// and a DRA claim's CDI specs and device metadata (SPEC §11), which container runtimes and
// virt-launcher read.
#pragma once

#include <filesystem>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace gfp::adapters::host {

// Where the temporary file is written: a hidden folder beside the target. nfd-worker watches
// features.d with inotify and rescans at most once a second, dropping the events that follow the
// first one: a temporary file created beside the target would start a rescan that reads the old
// file and swallow the rename's event (the labels would then wait for NFD's next periodic scan).
// From a subfolder, only the rename itself shows in the watched folder. NFD ignores names that
// start with '.', and the CDI caches of container runtimes read only the folder's own *.json and
// *.yaml files.
inline constexpr std::string_view kStagingDirName = ".gpu-fabric-plugin-staging";

// Replaces `path` with a regular file (mode 0644: its readers run as other users) holding exactly
// `content`: written to <dir>/.gpu-fabric-plugin-staging/<name>.tmp, fsynced, renamed onto
// `path`, then the folder is fsynced so the rename survives a power loss. A reader of `path`
// sees the old file or the whole new one. The staging folder is created (0700) when missing; a
// symlink, anything but a folder, or a folder of another user or writable by others there is
// refused. The temporary file is created exclusively (O_EXCL, no link followed; a leftover is
// unlinked first) and its mode set on the descriptor. On failure `path` is unchanged and the
// temporary file is removed. Errors name the path, the step and the OS reason:
// "cannot replace /d/f: writing /d/.gpu-fabric-plugin-staging/f.tmp failed: No space left on
// device" (ResourceExhausted for ENOSPC/EDQUOT, NotFound for a missing folder, else Internal).
//
// kAtomicOnly skips both fsyncs (two disk flushes per file): for files whose loss in a power cut
// is found and repaired by their writer (a DRA claim's files are checked by content at kubelet's
// repeated Prepare, which follows a node restart), readers still never see a part of one.
enum class Durability { kSurvivesPowerLoss, kAtomicOnly };
Status ReplaceFileAtomically(const std::filesystem::path& path, std::string_view content,
                             Durability durability = Durability::kSurvivesPowerLoss);

// As ReplaceFileAtomically, and cheaper where nothing is at `path` yet: the file is written
// unnamed in its folder (O_TMPFILE) and linked into place whole (through /proc/self/fd), so no
// staging folder and no temporary name are created, and readers see no file or the whole one.
// Where something is at `path` (a symlink there is never followed), or the file system has no
// unnamed files, or /proc is not mounted, it is replaced as ReplaceFileAtomically does. A missing
// folder is NotFound, naming `path`.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content,
                           Durability durability = Durability::kSurvivesPowerLoss);

// A file written whole before it has a name, so that writing it and showing it can happen at
// different times: unnamed in the folder of the path it is meant for (O_TMPFILE, mode 0644),
// seen by no one until Link, and gone with its descriptor if never linked (a process that dies
// first leaves nothing behind).
class UnnamedFile {
 public:
  // Unavailable where the file system has no unnamed files; NotFound for a missing folder.
  static Result<UnnamedFile> Write(const std::filesystem::path& path, std::string_view content,
                                   Durability durability);

  // An empty unnamed file in `dir`, made ahead of the Write that fills it (WriteInto) where
  // making a file can be slow. The same errors as Write, naming `dir`.
  static Result<UniqueFd> Create(const std::filesystem::path& dir);
  // As Write, into `unnamed` (from Create, in a folder on the file system of `path`).
  static Result<UnnamedFile> WriteInto(UniqueFd unnamed, const std::filesystem::path& path,
                                       std::string_view content, Durability durability);

  // Links it at its path, never replacing: anything there (a symlink is not followed) is
  // AlreadyExists; NotFound when /proc is not mounted (the way to link an unnamed file without
  // CAP_DAC_READ_SEARCH) or the folder went away; Unavailable where linking unnamed files is
  // not supported. The folder is fsynced afterwards when the file must survive a power loss.
  Status Link();

 private:
  UnnamedFile(std::filesystem::path path, UniqueFd fd, Durability durability)
      : path_(std::move(path)), fd_(std::move(fd)), durability_(durability) {}

  std::filesystem::path path_;
  UniqueFd fd_;
  Durability durability_;
};

}  // namespace gfp::adapters::host
