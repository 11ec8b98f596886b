#include "cli/state_json.h"

#include <google/protobuf/descriptor.h>

#include <string_view>

#include "statemachine/event_codec.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::cli {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// How a field is shown, when not as its value under its proto name.
enum class Shown {
  kAsIs,
  kHidden,
  kTime,              // RFC 3339, null when 0
  kDeviceKind,        // "passthrough", "mdev", "vgpu-vf"
  kIntentKind,        // "activate", "deactivate"
  kAllocationStatus,  // "requested", "granted", ...
  kOmitWhenEmpty,     // no key at all when empty (VF lists, parent_bdf)
  kNullWithoutFlag,   // null unless the message's has_partition is set
  kOmitWhenAbsent,    // a message field: no key at all when it is not set (a claim)
};

struct FieldView {
  std::string_view field;  // "<message>.<field>" in snapshot.proto
  std::string_view key;    // the JSON key; empty: the proto name
  Shown shown;
};

constexpr FieldView kViews[] = {
    {"State.format_version", "", Shown::kHidden},
    {"State.last_time", "time", Shown::kTime},
    {"State.fm_enabled", "fabric_manager_enabled", Shown::kAsIs},
    {"State.fm_connected", "fabric_manager_connected", Shown::kAsIs},
    {"State.devices", "device_list", Shown::kAsIs},
    {"State.active", "active_partitions", Shown::kAsIs},
    {"State.intents", "pending_intents", Shown::kAsIs},
    {"State.allocations", "live_allocations", Shown::kAsIs},
    {"State.anomaly_count", "anomalies", Shown::kAsIs},
    {"DeviceState.bdf", "id", Shown::kAsIs},
    {"DeviceState.kind", "", Shown::kDeviceKind},
    {"DeviceState.parent_bdf", "", Shown::kOmitWhenEmpty},
    {"ActivePartition.owner", "allocation_id", Shown::kAsIs},
    {"ActivePartition.since", "", Shown::kTime},
    {"ActivePartition.vf_bdfs", "", Shown::kOmitWhenEmpty},
    {"PendingIntent.kind", "", Shown::kIntentKind},
    {"PendingIntent.requested_at", "", Shown::kTime},
    {"PendingIntent.vf_bdfs", "", Shown::kOmitWhenEmpty},
    {"Allocation.id", "allocation_id", Shown::kAsIs},
    {"Allocation.status", "", Shown::kAllocationStatus},
    {"Allocation.has_partition", "", Shown::kHidden},
    {"Allocation.partition_id", "", Shown::kNullWithoutFlag},
    {"Allocation.requested_at", "", Shown::kTime},
    {"Allocation.granted_at", "", Shown::kTime},
    {"Allocation.fabric_vfs", "", Shown::kOmitWhenEmpty},
    {"Allocation.claim", "", Shown::kOmitWhenAbsent},
    {"Claim.namespace_name", "namespace", Shown::kAsIs},
    {"UnpreparingClaim.has_partition", "", Shown::kHidden},
    {"UnpreparingClaim.partition_id", "", Shown::kNullWithoutFlag},
};

std::string RowName(const FieldDescriptor* field) {
  return field->containing_type()->name() + "." + field->name();
}

FieldView ViewOf(const FieldDescriptor* field) {
  const std::string name = RowName(field);
  for (const FieldView& view : kViews) {
    if (view.field == name) return view;
  }
  return {"", "", Shown::kAsIs};
}

nlohmann::json MessageJson(const Message& message);

nlohmann::json ScalarJson(const Message& m, const FieldDescriptor* f, int i) {
  const Reflection& r = *m.GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r.GetRepeatedInt32(m, f, i) : r.GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return rep ? r.GetRepeatedInt64(m, f, i) : r.GetInt64(m, f);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r.GetRepeatedUInt32(m, f, i) : r.GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r.GetRepeatedUInt64(m, f, i) : r.GetUInt64(m, f);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r.GetRepeatedDouble(m, f, i) : r.GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r.GetRepeatedFloat(m, f, i) : r.GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r.GetRepeatedBool(m, f, i) : r.GetBool(m, f);
    case FieldDescriptor::CPPTYPE_ENUM:
      return (rep ? r.GetRepeatedEnum(m, f, i) : r.GetEnum(m, f))->name();
    case FieldDescriptor::CPPTYPE_STRING:
      return rep ? r.GetRepeatedString(m, f, i) : r.GetString(m, f);
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return MessageJson(rep ? r.GetRepeatedMessage(m, f, i) : r.GetMessage(m, f));
  }
  return nullptr;
}

nlohmann::json ValueJson(const Message& m, const FieldDescriptor* f) {
  if (!f->is_repeated()) return ScalarJson(m, f, -1);
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) list.push_back(ScalarJson(m, f, i));
  return list;
}

// The value as the table says it is shown; discarded when null is returned for a hidden field.
nlohmann::json Shape(const Message& m, const FieldDescriptor* f, Shown shown) {
  nlohmann::json value = ValueJson(m, f);
  switch (shown) {
    case Shown::kAsIs:
    case Shown::kHidden:
    case Shown::kOmitWhenEmpty:
    case Shown::kOmitWhenAbsent:
      return value;
    case Shown::kTime:
      return value == 0 ? nlohmann::json(nullptr)
                        : nlohmann::json(sm::FormatRfc3339(value.get<sm::Micros>()));
    case Shown::kDeviceKind:
      return sm::DeviceKindName(sm::DeviceKindOf(value.get<int>()));
    case Shown::kIntentKind:
      return sm::IntentKindName(static_cast<sm::IntentKind>(value.get<int>()));
    case Shown::kAllocationStatus:
      return sm::AllocationStatusName(static_cast<sm::AllocationStatus>(value.get<int>()));
    case Shown::kNullWithoutFlag: {
      const FieldDescriptor* flag = m.GetDescriptor()->FindFieldByName("has_partition");
      const bool set = flag != nullptr && m.GetReflection()->GetBool(m, flag);
      return set ? value : nlohmann::json(nullptr);
    }
  }
  return value;
}

// An empty list or string (json::empty() is false for every string).
bool IsEmpty(const nlohmann::json& value) {
  return value.is_string() ? value.get_ref<const std::string&>().empty() : value.empty();
}

nlohmann::json MessageJson(const Message& message) {
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < message.GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* field = message.GetDescriptor()->field(i);
    const FieldView view = ViewOf(field);
    if (view.shown == Shown::kHidden) continue;
    if (view.shown == Shown::kOmitWhenAbsent &&
        !message.GetReflection()->HasField(message, field)) {
      continue;
    }
    nlohmann::json value = Shape(message, field, view.shown);
    if (view.shown == Shown::kOmitWhenEmpty && IsEmpty(value)) continue;
    out[view.key.empty() ? field->name() : std::string(view.key)] = std::move(value);
  }
  return out;
}

// "namespace/name" of the pod bound to `allocation`, null before one is seen; for a DRA claim,
// the first pod its status.reservedFor names.
nlohmann::json PodOf(const sm::State& s, const std::string& allocation) {
  auto a = s.allocations.find(allocation);
  if (a == s.allocations.end()) return nullptr;
  if (a->second.claim) {
    const auto& pods = a->second.claim->reserved_for;
    return pods.empty() ? nlohmann::json(nullptr) : nlohmann::json(pods.front());
  }
  if (a->second.pod_name.empty()) return nullptr;
  return a->second.pod_namespace + "/" + a->second.pod_name;
}

// An active partition owned by a DRA claim names the claim instead of its allocation (SPEC §2.2).
void NameTheClaim(const sm::State& s, nlohmann::json& entry) {
  auto a = s.allocations.find(entry["allocation_id"].get<std::string>());
  if (a == s.allocations.end() || !a->second.claim) return;
  const sm::Claim& c = *a->second.claim;
  entry.erase("allocation_id");
  entry["claim"] = {{"uid", c.uid}, {"namespace", c.namespace_name}, {"name", c.name}};
}

// What the state implies rather than holds: joins and counts.
void AddViews(const sm::State& s, nlohmann::json& out) {
  for (auto& entry : out["active_partitions"]) {
    nlohmann::json devices = nlohmann::json::array();
    if (auto p = s.partitions.find(entry["partition_id"].get<sm::PartitionId>());
        p != s.partitions.end()) {
      for (const auto& bdf : sm::DevicesOfPartition(s, p->second).bdfs) devices.push_back(bdf);
    }
    entry["devices"] = devices;
    entry["pod"] = PodOf(s, entry["allocation_id"].get<std::string>());
    NameTheClaim(s, entry);
  }
  for (auto& entry : out["live_allocations"]) {
    entry["pod"] = PodOf(s, entry["allocation_id"].get<std::string>());
  }
  nlohmann::json unhealthy = nlohmann::json::array();
  for (const auto& [bdf, d] : s.devices) {
    if (!d.healthy) unhealthy.push_back({{"bdf", bdf}, {"reason", d.unhealthy_reason}});
  }
  out["unhealthy_devices"] = unhealthy;
  out["devices"] = s.devices.size();
  out["partitions_known"] = s.partitions.size();
}

}  // namespace

nlohmann::json StateJson(const sm::State& state) {
  nlohmann::json out = MessageJson(sm::SnapshotOf(state));
  AddViews(state, out);
  return out;
}

std::vector<std::string> StateJsonRowsWithoutField() {
  std::vector<std::string> out;
  for (const FieldView& view : kViews) {
    const std::string name(view.field);
    const auto dot = name.find('.');
    const auto* message =
        snapshot::State::descriptor()->file()->FindMessageTypeByName(name.substr(0, dot));
    if (message == nullptr || message->FindFieldByName(name.substr(dot + 1)) == nullptr) {
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace gfp::cli
