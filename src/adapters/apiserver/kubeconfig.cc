#include "adapters/apiserver/kubeconfig.h"

#include <string>

#include "adapters/apiserver/kubeconfig_document.h"
#include "adapters/apiserver/kubeconfig_entry.h"
#include "adapters/host/file_reading.h"
#include "common/text_escape.h"

namespace gfp::adapters::apiserver {
namespace {

std::string Quote(std::string_view text) { return "\"" + EscapeAndTruncate(text, 128) + "\""; }

const NamedEntry* Find(const std::vector<NamedEntry>& entries, const std::string& name) {
  for (const NamedEntry& entry : entries) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::string Names(const std::vector<NamedEntry>& entries) {
  std::string out;
  for (const NamedEntry& entry : entries) out += (out.empty() ? "" : ", ") + Quote(entry.name);
  return out.empty() ? "none" : out;
}

// The entry of `list` (clusters or users) that the context's field `kind` names.
Result<const NamedEntry*> Resolve(const NamedEntry& context, const std::string& kind,
                                  const std::vector<NamedEntry>& list) {
  const std::string what = "context " + Quote(context.name);
  const auto field = context.fields.find(kind);
  if (field == context.fields.end() || field->second.kind == YamlValue::Kind::kNull ||
      (field->second.kind == YamlValue::Kind::kScalar && field->second.text.empty())) {
    return InvalidArgument(what + " names no " + kind);
  }
  if (field->second.kind != YamlValue::Kind::kScalar) {
    return InvalidArgument(what + " has " + kind + " as " + YamlKindName(field->second.kind) +
                           ", not text");
  }
  const NamedEntry* entry = Find(list, field->second.text);
  if (entry == nullptr) {
    return InvalidArgument(what + " names " + kind + " " + Quote(field->second.text) +
                           ", which is not in " + kind + "s (" + Names(list) + ")");
  }
  return entry;
}

Result<const NamedEntry*> CurrentContext(const KubeconfigDocument& doc) {
  if (doc.current_context.empty()) {
    return InvalidArgument("has no current-context (set one with kubectl config use-context)");
  }
  const NamedEntry* context = Find(doc.contexts, doc.current_context);
  if (context == nullptr) {
    return InvalidArgument("current-context " + Quote(doc.current_context) +
                           " names no context (contexts: " + Names(doc.contexts) + ")");
  }
  return context;
}

Result<ApiServerConfig> Build(const std::filesystem::path& path, std::string_view text) {
  GFP_ASSIGN_OR_RETURN(const KubeconfigDocument doc, ParseKubeconfigDocument(text));
  GFP_ASSIGN_OR_RETURN(const NamedEntry* context, CurrentContext(doc));
  GFP_ASSIGN_OR_RETURN(const NamedEntry* cluster, Resolve(*context, "cluster", doc.clusters));
  GFP_ASSIGN_OR_RETURN(const NamedEntry* user, Resolve(*context, "user", doc.users));
  std::filesystem::path base_dir = path.parent_path();
  if (base_dir.empty()) base_dir = ".";
  ApiServerConfig config;
  GFP_RETURN_IF_ERROR(ApplyCluster(EntryReader(*cluster, "cluster", base_dir), config));
  GFP_RETURN_IF_ERROR(ApplyUser(EntryReader(*user, "user", base_dir), config));
  config.source = "kubeconfig " + EscapeAndTruncate(path.string(), 256) + " (context " +
                  Quote(doc.current_context) + ")";
  return config;
}

}  // namespace

Result<ApiServerConfig> LoadKubeconfig(const std::filesystem::path& path) {
  const std::string context = "kubeconfig " + EscapeAndTruncate(path.string(), 256);
  Result<std::string> text = host::ReadWholeFile(path, kMaxKubeconfigBytes);
  if (!text.ok()) {
    Status status = text.status().WithContext(context + " cannot be read");
    // KUBECONFIG may list several files (kubectl merges them); this plugin takes one.
    if (status.code() == ErrorCode::kNotFound && path.string().find(':') != std::string::npos) {
      status = Status(status.code(), status.message() +
                                         " (a list of kubeconfig files separated by ':' is not "
                                         "merged here: give one file)");
    }
    return status;
  }
  Result<ApiServerConfig> config = Build(path, *text);
  if (!config.ok()) return config.status().WithContext(context);
  return config;
}

}  // namespace gfp::adapters::apiserver
