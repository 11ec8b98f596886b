#include "adapters/apiserver/kubeconfig_document.h"

#include <yaml-cpp/yaml.h>

#include <exception>
#include <set>

#include "common/text_escape.h"

namespace gfp::adapters::apiserver {
namespace {

std::string Quote(std::string_view text) { return "\"" + EscapeAndTruncate(text, 128) + "\""; }

YamlValue::Kind KindOf(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return YamlValue::Kind::kScalar;
    case YAML::NodeType::Sequence:
      return YamlValue::Kind::kList;
    case YAML::NodeType::Map:
      return YamlValue::Kind::kMap;
    default:
      return YamlValue::Kind::kNull;
  }
}

Status WrongKind(const std::string& what, const YAML::Node& node, const char* wanted) {
  return InvalidArgument(what + " is " + YamlKindName(KindOf(node)) + ", not " + wanted);
}

// The fields of one entry's inner map; values are recorded, not walked (aliases stay cheap).
Result<std::map<std::string, YamlValue>> ReadFields(const YAML::Node& node,
                                                    const std::string& what) {
  std::map<std::string, YamlValue> fields;
  if (node.IsNull()) return fields;  // `user: {}` and `user:` alike
  if (!node.IsMap()) return WrongKind(what, node, "a map");
  for (const auto& item : node) {
    if (!item.first.IsScalar()) return InvalidArgument(what + " has a key that is not text");
    const std::string key = item.first.Scalar();
    YamlValue value{KindOf(item.second), item.second.IsScalar() ? item.second.Scalar() : ""};
    // A key given twice would be read one way here and another elsewhere: refuse it.
    if (!fields.emplace(key, std::move(value)).second) {
      return InvalidArgument(what + " gives " + Quote(key) + " twice");
    }
  }
  return fields;
}

// `clusters:` and the like: absent or null is an empty list.
Result<std::vector<NamedEntry>> ReadEntries(const YAML::Node& root, const std::string& list,
                                            const std::string& inner) {
  std::vector<NamedEntry> entries;
  const YAML::Node node = root[list];
  if (!node.IsDefined() || node.IsNull()) return entries;
  if (!node.IsSequence()) return WrongKind(list, node, "a list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string where = list + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) return WrongKind(where, item, "a map");
    const YAML::Node name = item["name"];
    if (!name.IsDefined() || name.IsNull()) return InvalidArgument(where + " has no name");
    if (!name.IsScalar()) return WrongKind(where + ".name", name, "text");
    if (name.Scalar().empty()) return InvalidArgument(where + " has an empty name");
    if (!names.insert(name.Scalar()).second) {
      return InvalidArgument("two " + list + " named " + Quote(name.Scalar()));
    }
    GFP_ASSIGN_OR_RETURN(auto fields, ReadFields(item[inner], inner + " " + Quote(name.Scalar())));
    entries.push_back({name.Scalar(), std::move(fields)});
  }
  return entries;
}

Result<KubeconfigDocument> FromRoot(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) return InvalidArgument("is empty");
  if (!root.IsMap()) {
    return InvalidArgument(std::string("is not a YAML mapping (it is ") +
                           YamlKindName(KindOf(root)) + ")");
  }
  // A top-level key given twice: yaml-cpp would quietly take the first.
  std::set<std::string> keys;
  for (const auto& item : root) {
    if (item.first.IsScalar() && !keys.insert(item.first.Scalar()).second) {
      return InvalidArgument("gives " + Quote(item.first.Scalar()) + " twice");
    }
  }
  KubeconfigDocument doc;
  const YAML::Node current = root["current-context"];
  if (current.IsDefined() && !current.IsNull()) {
    if (!current.IsScalar()) return WrongKind("current-context", current, "text");
    doc.current_context = current.Scalar();
  }
  GFP_ASSIGN_OR_RETURN(doc.clusters, ReadEntries(root, "clusters", "cluster"));
  GFP_ASSIGN_OR_RETURN(doc.contexts, ReadEntries(root, "contexts", "context"));
  GFP_ASSIGN_OR_RETURN(doc.users, ReadEntries(root, "users", "user"));
  return doc;
}

}  // namespace

const char* YamlKindName(YamlValue::Kind kind) {
  switch (kind) {
    case YamlValue::Kind::kNull:
      return "null";
    case YamlValue::Kind::kScalar:
      return "text";
    case YamlValue::Kind::kMap:
      return "a map";
    case YamlValue::Kind::kList:
      return "a list";
  }
  return "unknown";
}

Result<KubeconfigDocument> ParseKubeconfigDocument(std::string_view text) {
  // yaml-cpp reports everything by throwing: parse errors, and a lookup on the wrong kind of node.
  try {
    return FromRoot(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    return InvalidArgument("is not YAML: " + EscapeAndTruncate(e.what(), 256));
  } catch (const std::exception& e) {
    return InvalidArgument("cannot be parsed: " + EscapeAndTruncate(e.what(), 256));
  }
}

}  // namespace gfp::adapters::apiserver
