// A kubeconfig's text made into plain values. The only file that touches yaml-cpp: its
// exceptions end here, and everything after works on these structs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gfp::adapters::apiserver {

// One field of a cluster, context or user entry: a scalar's text, or only the kind of anything
// else (exec and auth-provider are refused for being there, whatever they hold).
struct YamlValue {
  enum class Kind { kNull, kScalar, kMap, kList };
  Kind kind = Kind::kNull;
  std::string text;  // kScalar only
};

// "null", "text", "a map", "a list".
const char* YamlKindName(YamlValue::Kind kind);

// `- name: n\n  cluster: {fields}` (or context:, user:).
struct NamedEntry {
  std::string name;
  std::map<std::string, YamlValue> fields;
};

struct KubeconfigDocument {
  std::string current_context;  // empty when absent
  std::vector<NamedEntry> clusters;
  std::vector<NamedEntry> contexts;
  std::vector<NamedEntry> users;
};

// Errors (InvalidArgument) say what is wrong with the text: "is not YAML: …", "is not a YAML
// mapping (a list)", "clusters is text, not a list", "users[2] has no name", "two clusters named
// \"x\"", "user \"u\" gives token twice". They do not name the file; the caller does.
Result<KubeconfigDocument> ParseKubeconfigDocument(std::string_view text);

}  // namespace gfp::adapters::apiserver
