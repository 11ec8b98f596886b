#include "sim/apiserver/request_log.h"

namespace gfp::apisim {

void RequestLog::Add(RequestRecord record) {
  std::lock_guard lock(mutex_);
  records_.push_back(std::move(record));
}

std::vector<RequestRecord> RequestLog::Records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

int RequestLog::Count(const std::string& verb, const std::string& resource) const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const RequestRecord& r : records_) {
    if ((verb == "*" || r.verb == verb) && (resource == "*" || r.resource == resource)) ++n;
  }
  return n;
}

void RequestLog::Clear() {
  std::lock_guard lock(mutex_);
  records_.clear();
}

}  // namespace gfp::apisim
