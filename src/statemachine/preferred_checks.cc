#include "statemachine/preferred_checks.h"

#include <set>
#include <unordered_set>

#include "common/text_escape.h"

namespace gfp::sm {

Status TooManyMustInclude(std::size_t must, std::size_t size) {
  return InvalidArgument("number of MustIncludeDeviceIDs (" + std::to_string(must) +
                         ") exceeds allocation size (" + std::to_string(size) + ")");
}

std::vector<std::string> UniqueMustInclude(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& id : ids) {
    if (seen.insert(id).second) out.push_back(id);
  }
  return out;
}

Status CheckPartitionRequest(const State& state, const PreferredRequest& request,
                             const std::vector<std::string>& must) {
  if (request.size == 0) return InvalidArgument("allocation size 0 requested");
  if (must.size() > request.size) return TooManyMustInclude(must.size(), request.size);
  if (state.partitions.empty()) {
    return FailedPrecondition(
        std::string("Fabric Manager is not usable: ") +
        (state.fm_connected ? "its partition table is not known yet" : "it is not connected") +
        "; cannot choose GPUs that form one partition");
  }
  return Status::Ok();
}

Status MustIncludeVfsShareAGpu(std::size_t size, const std::string& first,
                               const std::string& second, const Bdf& gpu) {
  return FailedPrecondition("no Fabric Manager partition of " + std::to_string(size) +
                            " GPUs can be formed: must-include VFs " +
                            EscapeAndTruncate(first, 80) + " and " + EscapeAndTruncate(second, 80) +
                            " are on the same GPU " + EscapeAndTruncate(gpu, 80) +
                            "; Fabric Manager takes one VF per GPU");
}

std::string PartitionNotOffered(const PartitionState& partition, const std::string& why) {
  return "partition " + std::to_string(partition.id) + ": " + why;
}

std::string GpuNotAvailable(const Bdf& gpu, bool vfs) {
  return "GPU " + gpu + (vfs ? " has no available VF" : " is not available");
}

std::string Degraded(const PartitionState& partition) {
  return "degraded (" + std::to_string(partition.nvlinks_available) + "/" +
         std::to_string(partition.max_nvlinks) + " NVLinks" +
         (partition.unsupported ? ", unsupported by Fabric Manager" : "") + ")";
}

std::string LacksMustInclude(bool vfs, const Bdf& gpu, const std::string& must) {
  return "does not contain " +
         (vfs ? "GPU " + gpu + " of must-include VF " : std::string("must-include device ")) +
         EscapeAndTruncate(must, 80);
}

Status NoPartitionFits(const State& state, std::size_t size, std::size_t same_size,
                       const std::vector<std::string>& reasons) {
  std::string why = "no Fabric Manager partition of " + std::to_string(size) +
                    " GPUs can be formed from the available devices";
  if (same_size == 0) {
    std::set<std::size_t> sizes;
    for (const auto& [pid, p] : state.partitions) sizes.insert(p.physical_ids.size());
    why += ": no partition has " + std::to_string(size) + " GPUs (sizes:";
    for (std::size_t s : sizes) why += " " + std::to_string(s);
    why += ")";
  } else {
    why += ":";
    for (const auto& r : reasons) why += " " + r + ";";
    why.pop_back();
  }
  return FailedPrecondition(why);
}

}  // namespace gfp::sm
