// `fieldSelector=spec.nodeName=a,spec.driver=b` on ResourceSlice lists and watches: the fields
// kube-apiserver supports for that resource, equality only ("=" or "==").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace gfp::apisim {

class FieldSelector {
 public:
  // Empty text selects everything. Unsupported fields and "!=" are refused (400 on the wire).
  static Result<FieldSelector> Parse(const std::string& text);
  bool Matches(const nlohmann::json& slice) const;

 private:
  std::vector<std::pair<std::string, std::string>> terms_;  // JSON pointer, value
};

}  // namespace gfp::apisim
