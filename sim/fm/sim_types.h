// Vocabulary shared by the simulated Fabric Manager and its control API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gfp::fmsim {

enum class Mode {
  kRunning,
  kStarting,        // FM still initialising: partition calls return NOT_CONFIGURED
  kAwaitingResync,  // restarted in resiliency mode: waits for fmSetActivatedFabricPartitions
};

// FM's FABRIC_MODE (reference/fabric-manager.md §3.1), fixed for the life of an FM process:
// shared NVSwitch activates whole GPUs (fmActivateFabricPartition), vGPU activates SR-IOV VFs
// (fmActivateFabricPartitionWithVFs); each mode refuses the other call with NOT_SUPPORTED.
enum class FabricMode {
  kSharedNvswitch = 1,  // FABRIC_MODE=1
  kVgpu = 2,            // FABRIC_MODE=2
};

// Replies that break the SDK's documented limits, to test the adapter's defensive decoding.
enum class HostileReply {
  kNone,
  kTooManyPartitions,      // numPartitions = 65
  kTooManyGpus,            // a partition with numGpus = 17
  kUnterminatedStrings,    // pciBusId / uuid filled to the end with no NUL
  kDuplicatePartitionIds,  // two entries with the same partitionId
  kBadPhysicalId,          // physicalId 17
  kTooManyUnsupported,     // unsupported list numPartitions = 65
  kTooManyFailedDevices,   // NVLink failed devices numGpus = 17
};

// Fault count meaning "every call from now on".
inline constexpr int kAlways = -1;

// Where a CrashCaller fault ends the calling process: before FM carries out the call, or after
// FM carried it out (and logged it) but before the caller sees the reply.
enum class CrashPoint { kBefore, kAfter };

// The exit status of a process the simulated FM ended with a CrashCaller fault.
inline constexpr int kCrashExitCode = 86;

struct CallRecord {
  std::string function;
  std::string args;
  int code = 0;
  std::int64_t time_ms = 0;  // Unix epoch milliseconds
  int pid = 0;
  // fmActivateFabricPartitionWithVFs only: the VFs passed, in order, as canonical BDFs.
  std::vector<std::string> vfs;
  // Why the simulator refused the call, when the code alone does not say (e.g. which VF rule).
  std::string note;
};

std::string_view ModeName(Mode mode);
bool ParseMode(std::string_view text, Mode* mode);
std::string_view FabricModeName(FabricMode mode);          // "shared_nvswitch", "vgpu"
bool ParseFabricModeNumber(int number, FabricMode* mode);  // 1 or 2, as FABRIC_MODE
std::string_view HostileReplyName(HostileReply reply);
bool ParseHostileReply(std::string_view text, HostileReply* reply);

}  // namespace gfp::fmsim
