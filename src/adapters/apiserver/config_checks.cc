#include "adapters/apiserver/config_checks.h"

#include <algorithm>
#include <cctype>

#include "common/text_escape.h"

namespace gfp::adapters::apiserver {
namespace {

constexpr std::size_t kQuoteBytes = 128;

std::string Quote(std::string_view text) {
  return "\"" + EscapeAndTruncate(text, kQuoteBytes) + "\"";
}

bool IsVisibleAscii(char c) { return c > 0x20 && c < 0x7f; }

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<std::string> CheckServerUrl(std::string_view url) {
  const std::string quoted = "server " + Quote(url);
  constexpr std::string_view kHttps = "https://";
  const std::string scheme = Lower(url.substr(0, std::min(url.size(), kHttps.size())));
  if (scheme != kHttps) {
    if (Lower(url.substr(0, 7)) == "http://") {
      return InvalidArgument(quoted +
                             " is not https: gpu-fabric-plugin talks to the API server only over "
                             "TLS, with its certificate verified");
    }
    return InvalidArgument(quoted + " is not an https:// URL");
  }
  std::string rest(url.substr(kHttps.size()));
  if (!std::all_of(rest.begin(), rest.end(), IsVisibleAscii)) {
    return InvalidArgument(quoted + " holds a space, a control character or non-ASCII text");
  }
  if (rest.find_first_of("?#") != std::string::npos) {
    return InvalidArgument(quoted + " has a query or fragment");
  }
  const std::string authority = rest.substr(0, rest.find('/'));
  if (authority.empty()) return InvalidArgument(quoted + " has no host");
  if (authority.find('@') != std::string::npos) {
    return InvalidArgument(quoted + " holds a user name: give credentials in the user entry");
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  return std::string(kHttps) + rest;
}

Status CheckBearerToken(std::string_view token, const std::string& what) {
  if (token.empty()) return InvalidArgument(what + " is empty");
  const auto bad = std::find_if_not(token.begin(), token.end(), IsVisibleAscii);
  if (bad != token.end()) {
    // The token is a secret: say where, never what.
    return InvalidArgument(what +
                           " holds a character that cannot be sent in an HTTP header (at byte " +
                           std::to_string(bad - token.begin()) + ")");
  }
  return Status::Ok();
}

Status CheckCertificatePem(std::string_view pem, const std::string& what) {
  if (pem.find("-----BEGIN CERTIFICATE-----") != std::string_view::npos) return Status::Ok();
  return InvalidArgument(what + " holds no PEM certificate (no \"-----BEGIN CERTIFICATE-----\")");
}

Status CheckPrivateKeyPem(std::string_view pem, const std::string& what) {
  const auto begin = pem.find("-----BEGIN ");
  if (begin != std::string_view::npos &&
      pem.find("PRIVATE KEY-----", begin) != std::string_view::npos) {
    return Status::Ok();
  }
  return InvalidArgument(what + " holds no PEM private key (no \"-----BEGIN … PRIVATE KEY-----\")");
}

Status CheckTlsServerName(std::string_view name) {
  const bool ok =
      !name.empty() && name.size() <= 253 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':';
      });
  if (ok) return Status::Ok();
  return InvalidArgument("tls-server-name " + Quote(name) + " is not a host name or IP address");
}

}  // namespace gfp::adapters::apiserver
