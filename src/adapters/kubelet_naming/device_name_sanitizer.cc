#include "adapters/kubelet_naming/device_name_sanitizer.h"

#include <cstdint>
#include <vector>

namespace gfp::adapters::kubelet_naming {
namespace {

constexpr char32_t kReplacement = 0xFFFD;  // what Go yields for an invalid UTF-8 byte

// Decodes UTF-8 the way Go's range loop does: an invalid byte becomes U+FFFD and decoding
// resumes at the next byte. Only the distinction ASCII / ı / ſ / Unicode space matters below.
std::vector<char32_t> DecodeUtf8(std::string_view s) {
  std::vector<char32_t> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    int length = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
      length = 2;
      cp = b0 & 0x1F;
      min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      length = 3;
      cp = b0 & 0x0F;
      min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      length = 4;
      cp = b0 & 0x07;
      min = 0x10000;
    }
    bool valid = length > 0 && i + static_cast<std::size_t>(length) <= s.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((b & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (valid && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) valid = false;
    if (valid) {
      out.push_back(cp);
      i += static_cast<std::size_t>(length);
    } else {
      out.push_back(kReplacement);
      ++i;
    }
  }
  return out;
}

// Go unicode.IsSpace (what strings.TrimSpace trims).
bool IsUnicodeSpace(char32_t c) {
  switch (c) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

// RE2 `\s` is ASCII only: [\t\n\f\r ] (no \v).
bool IsRegexpSpace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}

// unicode.ToUpper, restricted to results that can survive the final filter: ASCII letters,
// plus the two non-ASCII letters whose upper case is ASCII (dotless i, long s).
char32_t ToUpper(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 'A';
  if (c == 0x0131) return 'I';
  if (c == 0x017F) return 'S';
  return c;
}

bool IsKept(char32_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

}  // namespace

std::string SanitizeDeviceName(std::string_view raw) {
  std::vector<char32_t> runes = DecodeUtf8(raw);

  std::size_t begin = 0;
  std::size_t end = runes.size();
  while (begin < end && IsUnicodeSpace(runes[begin])) ++begin;
  while (end > begin && IsUnicodeSpace(runes[end - 1])) --end;

  std::string out;
  bool in_space_run = false;
  for (std::size_t i = begin; i < end; ++i) {
    char32_t c = ToUpper(runes[i]);
    if (c == '/' || c == '.') c = '_';
    if (IsRegexpSpace(c)) {
      if (!in_space_run) out += '_';
      in_space_run = true;
      continue;
    }
    in_space_run = false;
    if (IsKept(c)) out += static_cast<char>(c);
  }
  return out;
}

}  // namespace gfp::adapters::kubelet_naming
