#include "plugin/core/log_scope.h"

#include <algorithm>

namespace gfp::plugin::core {
namespace {

using google::protobuf::FieldDescriptor;

// The event's body (the one set field of its oneof), or nullptr.
const google::protobuf::Message* BodyOf(const events::Event& event) {
  const auto* oneof = event.GetDescriptor()->FindOneofByName("body");
  const auto* field =
      oneof ? event.GetReflection()->GetOneofFieldDescriptor(event, oneof) : nullptr;
  return field ? &event.GetReflection()->GetMessage(event, field) : nullptr;
}

// The field `name` of `message` if it exists with that type.
const FieldDescriptor* FieldOf(const google::protobuf::Message& message, const char* name,
                               FieldDescriptor::CppType type) {
  const FieldDescriptor* field = message.GetDescriptor()->FindFieldByName(name);
  return field && !field->is_repeated() && field->cpp_type() == type ? field : nullptr;
}

std::string StringField(const google::protobuf::Message& message, const char* name) {
  const auto* field = FieldOf(message, name, FieldDescriptor::CPPTYPE_STRING);
  return field ? message.GetReflection()->GetString(message, field) : std::string();
}

}  // namespace

void AddAllocation(ScopedLogContext& scope, const sm::State& state, const sm::AllocationId& id) {
  if (id.empty()) return;
  scope.AllocationId(id);
  auto it = state.allocations.find(id);
  if (it == state.allocations.end()) return;
  if (it->second.partition) scope.PartitionId(*it->second.partition);
  scope.Pod(it->second.pod_namespace, it->second.pod_name);
}

void AddPartition(ScopedLogContext& scope, const sm::State& state, sm::PartitionId id) {
  sm::AllocationId owner;
  if (auto intent = state.intents.find(id); intent != state.intents.end()) {
    owner = intent->second.allocation_id;
  }
  auto active = state.active.find(id);
  if (owner.empty() && CurrentLogContext().allocation_id.empty() && active != state.active.end()) {
    owner = active->second.owner;
  }
  AddAllocation(scope, state, owner);
  scope.PartitionId(id);
}

void AddAllocationOfDevices(ScopedLogContext& scope, const sm::State& state,
                            const std::vector<sm::Bdf>& devices) {
  std::vector<sm::Bdf> wanted = devices;
  std::sort(wanted.begin(), wanted.end());
  const sm::Allocation* newest = nullptr;
  for (const auto& [id, allocation] : state.allocations) {
    std::vector<sm::Bdf> held = allocation.devices;
    std::sort(held.begin(), held.end());
    if (!allocation.live() || held != wanted) continue;
    if (!newest || allocation.requested_at >= newest->requested_at) newest = &allocation;
  }
  if (newest) AddAllocation(scope, state, newest->id);
}

void AddEvent(ScopedLogContext& scope, const sm::State& state, const events::Event& event) {
  const google::protobuf::Message* body = BodyOf(event);
  if (!body) return;
  AddAllocation(scope, state, StringField(*body, "allocation_id"));
  AddAllocation(scope, state, StringField(*body, "for_allocation_id"));
  if (const auto* field = FieldOf(*body, "partition_id", FieldDescriptor::CPPTYPE_UINT32)) {
    AddPartition(scope, state, body->GetReflection()->GetUInt32(*body, field));
  }
  scope.Pod(StringField(*body, "pod_namespace"), StringField(*body, "pod_name"));
  if (const auto* field = FieldOf(*body, "fm", FieldDescriptor::CPPTYPE_MESSAGE)) {
    scope.FmCode(StringField(body->GetReflection()->GetMessage(*body, field), "name"));
  }
}

void AddAllocation(ScopedLogContext& scope, const engine::Engine& engine,
                   const sm::AllocationId& id) {
  engine.Read([&](const sm::State& s) {
    AddAllocation(scope, s, id);
    return 0;
  });
}

void AddPartition(ScopedLogContext& scope, const engine::Engine& engine, sm::PartitionId id) {
  engine.Read([&](const sm::State& s) {
    AddPartition(scope, s, id);
    return 0;
  });
}

void AddAllocationOfDevices(ScopedLogContext& scope, const engine::Engine& engine,
                            const std::vector<sm::Bdf>& devices) {
  engine.Read([&](const sm::State& s) {
    AddAllocationOfDevices(scope, s, devices);
    return 0;
  });
}

}  // namespace gfp::plugin::core
