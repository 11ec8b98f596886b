#include "adapters/apiserver/base64.h"

#include <array>
#include <cstdint>

namespace gfp::adapters::apiserver {
namespace {

constexpr int kInvalid = -1;
constexpr int kPadding = -2;

constexpr std::array<int, 256> MakeTable() {
  std::array<int, 256> table{};
  for (auto& entry : table) entry = kInvalid;
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  }
  table['='] = kPadding;
  return table;
}

constexpr std::array<int, 256> kTable = MakeTable();

Status Invalid(std::size_t offset, const std::string& what) {
  return InvalidArgument("not valid base64 (" + what + " at byte " + std::to_string(offset) + ")");
}

}  // namespace

Result<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t quad = 0;
  int filled = 0;       // sextets and '=' in the current quad
  int padding = 0;      // '=' in the current quad
  bool padded = false;  // a quad ending in '=' was completed: nothing may follow
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r') continue;
    const int value = kTable[c];
    if (value == kInvalid) return Invalid(i, "a character outside the alphabet");
    if (padded) return Invalid(i, "data after padding");
    if (value == kPadding) {
      if (filled < 2) return Invalid(i, "padding too early");
      ++padding;
    } else {
      if (padding > 0) return Invalid(i, "data after padding");
      quad = (quad << 6) | static_cast<std::uint32_t>(value);
    }
    if (++filled < 4) continue;
    quad <<= 6 * padding;
    for (int b = 0; b < 3 - padding; ++b) {
      out.push_back(static_cast<char>((quad >> (16 - 8 * b)) & 0xffU));
    }
    padded = padding > 0;
    quad = 0;
    filled = 0;
    padding = 0;
  }
  if (filled != 0) return Invalid(text.size(), "a length that is not a multiple of 4");
  return out;
}

}  // namespace gfp::adapters::apiserver
