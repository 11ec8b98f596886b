#include "sim/fm/sim_types.h"

#include <array>
#include <utility>

namespace gfp::fmsim {
namespace {

constexpr std::array<std::pair<Mode, std::string_view>, 3> kModes = {{
    {Mode::kRunning, "running"},
    {Mode::kStarting, "starting"},
    {Mode::kAwaitingResync, "awaiting_resync"},
}};

constexpr std::array<std::pair<HostileReply, std::string_view>, 8> kHostile = {{
    {HostileReply::kNone, "none"},
    {HostileReply::kTooManyPartitions, "too_many_partitions"},
    {HostileReply::kTooManyGpus, "too_many_gpus"},
    {HostileReply::kUnterminatedStrings, "unterminated_strings"},
    {HostileReply::kDuplicatePartitionIds, "duplicate_partition_ids"},
    {HostileReply::kBadPhysicalId, "bad_physical_id"},
    {HostileReply::kTooManyUnsupported, "too_many_unsupported"},
    {HostileReply::kTooManyFailedDevices, "too_many_failed_devices"},
}};

constexpr std::array<std::pair<FabricMode, std::string_view>, 2> kFabricModes = {{
    {FabricMode::kSharedNvswitch, "shared_nvswitch"},
    {FabricMode::kVgpu, "vgpu"},
}};

template <typename E, std::size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";
}

template <typename E, std::size_t N>
bool ValueOf(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text,
             E* out) {
  for (const auto& [v, name] : table) {
    if (name == text) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view ModeName(Mode mode) { return NameOf(kModes, mode); }
bool ParseMode(std::string_view text, Mode* mode) { return ValueOf(kModes, text, mode); }
std::string_view FabricModeName(FabricMode mode) { return NameOf(kFabricModes, mode); }
bool ParseFabricModeNumber(int number, FabricMode* mode) {
  for (const auto& [value, name] : kFabricModes) {
    if (static_cast<int>(value) == number) {
      *mode = value;
      return true;
    }
  }
  return false;
}
std::string_view HostileReplyName(HostileReply reply) { return NameOf(kHostile, reply); }
bool ParseHostileReply(std::string_view text, HostileReply* reply) {
  return ValueOf(kHostile, text, reply);
}

}  // namespace gfp::fmsim
