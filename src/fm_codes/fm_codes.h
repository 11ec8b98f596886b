// Fabric Manager return codes (fmReturn_t, reference/fabric-manager.md §2.1): the one table of
// their numbers, names, meanings and the gfp::ErrorCode a caller treats each as. The state machine
// reasons about a few of them; the FM adapter's ABI (adapters/fm/fm_abi.h) and the simulated FM
// library take the numbers from here. Its own library (gfp_fm_codes), so both sides depend on it
// and neither on the other. Header-only and free of protobuf, so the simulator can use it. Only
// FM's own meanings live here: the plugin's own outcomes (e.g. recovered as not applied) are not FM
// codes (see FmResult.origin in events.proto).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::fm_codes {

// Unscoped, so a value compares with the plain int an FM call returns.
enum Value : int {
  kSuccess = 0,
  kBadParam = -1,
  kGenericError = -2,
  kNotSupported = -3,
  kUninitialized = -4,  // deactivate: the partition is not active
  kTimeout = -5,
  kVersionMismatch = -6,
  kInUse = -7,          // activate: active already, or its GPUs are in use
  kNotConfigured = -8,  // FM is starting, or waits for the active set (resiliency mode)
  kConnectionNotValid = -9,
  kNvlinkError = -10,
  kResourceBad = -11,
  kResourceInUse = -12,
  kResourceNotInUse = -13,
  kResourceExhausted = -14,
  kResourceNotReady = -15,
  kPartitionExists = -16,
  kPartitionIdInUse = -17,
  kPartitionIdNotInUse = -18,
  kPartitionNameInUse = -19,
  kPartitionNameNotInUse = -20,
  kPartitionIdNameMismatch = -21,
  kNotReady = -22,
  kResourceUsedInThisPartition = -23,
  kResourceUsedInAnotherPartition = -24,
  kPartitionMiswiredTrunks = -25,
  kPartitionInsufficientTrunks = -26,
  kPartitionMissingSwitches = -27,
  kPartitionNetworkConfigError = -28,
  kPartitionRouteProgrammingError = -29,
};
inline constexpr int kLowestKnown = -29;

struct Info {
  std::string_view name;
  std::string_view description;
  ErrorCode category;  // e.g. NOT_CONFIGURED and CONNECTION_NOT_VALID are Unavailable: retry later
};

// Indexed by -code.
inline constexpr std::array<Info, 30> kTable = {{
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
static_assert(kTable.size() == static_cast<std::size_t>(-kLowestKnown) + 1);

// The entry of a known code; nullptr for codes outside 0..-29.
constexpr const Info* Find(int code) {
  if (code > 0 || code < kLowestKnown) return nullptr;
  return &kTable[static_cast<std::size_t>(-code)];
}

// "FM_ST_IN_USE" for -7; "FM_ST_UNKNOWN(-42)" for codes outside the table.
inline std::string Name(int code) {
  if (const Info* info = Find(code)) return std::string(info->name);
  return "FM_ST_UNKNOWN(" + std::to_string(code) + ")";
}

// A code FM did not document is treated as an internal failure.
constexpr ErrorCode Category(int code) {
  const Info* info = Find(code);
  return info ? info->category : ErrorCode::kInternal;
}

}  // namespace gfp::fm_codes
