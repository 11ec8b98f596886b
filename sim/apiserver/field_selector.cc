#include "sim/apiserver/field_selector.h"

#include <map>
#include <sstream>

namespace gfp::apisim {
namespace {

// The field labels kube-apiserver registers for resourceslices, as JSON pointers.
const std::map<std::string, std::string>& SupportedFields() {
  static const std::map<std::string, std::string> fields = {
      {"metadata.name", "/metadata/name"},
      {"spec.nodeName", "/spec/nodeName"},
      {"spec.driver", "/spec/driver"},
  };
  return fields;
}

}  // namespace

Result<FieldSelector> FieldSelector::Parse(const std::string& text) {
  FieldSelector selector;
  std::stringstream terms(text);
  std::string term;
  while (std::getline(terms, term, ',')) {
    if (term.empty()) continue;
    if (term.find("!=") != std::string::npos) {
      return InvalidArgument("fieldSelector term \"" + term + "\": only = is supported here");
    }
    const auto eq = term.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument("invalid selector: '" + text + "'; can't understand '" + term + "'");
    }
    const std::string field = term.substr(0, eq);
    std::string value = term.substr(eq + 1);
    if (!value.empty() && value[0] == '=') value.erase(0, 1);  // "=="
    const auto known = SupportedFields().find(field);
    if (known == SupportedFields().end()) {
      return InvalidArgument("field label not supported: " + field);
    }
    selector.terms_.emplace_back(known->second, value);
  }
  return selector;
}

bool FieldSelector::Matches(const nlohmann::json& slice) const {
  for (const auto& [pointer, value] : terms_) {
    const nlohmann::json::json_pointer at(pointer);
    if (!slice.contains(at) || !slice.at(at).is_string()) return false;
    if (slice.at(at).get<std::string>() != value) return false;
  }
  return true;
}

}  // namespace gfp::apisim
