#include "adapters/apiserver/api_config.h"

namespace gfp::adapters::apiserver {

const char* AuthKindName(AuthKind kind) {
  switch (kind) {
    case AuthKind::kBearerToken:
      return "a bearer token";
    case AuthKind::kTokenFile:
      return "a token file";
    case AuthKind::kClientCertificate:
      return "a client certificate";
  }
  return "an unknown kind of credential";
}

}  // namespace gfp::adapters::apiserver
