#include "bench/common/work_dirs.h"

#include <stdlib.h>

#include "bench/bench_report.h"

namespace gfp::bench {
namespace {

namespace fs = std::filesystem;

// A new folder `<prefix>-XXXXXX` under `base`; empty when it cannot be made.
fs::path MakeTempDir(const fs::path& base, const std::string& prefix) {
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  return ::mkdtemp(pattern.data()) == nullptr ? fs::path() : fs::path(pattern);
}

}  // namespace

void WorkDirs::Remove() const {
  std::error_code ignored;
  fs::remove_all(work, ignored);
  if (!fm_state.empty()) fs::remove_all(fm_state, ignored);
}

WorkDirs MakeWorkDirs(const std::string& dir_flag, const std::string& name) {
  const fs::path base = dir_flag.empty() ? fs::temp_directory_path() : fs::path(dir_flag);
  WorkDirs dirs;
  dirs.work = MakeTempDir(base, name);
  if (dirs.work.empty()) Die("cannot create a directory under " + base.string());
  if (fs::is_directory("/dev/shm")) dirs.fm_state = MakeTempDir("/dev/shm", name + "-fm");
  return dirs;
}

}  // namespace gfp::bench
