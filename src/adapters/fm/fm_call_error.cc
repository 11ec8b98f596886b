#include "adapters/fm/fm_call_error.h"

#include "adapters/fm/fm_abi.h"
#include "adapters/fm/fm_return_codes.h"

namespace gfp::adapters::fm {

FmError MakeError(const std::string& what, int code, const std::string& detail, bool from_library) {
  FmError error;
  error.code = code;
  error.name = FmReturnName(code);
  error.message = what + ": " + error.name + " (" + detail + ")";
  error.category = FmReturnCategory(code);
  error.from_library = from_library;
  return error;
}

FmError LibraryError(const std::string& what, int code, const Hint& hint) {
  std::string detail = hint ? hint(code) : std::string();
  if (detail.empty()) detail = std::string(FmReturnDescription(code));
  if (detail.empty()) detail = "return code not documented";
  return MakeError(what, code, detail, true);
}

// FM said SUCCESS but what it wrote cannot be trusted.
FmError MalformedReply(const std::string& what, const Status& decode_status) {
  FmError error;
  error.code = abi::kGenericError;
  error.name = FmReturnName(abi::kGenericError);
  error.message = what + " returned FM_ST_SUCCESS with unusable data: " + decode_status.message();
  error.category = ErrorCode::kDataLoss;
  error.from_library = false;
  return error;
}

std::string ActivationHint(int code) {
  switch (code) {
    case abi::kInUse:
      return "partition active or its GPUs in another active partition";
    case abi::kBadParam:
      return "unknown or unsupported partition id";
    case abi::kNotConfigured:
      return "Fabric Manager is initialising or waiting for fmSetActivatedFabricPartitions";
    case abi::kNotSupported:
      return "Fabric Manager is not in shared NVSwitch mode (FABRIC_MODE=1)";
    case abi::kNvlinkError:
      return "NVLink training failed for the partition";
    default:
      return {};
  }
}

std::string VfActivationHint(int code) {
  switch (code) {
    case abi::kBadParam:
      return "unknown partition id, or the VFs are not one per GPU of the partition in its GPU "
             "order";
    case abi::kNotSupported:
      return "Fabric Manager is not in vGPU mode (FABRIC_MODE=2)";
    default:
      return ActivationHint(code);
  }
}

std::string DeactivationHint(int code) {
  switch (code) {
    case abi::kUninitialized:
      return "library not initialised or partition not active";
    case abi::kBadParam:
      return "unknown or unsupported partition id";
    case abi::kNotConfigured:
      return "Fabric Manager is initialising or waiting for fmSetActivatedFabricPartitions";
    default:
      return {};
  }
}

std::string QueryHint(int code) {
  if (code == abi::kNotConfigured) {
    return "Fabric Manager is initialising or waiting for fmSetActivatedFabricPartitions";
  }
  if (code == abi::kNotSupported) return "not supported in this fabric mode or restart state";
  return {};
}

std::string ConnectHint(int code) {
  if (code == abi::kConnectionNotValid) return "Fabric Manager unreachable at this address";
  if (code == abi::kVersionMismatch) return "connect struct version not accepted";
  return {};
}

FmError DeadlineError(const std::string& what, std::chrono::milliseconds deadline) {
  return MakeError(
      what, abi::kTimeout,
      "no reply within " + std::to_string(deadline.count()) + " ms; connection marked broken",
      false);
}

FmError BusyError(const std::string& what) {
  return MakeError(what, abi::kConnectionNotValid,
                   "not attempted: an earlier Fabric Manager call has not returned yet", false);
}

std::string SetActivatedCallText(std::span<const std::uint32_t> partition_ids) {
  std::string text = "fmSetActivatedFabricPartitions([";
  for (std::size_t i = 0; i < partition_ids.size(); ++i) {
    text += (i == 0 ? "" : ",") + std::to_string(partition_ids[i]);
  }
  return text + "])";
}

std::optional<FmError> ActivatedListTooLong(std::span<const std::uint32_t> partition_ids) {
  if (partition_ids.size() <= abi::kMaxFabricPartitions) return std::nullopt;
  return MakeError(SetActivatedCallText(partition_ids), abi::kBadParam,
                   "not sent: " + std::to_string(partition_ids.size()) +
                       " partitions exceed the maximum " +
                       std::to_string(abi::kMaxFabricPartitions),
                   false);
}

}  // namespace gfp::adapters::fm
