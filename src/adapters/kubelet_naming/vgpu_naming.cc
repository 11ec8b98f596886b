#include "adapters/kubelet_naming/vgpu_naming.h"

namespace gfp::adapters::kubelet_naming {
namespace {

bool IsGoRegexpSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

bool IsAlphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

constexpr std::size_t kMaxQualifiedNameLength = 63;

}  // namespace

std::string ReplaceWhitespaceRuns(std::string_view text) {
  std::string out;
  bool in_run = false;
  for (char c : text) {
    if (IsGoRegexpSpace(c)) {
      if (!in_run) out += '_';
      in_run = true;
    } else {
      out += c;
      in_run = false;
    }
  }
  return out;
}

bool IsValidResourceSuffix(std::string_view suffix) {
  if (suffix.empty() || suffix.size() > kMaxQualifiedNameLength) return false;
  if (!IsAlphanumeric(suffix.front()) || !IsAlphanumeric(suffix.back())) return false;
  for (char c : suffix) {
    if (!IsAlphanumeric(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string ResourceNameToEnvVar(std::string_view prefix, std::string_view resource_name) {
  std::string key = std::string(prefix) + "_";
  for (char c : resource_name) {
    if (c == '/' || c == '.') {
      key += '_';
    } else {
      key += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
  }
  return key;
}

std::string MdevEnvKey(std::string_view type_name) {
  return ResourceNameToEnvVar("MDEV_PCI_RESOURCE", "nvidia.com/" + std::string(type_name));
}

std::string VgpuVfEnvKey(std::string_view profile) {
  return ResourceNameToEnvVar("PCI_RESOURCE", "nvidia.com/" + std::string(profile));
}

}  // namespace gfp::adapters::kubelet_naming
