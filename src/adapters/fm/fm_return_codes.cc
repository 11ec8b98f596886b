#include "adapters/fm/fm_return_codes.h"

#include <array>

#include "adapters/fm/fm_abi.h"

namespace gfp::fm {
namespace {

struct CodeInfo {
  std::string_view name;
  std::string_view description;
  ErrorCode category;
};

// Indexed by -code.
constexpr std::array<CodeInfo, 30> kCodes = {{
    {"FM_ST_SUCCESS", "success", ErrorCode::kOk},
    {"FM_ST_BADPARAM", "invalid argument", ErrorCode::kInvalidArgument},
    {"FM_ST_GENERIC_ERROR", "generic error, see the Fabric Manager log", ErrorCode::kInternal},
    {"FM_ST_NOT_SUPPORTED", "not supported in this fabric mode", ErrorCode::kFailedPrecondition},
    {"FM_ST_UNINITIALIZED", "not initialised or not active", ErrorCode::kFailedPrecondition},
    {"FM_ST_TIMEOUT", "timed out", ErrorCode::kDeadlineExceeded},
    {"FM_ST_VERSION_MISMATCH", "struct or API version mismatch", ErrorCode::kFailedPrecondition},
    {"FM_ST_IN_USE", "resource in use", ErrorCode::kFailedPrecondition},
    {"FM_ST_NOT_CONFIGURED", "Fabric Manager is still initialising", ErrorCode::kUnavailable},
    {"FM_ST_CONNECTION_NOT_VALID", "connection to Fabric Manager not valid",
     ErrorCode::kUnavailable},
    {"FM_ST_NVLINK_ERROR", "NVLink error", ErrorCode::kInternal},
    {"FM_ST_RESOURCE_BAD", "referenced resource does not exist", ErrorCode::kNotFound},
    {"FM_ST_RESOURCE_IN_USE", "referenced resource already in use", ErrorCode::kFailedPrecondition},
    {"FM_ST_RESOURCE_NOT_IN_USE", "referenced resource not in use", ErrorCode::kFailedPrecondition},
    {"FM_ST_RESOURCE_EXHAUSTED", "not enough of a resource", ErrorCode::kResourceExhausted},
    {"FM_ST_RESOURCE_NOT_READY", "resource not ready", ErrorCode::kUnavailable},
    {"FM_ST_PARTITION_EXISTS", "partition already exists", ErrorCode::kAlreadyExists},
    {"FM_ST_PARTITION_ID_IN_USE", "partition id already in use", ErrorCode::kFailedPrecondition},
    {"FM_ST_PARTITION_ID_NOT_IN_USE", "partition id not found or not in use",
     ErrorCode::kFailedPrecondition},
    {"FM_ST_PARTITION_NAME_IN_USE", "partition name already in use", ErrorCode::kAlreadyExists},
    {"FM_ST_PARTITION_NAME_NOT_IN_USE", "partition name not found", ErrorCode::kNotFound},
    {"FM_ST_PARTITION_ID_NAME_MISMATCH", "partition id and name refer to different partitions",
     ErrorCode::kInvalidArgument},
    {"FM_ST_NOT_READY", "Fabric Manager not ready", ErrorCode::kUnavailable},
    {"FM_ST_RESOURCE_USED_IN_THIS_PARTITION", "resource already in this partition",
     ErrorCode::kFailedPrecondition},
    {"FM_ST_RESOURCE_USED_IN_ANOTHER_PARTITION", "resource in use in another partition",
     ErrorCode::kFailedPrecondition},
    {"FM_ST_PARTITION_MISWIRED_TRUNKS", "miswired trunks", ErrorCode::kInternal},
    {"FM_ST_PARTITION_INSUFFICIENT_TRUNKS", "insufficient trunks", ErrorCode::kInternal},
    {"FM_ST_PARTITION_MISSING_SWITCHES", "missing switches", ErrorCode::kInternal},
    {"FM_ST_PARTITION_NETWORK_CONFIG_ERROR", "network configuration error", ErrorCode::kInternal},
    {"FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR", "route programming error", ErrorCode::kInternal},
}};
static_assert(kCodes.size() == static_cast<std::size_t>(-abi::kLowestKnownReturn) + 1);

const CodeInfo* Lookup(int code) {
  if (code > 0 || code < abi::kLowestKnownReturn) return nullptr;
  return &kCodes[static_cast<std::size_t>(-code)];
}

}  // namespace

std::string FmReturnName(int code) {
  if (const CodeInfo* info = Lookup(code)) return std::string(info->name);
  return "FM_ST_UNKNOWN(" + std::to_string(code) + ")";
}

std::string_view FmReturnDescription(int code) {
  if (const CodeInfo* info = Lookup(code)) return info->description;
  return {};
}

ErrorCode FmReturnCategory(int code) {
  if (const CodeInfo* info = Lookup(code)) return info->category;
  return ErrorCode::kInternal;
}

}  // namespace gfp::fm
