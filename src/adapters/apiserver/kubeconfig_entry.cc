#include "adapters/apiserver/kubeconfig_entry.h"

#include <utility>

#include "adapters/apiserver/base64.h"
#include "adapters/apiserver/referenced_file.h"
#include "common/text_escape.h"

namespace gfp::adapters::apiserver {

EntryReader::EntryReader(const NamedEntry& entry, const std::string& kind,
                         std::filesystem::path base_dir)
    : entry_(entry),
      what_(kind + " \"" + EscapeAndTruncate(entry.name, 128) + "\""),
      base_dir_(std::move(base_dir)) {}

Status EntryReader::Error(const std::string& message) const {
  return InvalidArgument(what_ + " " + message);
}

bool EntryReader::Has(const std::string& key) const {
  const auto it = entry_.fields.find(key);
  if (it == entry_.fields.end()) return false;
  const YamlValue& value = it->second;
  return value.kind != YamlValue::Kind::kNull &&
         !(value.kind == YamlValue::Kind::kScalar && value.text.empty());
}

Result<std::string> EntryReader::Text(const std::string& key) const {
  const auto it = entry_.fields.find(key);
  if (it == entry_.fields.end() || it->second.kind == YamlValue::Kind::kNull) return std::string();
  if (it->second.kind != YamlValue::Kind::kScalar) {
    return Error("has " + key + " as " + YamlKindName(it->second.kind) + ", not text");
  }
  return it->second.text;
}

Result<std::optional<std::string>> EntryReader::DataOrFile(const std::string& data_key,
                                                           const std::string& file_key) const {
  GFP_ASSIGN_OR_RETURN(const std::string data, Text(data_key));
  GFP_ASSIGN_OR_RETURN(const std::string file, Text(file_key));
  if (!data.empty() && !file.empty()) {
    return Error("gives both " + file_key + " and " + data_key + ": keep one");
  }
  if (!data.empty()) {
    Result<std::string> decoded = DecodeBase64(data);
    if (!decoded.ok()) return Error("has " + data_key + " that is " + decoded.status().message());
    return std::optional<std::string>(std::move(decoded).value());
  }
  if (file.empty()) return std::optional<std::string>();
  Result<std::string> content = ReadReferencedFile(ResolveAgainst(base_dir_, file), file_key);
  if (!content.ok()) return content.status().WithContext(what_);
  return std::optional<std::string>(std::move(content).value());
}

}  // namespace gfp::adapters::apiserver
