// The files a prepared claim stands on (SPEC §11 NodePrepareResources), as contents and paths:
// pure, no I/O. The caller writes each atomically and removes them on unprepare.
//   - the claim's CDI spec <cdi-dir>/<driver>_<claimUID>.json: kind <driver>/gpu, one CDI device
//     per GPU, <claimUID>-<device name>, with exactly the device nodes kubelet would be handed
//     for that GPU in device-plugin mode (/dev/vfio/<group>, /dev/vfio/vfio, and /dev/iommu plus
//     /dev/vfio/devices/vfioN where iommufd is in use);
//   - per request, the device metadata KubeVirt 1.9 reads (reference/dra/kubevirt-dra-metadata.md
//     §5): <plugin-dir>/dra-device-metadata/<claimUID>/<request>/metadata.json, and a CDI spec
//     <cdi-dir>/<driver>_metadata_<claimUID>_<request>.json that bind-mounts it read-only where
//     virt-launcher looks (that path, in the VM's container, is the upstream helper's).
// Every host path is keyed by the claim's uid, never by its name: a claim deleted and made again
// under its name (a new uid) is prepared while the old one may still await its Unprepare, and
// each must keep its own files. (The upstream helper, and this plugin before, keyed the metadata
// folder <ns>_<claim>: OldLayoutMetadataDir.)
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gfp::plugin::dra {

struct ClaimGpu {
  std::string request;                    // the claim request this GPU answers (gpu0)
  std::string bdf;                        // 0000:1b:00.0
  std::vector<std::string> device_nodes;  // /dev/vfio/42, /dev/vfio/vfio, …

  bool operator==(const ClaimGpu&) const = default;
};

struct PreparedClaim {
  std::string driver;  // gpu-fabric-plugin.io
  std::string pool;    // the node name
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string pod_claim_name;  // empty unless made from a template
  std::vector<ClaimGpu> gpus;  // the allocation result's order

  bool operator==(const PreparedClaim&) const = default;
};

// Where the files go: --cdi-dir and <kubelet-plugins-dir>/<driver>.
struct ClaimFileDirs {
  std::filesystem::path cdi_dir;
  std::filesystem::path plugin_dir;
};

struct ClaimFile {
  std::filesystem::path path;
  std::string content;
};

// Every file of the claim, contents included: the CDI spec of its GPUs, then per request (in
// first-appearance order) its metadata file and that file's CDI spec.
std::vector<ClaimFile> ClaimFiles(const PreparedClaim& claim, const ClaimFileDirs& dirs);

// The paths to remove on unprepare: the files above, and the claim's metadata folder
// (<plugin-dir>/dra-device-metadata/<claimUID>), removed with what is in it.
std::vector<std::filesystem::path> ClaimPaths(const PreparedClaim& claim,
                                              const ClaimFileDirs& dirs);
std::filesystem::path ClaimMetadataDir(const PreparedClaim& claim, const ClaimFileDirs& dirs);

// Where the plugin's earlier versions put the claim's metadata folder:
// <plugin-dir>/dra-device-metadata/<ns>_<claim> (the CDI spec names were the same). Empty when
// the namespace or name is empty or holds a '/'. It never equals a uid's folder: a uid has no '_'.
std::filesystem::path OldLayoutMetadataDir(const PreparedClaim& claim, const ClaimFileDirs& dirs);

// Why the claim's uid cannot name its files (it is no Kubernetes UID, so maybe no plain file
// name: "..", "a/b", ""), or "" when it can. Callers check uids before; this layer checks again.
std::string ClaimUidProblem(const PreparedClaim& claim);

// The CDI device ids NodePrepareResources answers for gpus[i]: "<driver>/gpu=<uid>-<device
// name>", and for the first GPU of each request also "<driver>/metadata=<uid>_<request>".
std::vector<std::string> CdiDeviceIds(const PreparedClaim& claim, std::size_t i);

// The folder below the plugin folder that holds the claims' metadata folders.
inline constexpr const char* kMetadataFolderName = "dra-device-metadata";

// Where virt-launcher finds a request's metadata (kubevirt-dra-metadata.md §1).
inline constexpr const char* kMetadataContainerDir = "/var/run/kubernetes.io/dra-device-attributes";

}  // namespace gfp::plugin::dra
