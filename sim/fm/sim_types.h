// Vocabulary shared by the simulated Fabric Manager and its control API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gfp::fmsim {

enum class Mode {
  kRunning,
  kStarting,        // FM still initialising: partition calls return NOT_CONFIGURED
  kAwaitingResync,  // restarted in resiliency mode: waits for fmSetActivatedFabricPartitions
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

struct CallRecord {
  std::string function;
  std::string args;
  int code = 0;
  std::int64_t time_ms = 0;  // Unix epoch milliseconds
  int pid = 0;
};

std::string_view ModeName(Mode mode);
bool ParseMode(std::string_view text, Mode* mode);
std::string_view HostileReplyName(HostileReply reply);
bool ParseHostileReply(std::string_view text, HostileReply* reply);

}  // namespace gfp::fmsim
