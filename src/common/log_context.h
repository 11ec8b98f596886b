// What the log lines written on this thread are about: the allocation, partition, pod and Fabric
// Manager code of the work in progress (SPEC §2.1 --log-format). PluginCore sets it around the
// work of one allocation, so every line logged inside carries it without each log call naming
// it; the log formatter (common/log_format.h) reads it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gfp {

struct LogContext {
  std::string allocation_id;
  std::optional<std::uint32_t> partition_id;
  std::string pod;      // namespace/name
  std::string fm_code;  // FM_ST_* name

  bool empty() const {
    return allocation_id.empty() && !partition_id && pod.empty() && fm_code.empty();
  }
  bool operator==(const LogContext&) const = default;
};

// This thread's context.
const LogContext& CurrentLogContext();

// Sets fields of this thread's context for its lifetime, then puts back what was there. Scopes
// nest like blocks; set fields through the innermost live scope only. A setter given an empty
// value leaves the field as it is (an outer scope's value stays).
class ScopedLogContext {
 public:
  ScopedLogContext();
  ~ScopedLogContext();
  ScopedLogContext(const ScopedLogContext&) = delete;
  ScopedLogContext& operator=(const ScopedLogContext&) = delete;

  ScopedLogContext& AllocationId(const std::string& id);
  ScopedLogContext& PartitionId(std::uint32_t id);
  ScopedLogContext& Pod(const std::string& pod_namespace, const std::string& pod_name);
  ScopedLogContext& FmCode(const std::string& name);

 private:
  LogContext saved_;
};

}  // namespace gfp
