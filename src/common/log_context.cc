#include "common/log_context.h"

namespace gfp {
namespace {

thread_local LogContext t_context;

}  // namespace

const LogContext& CurrentLogContext() { return t_context; }

ScopedLogContext::ScopedLogContext() : saved_(t_context) {}

ScopedLogContext::~ScopedLogContext() { t_context = std::move(saved_); }

ScopedLogContext& ScopedLogContext::AllocationId(const std::string& id) {
  if (!id.empty()) t_context.allocation_id = id;
  return *this;
}

ScopedLogContext& ScopedLogContext::PartitionId(std::uint32_t id) {
  t_context.partition_id = id;
  return *this;
}

ScopedLogContext& ScopedLogContext::Pod(const std::string& pod_namespace,
                                        const std::string& pod_name) {
  if (!pod_name.empty()) t_context.pod = pod_namespace + "/" + pod_name;
  return *this;
}

ScopedLogContext& ScopedLogContext::FmCode(const std::string& name) {
  if (!name.empty()) t_context.fm_code = name;
  return *this;
}

}  // namespace gfp
