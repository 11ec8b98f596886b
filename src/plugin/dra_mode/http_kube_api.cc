#include "plugin/dra_mode/http_kube_api.h"

#include "common/text_escape.h"
#include "plugin/dra/json_fields.h"

namespace gfp::plugin::dra_mode {
namespace {

using adapters::apiserver::ApiCall;
using adapters::apiserver::Verb;
using Json = nlohmann::json;

// Only checked names reach a path (k8s_names: the flags, the state machine, ReadClaim's callers),
// so no escaping is needed beyond what a selector's value holds.
std::string QueryEscape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// The Status object's message of an error answer, cut: outside text in our messages.
std::string ServerMessage(const std::string& body) {
  const std::string message = dra::StringAt(Json::parse(body, nullptr, false), {"message"});
  return message.empty() ? EscapeAndTruncate(body, 120) : EscapeAndTruncate(message, 300);
}

std::string SliceName(const Json& slice) { return dra::StringAt(slice, {"metadata", "name"}); }

}  // namespace

std::string SliceFieldSelector(const std::string& node, const std::string& driver) {
  return "spec.nodeName=" + node + ",spec.driver=" + driver;
}

Result<Json> HttpKubeApi::Send(const ApiCall& call, bool not_found_ok, ApiDeadline deadline) {
  const std::string what = adapters::apiserver::Describe(call);
  GFP_ASSIGN_OR_RETURN(adapters::apiserver::ApiAnswer answer, client_.Call(call, deadline));
  if (not_found_ok && answer.code == 404) return Json();
  if (answer.code == 409) {
    return Status(ErrorCode::kAlreadyExists,
                  what + " answered 409 Conflict: " + ServerMessage(answer.body));
  }
  if (answer.code < 200 || answer.code > 299) {
    return Unavailable(what + " answered " + std::to_string(answer.code) + ": " +
                       ServerMessage(answer.body));
  }
  return answer.Json();
}

Result<std::optional<Json>> HttpKubeApi::GetClaim(const std::string& namespace_name,
                                                  const std::string& name, ApiDeadline deadline) {
  const ApiCall call{
      Verb::kGet,
      "resourceclaims",
      "/apis/resource.k8s.io/v1/namespaces/" + namespace_name + "/resourceclaims/" + name,
      {},
      {}};
  GFP_ASSIGN_OR_RETURN(Json claim, Send(call, true, deadline));
  if (claim.is_null()) return std::optional<Json>();
  return std::optional<Json>(std::move(claim));
}

Result<std::string> HttpKubeApi::GetNodeUid(const std::string& node) {
  GFP_ASSIGN_OR_RETURN(Json object, Send({Verb::kGet, "nodes", "/api/v1/nodes/" + node, {}, {}}));
  std::string uid = dra::StringAt(object, {"metadata", "uid"});
  if (uid.empty())
    return Unavailable("get nodes " + node + " answered a Node without metadata.uid");
  return uid;
}

Result<SliceList> HttpKubeApi::ListSlices(const std::string& node, const std::string& driver) {
  GFP_ASSIGN_OR_RETURN(Json list, Send({Verb::kList,
                                        "resourceslices",
                                        std::string(kSlicesPath) + "?fieldSelector=" +
                                            QueryEscape(SliceFieldSelector(node, driver)),
                                        {},
                                        {}}));
  SliceList out;
  const Json* items = dra::FieldAt(list, {"items"});
  if (!items || !items->is_array()) {
    return Unavailable("list resourceslices answered no list of items");
  }
  out.resource_version = dra::StringAt(list, {"metadata", "resourceVersion"});
  for (const Json& item : *items) out.items.push_back(item);
  return out;
}

Result<Json> HttpKubeApi::CreateSlice(const Json& slice) {
  return Send({Verb::kCreate, "resourceslices", kSlicesPath, slice.dump(), {}});
}

Result<Json> HttpKubeApi::UpdateSlice(const Json& slice) {
  return Send({Verb::kUpdate,
               "resourceslices",
               std::string(kSlicesPath) + "/" + SliceName(slice),
               slice.dump(),
               {}});
}

Json DeletePreconditions(const std::string& uid, const std::string& resource_version) {
  Json preconditions = Json::object();
  if (!uid.empty()) preconditions["uid"] = uid;
  if (!resource_version.empty()) preconditions["resourceVersion"] = resource_version;
  return {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", preconditions}};
}

Status HttpKubeApi::DeleteSlice(const std::string& name, const std::string& uid,
                                const std::string& resource_version) {
  return Send({Verb::kDelete,
               "resourceslices",
               std::string(kSlicesPath) + "/" + name,
               DeletePreconditions(uid, resource_version).dump(),
               {}},
              true)
      .status();
}

}  // namespace gfp::plugin::dra_mode
