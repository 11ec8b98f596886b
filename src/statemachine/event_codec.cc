#include "statemachine/event_codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "common/strings.h"
#include "statemachine/state.h"

namespace gfp::sm {
namespace {

using events::Event;

std::string Fm(const events::FmResult& fm) {
  std::string out = fm.name().empty() ? "code " + std::to_string(fm.code()) : fm.name();
  if (!fm.message().empty()) out += " (" + fm.message() + ")";
  return out;
}

// " vfs=[a,b]" for an activation with vGPU VFs; nothing for whole GPUs.
std::string Vfs(const google::protobuf::RepeatedPtrField<std::string>& vfs) {
  return vfs.empty() ? "" : " vfs=[" + Join(vfs) + "]";
}

// " (2 passthrough, 4 vgpu-vf)": how many devices of each kind, when any is not passthrough.
std::string KindCounts(const events::InventoryObserved& x) {
  std::map<int, int> counts;
  for (const auto& d : x.devices()) ++counts[static_cast<int>(DeviceKindOf(d.kind()))];
  if (counts.empty() || (counts.size() == 1 && counts.begin()->first == 0)) return "";
  std::string out;
  for (const auto& [kind, n] : counts) {
    out += (out.empty() ? " (" : ", ") + std::to_string(n) + " " +
           DeviceKindName(static_cast<DeviceKind>(kind));
  }
  return out + ")";
}

const google::protobuf::FieldDescriptor* BodyField(const Event& event) {
  if (event.body_case() == Event::BODY_NOT_SET) return nullptr;
  return Event::descriptor()->FindFieldByNumber(static_cast<int>(event.body_case()));
}

}  // namespace

std::string EventTypeName(const Event& event) {
  const auto* field = BodyField(event);
  return field ? field->message_type()->name() : "";
}

std::string EncodeEvent(const Event& event) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    event.SerializeToCodedStream(&coded);
  }
  return bytes;
}

Result<Event> DecodeEvent(const std::string& type, std::int64_t time_unix_micros,
                          const std::string& payload) {
  Event event;
  if (!event.ParseFromString(payload)) {
    return DataLoss("payload of " + type + " event does not decode");
  }
  if (event.body_case() == Event::BODY_NOT_SET) {
    return DataLoss("event of type \"" + type + "\" has no body this binary knows");
  }
  if (EventTypeName(event) != type) {
    return DataLoss("journal says type " + type + " but the payload is " + EventTypeName(event));
  }
  if (event.time_unix_micros() != time_unix_micros) {
    return DataLoss("journal time " + std::to_string(time_unix_micros) +
                    " differs from the event's time " + std::to_string(event.time_unix_micros()));
  }
  return event;
}

std::string SummarizeEvent(const Event& e) {
  std::ostringstream o;
  switch (e.body_case()) {
    case Event::kPluginStarted: {
      const auto& x = e.plugin_started();
      o << "plugin " << x.version() << " started, Fabric Manager "
        << (x.fabric_manager_enabled() ? "enabled" : "disabled") << ", release grace "
        << x.release_grace_micros() / 1000 << " ms";
      break;
    }
    case Event::kInventoryObserved: {
      const auto& x = e.inventory_observed();
      o << x.devices_size() << " devices" << KindCounts(x) << ":";
      for (const auto& d : x.devices())
        o << " " << d.bdf() << "(group " << d.iommu_group() << ", numa " << d.numa_node() << ")";
      if (x.devices_size() > 0) o << " resource " << x.devices(0).resource();
      for (const auto& w : x.warnings()) o << "; warning: " << w;
      break;
    }
    case Event::kModuleMappingLoaded: {
      const auto& x = e.module_mapping_loaded();
      o << x.path() << ":";
      for (const auto& a : x.assignments()) o << " " << a.bdf() << "=" << a.module_id();
      break;
    }
    case Event::kFabricManagerConnected:
      o << "connected to " << e.fabric_manager_connected().address() << " (connect params v"
        << e.fabric_manager_connected().connect_params_version() << ")";
      break;
    case Event::kFabricManagerDisconnected:
      o << "disconnected: " << e.fabric_manager_disconnected().reason();
      if (e.fabric_manager_disconnected().has_fm())
        o << " " << Fm(e.fabric_manager_disconnected().fm());
      break;
    case Event::kPartitionTableObserved: {
      const auto& x = e.partition_table_observed();
      o << x.partitions_size() << " partitions:";
      for (const auto& p : x.partitions()) {
        o << " " << p.id() << "[" << Join(p.physical_ids()) << "]";
        if (p.active()) o << "*";
        if (p.unsupported() || p.nvlinks_available() < p.max_nvlinks()) o << "(degraded)";
      }
      break;
    }
    case Event::kDeviceHealthChanged: {
      const auto& x = e.device_health_changed();
      o << x.bdf() << " " << (x.healthy() ? "Healthy" : "Unhealthy");
      if (!x.reason().empty()) o << ": " << x.reason();
      break;
    }
    case Event::kKubeletRestartObserved:
      o << "kubelet restarted: " << e.kubelet_restart_observed().reason();
      break;
    case Event::kAllocationRequested: {
      const auto& x = e.allocation_requested();
      o << x.allocation_id() << " " << x.resource() << " [" << Join(x.device_ids());
      if (x.device_ids_omitted() > 0) o << " … and " << x.device_ids_omitted() << " more IDs";
      o << "] container " << x.container_index();
      break;
    }
    case Event::kAllocationGranted: {
      const auto& x = e.allocation_granted();
      o << x.allocation_id() << " granted";
      if (x.has_partition()) o << " partition " << x.partition_id();
      break;
    }
    case Event::kAllocationRejected: {
      const auto& x = e.allocation_rejected();
      o << x.allocation_id() << " rejected: " << x.reason();
      break;
    }
    case Event::kAllocationBound: {
      const auto& x = e.allocation_bound();
      o << x.allocation_id() << " bound to " << x.pod_namespace() << "/" << x.pod_name()
        << " container " << x.container_name();
      break;
    }
    case Event::kAllocationReleased: {
      const auto& x = e.allocation_released();
      o << x.allocation_id() << " released (" << events::AllocationReleased::Reason_Name(x.reason())
        << ")";
      if (!x.detail().empty()) o << ": " << x.detail();
      break;
    }
    case Event::kPartitionActivationRequested: {
      const auto& x = e.partition_activation_requested();
      o << "partition " << x.partition_id() << " activation requested for " << x.allocation_id();
      if (!x.reason().empty()) o << " (" << x.reason() << ")";
      o << Vfs(x.vf_bdfs());
      break;
    }
    case Event::kPartitionActivated:
      o << "partition " << e.partition_activated().partition_id() << " active for "
        << e.partition_activated().allocation_id() << Vfs(e.partition_activated().vf_bdfs());
      break;
    case Event::kPartitionActivationFailed:
      o << "partition " << e.partition_activation_failed().partition_id()
        << " activation failed: " << Fm(e.partition_activation_failed().fm());
      break;
    case Event::kPartitionDeactivationRequested: {
      const auto& x = e.partition_deactivation_requested();
      o << "partition " << x.partition_id() << " deactivation requested: " << x.reason();
      break;
    }
    case Event::kPartitionDeactivated:
      o << "partition " << e.partition_deactivated().partition_id() << " inactive";
      if (e.partition_deactivated().was_already_inactive()) o << " (was already inactive)";
      break;
    case Event::kPartitionDeactivationFailed:
      o << "partition " << e.partition_deactivation_failed().partition_id()
        << " deactivation failed: " << Fm(e.partition_deactivation_failed().fm());
      break;
    case Event::kDriftDetected:
      o << "partition " << e.drift_detected().partition_id() << ": " << e.drift_detected().detail();
      break;
    case Event::kFabricManagerResynced:
      o << "active set [" << Join(e.fabric_manager_resynced().partition_ids())
        << "] handed to Fabric Manager: " << Fm(e.fabric_manager_resynced().fm());
      break;
    case Event::BODY_NOT_SET:
      o << "(no body)";
      break;
  }
  return o.str();
}

std::string EventFieldsJson(const Event& event) {
  const auto* field = BodyField(event);
  if (!field) return "{}";
  const auto& body = event.GetReflection()->GetMessage(event, field);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(body, &json, options).ok()) return "{}";
  return json;
}

std::string FormatRfc3339(std::int64_t micros) {
  std::int64_t seconds = micros / 1'000'000;
  std::int64_t fraction = micros % 1'000'000;
  if (fraction < 0) {
    fraction += 1'000'000;
    seconds -= 1;
  }
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(fraction));
  return buf;
}

Result<std::int64_t> ParseRfc3339(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6 ||
      consumed != 19) {
    return InvalidArgument("\"" + text + "\" is not an RFC 3339 time (2026-11-29T22:00:00Z)");
  }
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100'000;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  std::int64_t offset_seconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') &&
             text[pos + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(text.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) {
      return InvalidArgument("\"" + text + "\" has a malformed UTC offset");
    }
    offset_seconds = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return InvalidArgument("\"" + text + "\" needs a Z or ±hh:mm UTC offset");
  }
  if (pos != text.size()) return InvalidArgument("\"" + text + "\" has trailing characters");
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);
  return (static_cast<std::int64_t>(t) - offset_seconds) * 1'000'000 + micros;
}

}  // namespace gfp::sm
