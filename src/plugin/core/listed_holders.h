// Which pod held each device in kubelet's last PodResources listing. An Allocate that takes a
// device a listed pod held deactivates that pod's partition: either kubelet gave the device to
// a new pod before our next listing (the old pod ended in between), or something other than
// kubelet called Allocate on the socket. The two cannot be told apart here, and kubelet's view
// may run ahead of ours, so such a call is granted but logged at warn and counted
// (docs/security.md).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "adapters/kubelet/pod_device_assignment.h"
#include "statemachine/state.h"

namespace gfp::plugin::core {

struct ListedHolder {
  std::string pod;                   // namespace/name
  std::vector<std::string> devices;  // those of the asked-for devices it held, in asked order
};

class ListedHolders {
 public:
  // Replaces what was remembered with one successful listing taken at `listed_at`.
  void Remember(const std::vector<adapters::kubelet::ContainerDeviceAssignment>& containers,
                sm::Micros listed_at);

  // The pods that held any of `devices` of `resource` in the last listing, ordered by pod.
  std::vector<ListedHolder> HoldersOf(const std::string& resource,
                                      const std::vector<std::string>& devices) const;

  // When the last listing was taken (0 before the first).
  sm::Micros listed_at() const { return listed_at_; }

 private:
  std::map<std::pair<std::string, std::string>, std::string> pod_of_;  // (resource, id) -> pod
  sm::Micros listed_at_ = 0;
};

}  // namespace gfp::plugin::core
