#include "adapters/apiserver/referenced_file.h"

#include "adapters/apiserver/config_checks.h"
#include "adapters/host/file_reading.h"
#include "common/text_escape.h"

namespace gfp::adapters::apiserver {

std::filesystem::path ResolveAgainst(const std::filesystem::path& base_dir,
                                     std::string_view written) {
  const std::filesystem::path path(written);
  return path.is_absolute() ? path : base_dir / path;
}

Result<std::string> ReadReferencedFile(const std::filesystem::path& path, const std::string& what,
                                       std::size_t max_bytes) {
  Result<std::string> content = host::ReadWholeFile(path, max_bytes);
  if (!content.ok()) {
    return content.status().WithContext(what + " " + EscapeAndTruncate(path.string(), 256) +
                                        " cannot be read");
  }
  return content;
}

Result<std::string> ReadTokenFile(const std::filesystem::path& path) {
  const std::string what = "token file " + EscapeAndTruncate(path.string(), 256);
  GFP_ASSIGN_OR_RETURN(std::string token,
                       ReadReferencedFile(path, "token file", kMaxTokenFileBytes));
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const auto first = token.find_first_not_of(kSpace);
  token = first == std::string::npos
              ? std::string()
              : token.substr(first, token.find_last_not_of(kSpace) - first + 1);
  GFP_RETURN_IF_ERROR(CheckBearerToken(token, what));
  return token;
}

}  // namespace gfp::adapters::apiserver
