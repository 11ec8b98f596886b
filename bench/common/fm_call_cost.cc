#include "bench/common/fm_call_cost.h"

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include "adapters/fm/fabric_manager_library.h"
#include "adapters/fm/fm_abi.h"
#include "bench/bench_report.h"
#include "sim/fm/fm_sim_control.h"

namespace gfp::bench {
namespace {

namespace abi = adapters::fm::abi;

// Sets an environment variable for its lifetime, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

abi::fmHandle_t Connect(const adapters::fm::FmFunctions& fn) {
  if (fn.fmLibInit() != abi::kSuccess) Die("fmLibInit of the simulated FM failed");
  abi::ConnectParamsV2 params{};
  params.version = abi::kConnectParamsV2Version;
  std::snprintf(params.addressInfo, sizeof(params.addressInfo), "%s", "/run/fm.sock");
  params.timeoutMs = 1000;
  params.addressIsUnixSocket = 1;
  params.addressType = abi::kAddrUnix;
  abi::fmHandle_t handle = nullptr;
  if (fn.fmConnect(&params, &handle) != abi::kSuccess) Die("fmConnect to the simulated FM");
  return handle;
}

double MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

FmCallCost MeasureFmCalls(const std::string& library, const std::filesystem::path& state_file,
                          bool zero_latency, int samples) {
  if (auto fm = fmsim::FmSimControl::Create(state_file.string(), "h100"); !fm.ok()) {
    Die(fm.status().message());
  }
  const ScopedEnv state("NVFM_SIM_STATE", state_file.string());
  std::optional<ScopedEnv> in_memory;
  if (zero_latency) in_memory.emplace("NVFM_SIM_PRIVATE", "1");
  auto loaded = adapters::fm::FabricManagerLibrary::Load(library);
  if (!loaded.ok()) Die(loaded.status().message());
  const adapters::fm::FmFunctions& fn = (*loaded)->fn();
  const abi::fmHandle_t handle = Connect(fn);
  std::vector<double> activate;
  std::vector<double> deactivate;
  for (int i = -5; i < samples; ++i) {
    auto start = std::chrono::steady_clock::now();
    const int a = fn.fmActivateFabricPartition(handle, 3);
    const double activated = MicrosSince(start);
    start = std::chrono::steady_clock::now();
    const int d = fn.fmDeactivateFabricPartition(handle, 3);
    const double deactivated = MicrosSince(start);
    if (a != abi::kSuccess || d != abi::kSuccess) Die("the simulated FM refused partition 3");
    if (i < 0) continue;
    activate.push_back(activated);
    deactivate.push_back(deactivated);
  }
  fn.fmDisconnect(handle);
  fn.fmLibShutdown();  // a later in-process plugin initialises it again
  return {Percentile(activate, 0.5), Percentile(deactivate, 0.5)};
}

}  // namespace gfp::bench
