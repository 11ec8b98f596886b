// The directories a benchmark of the real binary works in: its own new folder on the disk it
// measures (--dir, or the temp dir), and one on /dev/shm for the simulated FM's state files, so
// an FM call costs no disk I/O (empty when there is no /dev/shm: the work folder serves then).
#pragma once

#include <filesystem>
#include <string>

namespace gfp::bench {

struct WorkDirs {
  std::filesystem::path work;
  std::filesystem::path fm_state;  // empty without /dev/shm

  // Where FM state files go: fm_state, or work without /dev/shm.
  std::filesystem::path FmStateOrWork() const { return fm_state.empty() ? work : fm_state; }
  // Removes both (a failure is ignored: they are temporary).
  void Remove() const;
};

// `<base>/<name>-XXXXXX` (base: `dir_flag`, or the temp dir when it is empty) and
// `/dev/shm/<name>-fm-XXXXXX`; dies when the work folder cannot be made.
WorkDirs MakeWorkDirs(const std::string& dir_flag, const std::string& name);

}  // namespace gfp::bench
