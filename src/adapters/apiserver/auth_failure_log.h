// 401 and 403 answers logged once per change of (verb, resource, status) (SPEC §11): the first
// at error level, naming what is missing; repeats at debug level, so a missing RBAC rule does
// not flood the log on every retry.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "adapters/apiserver/api_call.h"

namespace gfp::adapters::apiserver {

class AuthFailureLog {
 public:
  // `server` and `credential` (the config's source) are named in the messages.
  AuthFailureLog(std::string server, std::string credential)
      : server_(std::move(server)), credential_(std::move(credential)) {}

  // Records the status of an answer to (verb, resource); code 0 (no answer) changes nothing.
  // Returns true when this call logged a 401/403 at error level.
  bool Note(Verb verb, const std::string& resource, int code);

 private:
  std::string server_;
  std::string credential_;
  std::mutex mu_;
  std::map<std::pair<Verb, std::string>, int> last_code_;
};

}  // namespace gfp::adapters::apiserver
