// The anchor `journal verify` prints last (`head SEQ HASH`), as `--anchor` takes it.
#pragma once

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace gfp::testing {

// "SEQ:HASH" from verify's last line; "" (and a test failure) when there is none.
inline std::string HeadAnchor(const std::string& output) {
  static const std::regex kHead("(^|\n)head ([0-9]+) ([0-9a-f]{64})\n$");
  std::smatch match;
  if (!std::regex_search(output, match, kHead)) {
    ADD_FAILURE() << "no `head SEQ HASH` at the end of:\n" << output;
    return "";
  }
  return match[2].str() + ":" + match[3].str();
}

}  // namespace gfp::testing
