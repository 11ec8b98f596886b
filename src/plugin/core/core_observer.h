// What the core reports as it works, for whoever watches it (the SPEC §8.1 metrics). The core
// knows only this interface; plugin/metrics implements it and the serve wiring connects the two,
// so the core never includes the metrics. Called on the core's and gRPC's threads: an observer
// records and returns at once (no I/O, no lock held across anything slow).
#pragma once

#include <cstddef>
#include <string>

namespace gfp::plugin::core {

enum class PartitionOperation { kActivate, kDeactivate, kResync };
enum class DriftKind { kActivatedElsewhere, kLost };

class CoreObserver {
 public:
  virtual ~CoreObserver() = default;

  // One Allocate call: `containers` container requests, all granted or all rejected.
  virtual void RecordAllocate(const std::string& resource, std::size_t containers, bool granted,
                              double seconds) = 0;
  // One FM call that changes partitions; `fm_code` is the return code's name (FM_ST_SUCCESS).
  virtual void RecordPartitionOperation(PartitionOperation operation, bool ok,
                                        const std::string& fm_code) = 0;
  // Drift found between the journal and FM's partition table.
  virtual void RecordDrift(DriftKind kind) = 0;
  // A granted Allocate container took devices that a pod held in kubelet's last PodResources
  // listing (once per such pod; plugin/core/listed_holders.h).
  virtual void RecordDevicesTakenFromListedPod() = 0;
};

}  // namespace gfp::plugin::core
