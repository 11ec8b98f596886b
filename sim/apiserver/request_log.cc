#include "sim/apiserver/request_log.h"

namespace gfp::apisim {

std::uint64_t RequestLog::Begin(RequestRecord record) {
  std::lock_guard lock(mutex_);
  record.code = 0;
  records_.push_back(std::move(record));
  keys_.push_back(++next_key_);
  return next_key_;
}

void RequestLog::Finish(std::uint64_t key, int code) {
  std::lock_guard lock(mutex_);
  // Searched from the newest: the few requests in flight are at the end.
  for (std::size_t i = keys_.size(); i-- > 0;) {
    if (keys_[i] == key) {
      records_[i].code = code;
      return;
    }
  }
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
  keys_.clear();
}

}  // namespace gfp::apisim
