#include "adapters/apiserver/auth_failure_log.h"

#include <spdlog/spdlog.h>

namespace gfp::adapters::apiserver {

bool AuthFailureLog::Note(Verb verb, const std::string& resource, int code) {
  if (code == 0) return false;
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    int& last = last_code_[{verb, resource}];
    changed = last != code;
    last = code;
  }
  if (code != 401 && code != 403) return false;
  const char* what = code == 401 ? "401 Unauthorized: the credential is missing, expired or refused"
                                 : "403 Forbidden: an RBAC rule is missing";
  if (!changed) {
    spdlog::debug("API server {} still answers {} {} with {}", server_, VerbName(verb), resource,
                  code);
    return false;
  }
  spdlog::error(
      "API server {} answered {} {} with {} (the service account's ClusterRole must allow verb "
      "\"{}\" on \"{}\"; credential from {}); logged once until the answer changes",
      server_, VerbName(verb), resource, what, VerbName(verb), resource, credential_);
  return true;
}

}  // namespace gfp::adapters::apiserver
