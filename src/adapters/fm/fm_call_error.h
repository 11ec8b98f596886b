// How a failed Fabric Manager call is described: FM's code and name, the call it was ("what",
// e.g. "fmActivateFabricPartition(3)"), and why, in the client's words. One definition for the
// SDK client and for anything that must fail the way it does (the simulation's in-memory FM).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "adapters/fm/fm_error.h"
#include "common/status.h"

namespace gfp::adapters::fm {

// Explains a call-specific meaning of a return code ("" when it has none).
using Hint = std::function<std::string(int)>;

// "what: FM_ST_NAME (detail)".
FmError MakeError(const std::string& what, int code, const std::string& detail, bool from_library);
// A code the library returned: the hint's reading, else FM's documented meaning.
FmError LibraryError(const std::string& what, int code, const Hint& hint);
// FM said SUCCESS but what it wrote cannot be trusted.
FmError MalformedReply(const std::string& what, const Status& decode_status);
// A call that did not return within the deadline (it may still complete later).
FmError DeadlineError(const std::string& what, std::chrono::milliseconds deadline);
// A call not attempted because an earlier one has not returned yet.
FmError BusyError(const std::string& what);

// "fmSetActivatedFabricPartitions([1,2])".
std::string SetActivatedCallText(std::span<const std::uint32_t> partition_ids);
// The caller-side check before fmSetActivatedFabricPartitions: FM's list holds at most
// kMaxFabricPartitions ids. The error (not sent) when `partition_ids` exceeds it.
std::optional<FmError> ActivatedListTooLong(std::span<const std::uint32_t> partition_ids);

std::string ActivationHint(int code);
std::string VfActivationHint(int code);
std::string DeactivationHint(int code);
std::string QueryHint(int code);
std::string ConnectHint(int code);

}  // namespace gfp::adapters::fm
