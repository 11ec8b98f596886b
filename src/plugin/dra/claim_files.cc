#include "plugin/dra/claim_files.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/k8s_names.h"
#include "common/text_escape.h"
#include "plugin/dra/resource_slice.h"

namespace gfp::plugin::dra {
namespace {

constexpr const char* kCdiVersion = "0.5.0";
constexpr const char* kMetadataApiVersion = "metadata.resource.k8s.io/v1alpha1";

// Requests in the order their first GPU appears.
std::vector<std::string> Requests(const PreparedClaim& claim) {
  std::vector<std::string> out;
  for (const auto& gpu : claim.gpus) {
    if (std::find(out.begin(), out.end(), gpu.request) == out.end()) out.push_back(gpu.request);
  }
  return out;
}

std::string Pretty(const nlohmann::json& json) {
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::filesystem::path GpuSpecPath(const PreparedClaim& c, const ClaimFileDirs& dirs) {
  return dirs.cdi_dir / (c.driver + "_" + c.uid + ".json");
}

std::filesystem::path MetadataPath(const PreparedClaim& c, const ClaimFileDirs& dirs,
                                   const std::string& request) {
  return ClaimMetadataDir(c, dirs) / request / "metadata.json";
}

std::filesystem::path MetadataSpecPath(const PreparedClaim& c, const ClaimFileDirs& dirs,
                                       const std::string& request) {
  return dirs.cdi_dir / (c.driver + "_metadata_" + c.uid + "_" + request + ".json");
}

std::string GpuSpec(const PreparedClaim& c) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& gpu : c.gpus) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& node : gpu.device_nodes) nodes.push_back({{"path", node}});
    devices.push_back({{"name", c.uid + "-" + DeviceName(gpu.bdf)},
                       {"containerEdits", {{"deviceNodes", std::move(nodes)}}}});
  }
  return Pretty(
      {{"cdiVersion", kCdiVersion}, {"kind", c.driver + "/gpu"}, {"devices", std::move(devices)}});
}

std::string Metadata(const PreparedClaim& c, const std::string& request) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& gpu : c.gpus) {
    if (gpu.request != request) continue;
    devices.push_back(
        {{"driver", c.driver},
         {"pool", c.pool},
         {"name", DeviceName(gpu.bdf)},
         {"attributes", {{"resource.kubernetes.io/pciBusID", {{"string", gpu.bdf}}}}}});
  }
  nlohmann::json object = {
      {"kind", "DeviceMetadata"},
      {"apiVersion", kMetadataApiVersion},
      {"metadata",
       {{"name", c.name}, {"namespace", c.namespace_name}, {"uid", c.uid}, {"generation", 1}}},
      {"requests", nlohmann::json::array({{{"name", request}, {"devices", std::move(devices)}}})}};
  if (!c.pod_claim_name.empty()) object["podClaimName"] = c.pod_claim_name;
  return Pretty(object);
}

std::string MetadataSpec(const PreparedClaim& c, const ClaimFileDirs& dirs,
                         const std::string& request) {
  const std::string where = c.pod_claim_name.empty()
                                ? std::string("resourceclaims/") + c.name
                                : std::string("resourceclaimtemplates/") + c.pod_claim_name;
  const std::string container_path = std::string(kMetadataContainerDir) + "/" + where + "/" +
                                     request + "/" + c.driver + "-metadata.json";
  nlohmann::json mount = {{"hostPath", MetadataPath(c, dirs, request).string()},
                          {"containerPath", container_path},
                          {"options", {"ro", "bind"}}};
  nlohmann::json device = {{"name", c.uid + "_" + request},
                           {"containerEdits", {{"mounts", nlohmann::json::array({mount})}}}};
  return Pretty({{"cdiVersion", kCdiVersion},
                 {"kind", c.driver + "/metadata"},
                 {"devices", nlohmann::json::array({device})}});
}

}  // namespace

std::filesystem::path ClaimMetadataDir(const PreparedClaim& claim, const ClaimFileDirs& dirs) {
  return dirs.plugin_dir / kMetadataFolderName / claim.uid;
}

std::filesystem::path OldLayoutMetadataDir(const PreparedClaim& claim, const ClaimFileDirs& dirs) {
  const auto plain = [](const std::string& part) {
    return !part.empty() && part.find('/') == std::string::npos;
  };
  if (!plain(claim.namespace_name) || !plain(claim.name)) return {};
  return dirs.plugin_dir / kMetadataFolderName / (claim.namespace_name + "_" + claim.name);
}

std::string ClaimUidProblem(const PreparedClaim& claim) {
  std::string problem = UidProblem(claim.uid);
  if (problem.empty()) return "";
  return "claim uid '" + EscapeAndTruncate(claim.uid, 80) + "' " + problem +
         " (its files are named by it)";
}

std::vector<ClaimFile> ClaimFiles(const PreparedClaim& claim, const ClaimFileDirs& dirs) {
  std::vector<ClaimFile> files = {{GpuSpecPath(claim, dirs), GpuSpec(claim)}};
  for (const auto& request : Requests(claim)) {
    files.push_back({MetadataPath(claim, dirs, request), Metadata(claim, request)});
    files.push_back({MetadataSpecPath(claim, dirs, request), MetadataSpec(claim, dirs, request)});
  }
  return files;
}

std::vector<std::filesystem::path> ClaimPaths(const PreparedClaim& claim,
                                              const ClaimFileDirs& dirs) {
  std::vector<std::filesystem::path> paths;
  for (const auto& file : ClaimFiles(claim, dirs)) paths.push_back(file.path);
  paths.push_back(ClaimMetadataDir(claim, dirs));
  return paths;
}

std::vector<std::string> CdiDeviceIds(const PreparedClaim& claim, std::size_t i) {
  const ClaimGpu& gpu = claim.gpus.at(i);
  std::vector<std::string> ids = {claim.driver + "/gpu=" + claim.uid + "-" + DeviceName(gpu.bdf)};
  for (std::size_t j = 0; j < i; ++j) {
    if (claim.gpus[j].request == gpu.request) return ids;  // not the request's first GPU
  }
  ids.push_back(claim.driver + "/metadata=" + claim.uid + "_" + gpu.request);
  return ids;
}

}  // namespace gfp::plugin::dra
