#include "common/k8s_names.h"

#include <algorithm>

namespace gfp {
namespace {

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

std::string LengthProblem(std::string_view value, std::size_t max_length) {
  if (value.empty()) return "is empty";
  if (value.size() > max_length) {
    return "is longer than " + std::to_string(max_length) + " characters";
  }
  return "";
}

// One label of a name, already known to be non-empty and short enough.
std::string LabelCharacters(std::string_view label) {
  for (char c : label) {
    if (!LowerAlnum(c) && c != '-') {
      return "has a character other than a-z, 0-9 and '-'";
    }
  }
  if (!LowerAlnum(label.front()) || !LowerAlnum(label.back())) {
    return "does not start and end with a-z or 0-9";
  }
  return "";
}

}  // namespace

std::string DnsLabelProblem(std::string_view value) {
  if (std::string length = LengthProblem(value, 63); !length.empty()) return length;
  return LabelCharacters(value);
}

std::string DnsSubdomainProblem(std::string_view value, std::size_t max_length) {
  if (std::string length = LengthProblem(value, max_length); !length.empty()) return length;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t dot = std::min(value.find('.', start), value.size());
    const std::string_view label = value.substr(start, dot - start);
    if (label.empty()) return "has an empty label (two dots, or a dot at an end)";
    if (label.size() > 63) return "has a label longer than 63 characters";
    if (std::string problem = LabelCharacters(label); !problem.empty()) return problem;
    start = dot + 1;
  }
  return "";
}

std::string UidProblem(std::string_view value) {
  if (std::string length = LengthProblem(value, 64); !length.empty()) return length;
  for (char c : value) {
    const bool alnum = LowerAlnum(c) || (c >= 'A' && c <= 'Z');
    if (!alnum && c != '-') return "has a character other than A-Z, a-z, 0-9 and '-'";
  }
  return "";
}

}  // namespace gfp
