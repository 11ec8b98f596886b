#include "sim/kubelet/extended_resource_name.h"

#include <string>

namespace gfp::kubelet {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Go validation.IsQualifiedName's name part: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], <= 63.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// RFC 1123 subdomain: dot-separated labels, <= 253 characters.
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!IsDns1123Label(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Go validation.IsQualifiedName: "[prefix/]name" with prefix a DNS subdomain.
bool IsQualifiedName(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return IsQualifiedNamePart(s);
  if (s.find('/', slash + 1) != std::string_view::npos) return false;
  const std::string_view prefix = s.substr(0, slash);
  return IsDns1123Subdomain(prefix) && IsQualifiedNamePart(s.substr(slash + 1));
}

}  // namespace

bool IsExtendedResourceName(std::string_view name) {
  // Native resources: no domain at all, or a kubernetes.io domain.
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.starts_with("requests.")) return false;
  // The kubelet validates the name as it would appear in a resource quota.
  return IsQualifiedName(std::string("requests.") + std::string(name));
}

}  // namespace gfp::kubelet
