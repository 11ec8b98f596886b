#include "sim/demo/demo_script.h"

#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>

#include "cli/private_files.h"

namespace gfp::simdemo {

bool Script::Step(const std::string& what, const std::function<Status()>& body) {
  if (failed_) return false;
  ++number_;
  const auto started = std::chrono::steady_clock::now();
  Status status = body();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  std::cout << std::setw(2) << number_ << ". " << what << " ... " << (status.ok() ? "ok" : "FAILED")
            << " (" << ms << " ms)\n";
  if (!status.ok()) {
    std::cout << "    " << status.message() << "\n    serve's log: " << world_.log_path().string()
              << "\n";
    failed_ = true;
  }
  std::cout.flush();
  return status.ok();
}

namespace {

// --dir, or a fresh temporary directory.
Result<std::filesystem::path> WorldDir(const DemoFlags& flags) {
  if (!flags.dir.empty()) return std::filesystem::path(flags.dir);
  std::string pattern =
      (std::filesystem::temp_directory_path() / "gpu-fabric-demo-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) return Internal("cannot create a temporary directory");
  return std::filesystem::path(pattern);
}

}  // namespace

Result<DemoWorld> MakeDemoWorld(const DemoFlags& flags, simworld::ProcessWorldOptions options,
                                const std::string& title) {
  // Before anything is created: without the library there is no demo.
  GFP_ASSIGN_OR_RETURN(options.fm_library, cli::FindPrivateFile(cli::kSimLibrary, flags.fm_library,
                                                                process::SelfExecutable()));
  DemoWorld demo;
  GFP_ASSIGN_OR_RETURN(demo.dir, WorldDir(flags));
  options.dir = demo.dir;
  options.plugin_binary = flags.plugin_binary;
  std::cout << title << "\n"
            << "  world:      " << demo.dir.string() << "\n"
            << "  FM library: " << options.fm_library.string() << " (simulated Fabric Manager)\n\n";
  GFP_ASSIGN_OR_RETURN(demo.world, simworld::ProcessWorld::Create(options));
  return demo;
}

int FinishDemo(DemoWorld& demo, const DemoFlags& flags, bool ok) {
  std::cout << "\ndemo " << (ok ? "passed" : "FAILED") << "\n";
  demo.world->kubelet().Stop();
  if (!flags.keep && flags.dir.empty() && ok) {
    std::error_code ignored;
    std::filesystem::remove_all(demo.dir, ignored);
  }
  return ok ? 0 : 1;
}

}  // namespace gfp::simdemo
