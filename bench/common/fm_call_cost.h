// What one call into the simulated FM costs by itself: in this process, through the same
// dlopen'ed library (the real C ABI) serve uses, on a fresh H100 state file.
#pragma once

#include <filesystem>
#include <string>

namespace gfp::bench {

struct FmCallCost {
  double activate_us = 0;    // median fmActivateFabricPartition
  double deactivate_us = 0;  // median fmDeactivateFabricPartition
  // The same activation through the plugin's FM client (adapters::fm::FabricManagerClient: the
  // hand-off to its worker thread and back), each call after 1 ms of idle as an isolated
  // Allocate makes it: median latency, and the process's CPU per call beyond idle sleeping.
  double client_activate_us = 0;
  double client_cpu_us = 0;
};

// `samples` activations and deactivations of partition 3 after 5 untimed ones. The state file
// is `state_file`; `zero_latency` keeps the state in memory ($NVFM_SIM_PRIVATE, SPEC §7's
// zero-latency FM), otherwise each call reads and writes the file as serve's simulated FM does.
// Leaves $NVFM_SIM_STATE and $NVFM_SIM_PRIVATE as it found them; dies on any failure. With
// `through_client`, also times the client (client_activate_us, client_cpu_us).
FmCallCost MeasureFmCalls(const std::string& library, const std::filesystem::path& state_file,
                          bool zero_latency, int samples, bool through_client = false);

}  // namespace gfp::bench
