#include "sim/apiserver/request_log.h"

namespace gfp::apisim {

std::uint64_t RequestLog::Begin(RequestRecord record) {
  std::lock_guard lock(mutex_);
  record.code = 0;
  records_.push_back(std::move(record));
  return first_key_ + records_.size() - 1;
}

void RequestLog::Finish(std::uint64_t key, int code) {
  std::lock_guard lock(mutex_);
  if (key >= first_key_ && key - first_key_ < records_.size())
    records_[key - first_key_].code = code;
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
  first_key_ += records_.size();  // keys of cleared requests never match again
  records_.clear();
}

}  // namespace gfp::apisim
