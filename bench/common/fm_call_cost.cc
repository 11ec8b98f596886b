#include "bench/common/fm_call_cost.h"

#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "adapters/fm/fabric_manager_client.h"
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

double ProcessCpuMicros() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Activations (and untimed deactivations) of partition 3 through the plugin's FM client, each
// after 1 ms of idle. The CPU of as many idle sleeps alone is taken out.
void MeasureThroughClient(const std::string& library, int samples, FmCallCost& cost) {
  adapters::fm::FabricManagerConfig config;
  config.library_path = library;
  config.address = "/run/fm.sock";
  auto client = adapters::fm::FabricManagerClient::Create(config);
  if (!client.ok()) Die(client.status().message());
  if (!(*client)->Connect().ok()) Die("the FM client could not connect to the simulated FM");
  constexpr auto kIdle = std::chrono::milliseconds(1);
  std::vector<double> activate;
  double cpu_in_calls = 0;
  double cpu_in_sleeps = 0;
  for (int i = -5; i < samples; ++i) {
    double cpu0 = ProcessCpuMicros();
    std::this_thread::sleep_for(kIdle);
    const double slept = ProcessCpuMicros() - cpu0;
    cpu0 = ProcessCpuMicros();
    const auto start = std::chrono::steady_clock::now();
    const bool ok = (*client)->Activate(3).ok();
    const double took = MicrosSince(start);
    std::this_thread::sleep_for(kIdle);  // the worker's own wake-up and wait land in here
    const double spent = ProcessCpuMicros() - cpu0;
    if (!ok || !(*client)->Deactivate(3).ok()) Die("the FM client could not (de)activate 3");
    if (i < 0) continue;
    activate.push_back(took);
    cpu_in_calls += spent;
    cpu_in_sleeps += slept;
  }
  cost.client_activate_us = Percentile(activate, 0.5);
  cost.client_cpu_us = (cpu_in_calls - cpu_in_sleeps) / samples;
}

}  // namespace

FmCallCost MeasureFmCalls(const std::string& library, const std::filesystem::path& state_file,
                          bool zero_latency, int samples, bool through_client) {
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
  FmCallCost cost{Percentile(activate, 0.5), Percentile(deactivate, 0.5)};
  if (through_client) MeasureThroughClient(library, samples, cost);
  fn.fmLibShutdown();  // a later in-process plugin initialises it again
  return cost;
}

}  // namespace gfp::bench
