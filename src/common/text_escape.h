// Making untrusted text safe to print: kubelet-supplied IDs, file contents and FM strings reach
// log lines, error messages and `journal history`. A newline in an ID must not forge a line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gfp {

// Returns `text` with every byte that could break a line-oriented reader escaped: control
// characters (\n, \r, \t as such, others as \xNN), DEL, backslash (\\) and bytes that are not
// part of valid UTF-8 (\xNN). Printable ASCII and valid UTF-8 pass unchanged.
std::string EscapeControl(std::string_view text);

// Escapes like EscapeControl and cuts the result to about `max_bytes`, saying how much was left
// out: "abc… (1234 more bytes)". Never splits an escape sequence or a UTF-8 character.
std::string EscapeAndTruncate(std::string_view text, std::size_t max_bytes);

}  // namespace gfp
