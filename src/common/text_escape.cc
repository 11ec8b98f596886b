#include "common/text_escape.h"

#include <cstdint>

namespace gfp {
namespace {

// Length of the valid UTF-8 sequence starting at text[i] (2-4), or 0 when it is not one.
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint8_t>(text[k]); };
  const std::uint8_t lead = byte(i);
  std::size_t length = 0;
  std::uint32_t min_code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min_code = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, min_code = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  std::uint32_t code = lead & (0xFF >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  if (code < min_code || code > 0x10FFFF || surrogate) return 0;
  return length;
}

void AppendHexEscape(std::string& out, std::uint8_t byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0x0F];
}

// A byte that stands for itself in escaped text.
bool IsPlainAscii(char c) {
  const auto byte = static_cast<std::uint8_t>(c);
  return byte >= 0x20 && byte < 0x7F && byte != '\\';
}

// Appends the escaped form of the character at text[i]; returns how many input bytes it took.
std::size_t AppendEscaped(std::string& out, std::string_view text, std::size_t i) {
  const auto byte = static_cast<std::uint8_t>(text[i]);
  if (byte >= 0x80) {
    const std::size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      AppendHexEscape(out, byte);
      return 1;
    }
    out.append(text.substr(i, length));
    return length;
  }
  switch (byte) {
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\\':
      out += "\\\\";
      break;
    default:
      if (byte < 0x20 || byte == 0x7F) {
        AppendHexEscape(out, byte);
      } else {
        out += static_cast<char>(byte);
      }
  }
  return 1;
}

}  // namespace

std::string EscapeControl(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    // Runs of printable ASCII other than '\\' (nearly all of any text) are copied whole.
    std::size_t plain = i;
    while (plain < text.size() && IsPlainAscii(text[plain])) ++plain;
    out.append(text.substr(i, plain - i));
    i = plain;
    if (i < text.size()) i += AppendEscaped(out, text, i);
  }
  return out;
}

std::string EscapeAndTruncate(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::string piece;
    const std::size_t used = AppendEscaped(piece, text, i);
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    i += used;
  }
  if (i < text.size()) {
    out += "\xE2\x80\xA6 (" + std::to_string(text.size() - i) + " more bytes)";
  }
  return out;
}

}  // namespace gfp
