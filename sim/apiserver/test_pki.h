// A throwaway PKI for tests and simulated worlds: a CA, a server certificate for 127.0.0.1 and
// localhost, a client certificate (CN "system:node:test") and an unrelated second CA for
// "wrong CA" tests. Made with OpenSSL's EVP/X509 API; EC P-256 keys; files mode 0600.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace gfp::apisim {

struct TestPki {
  std::filesystem::path ca_file;             // ca.pem
  std::filesystem::path server_cert_file;    // server.pem
  std::filesystem::path server_key_file;     // server-key.pem
  std::filesystem::path server_bundle_file;  // server-bundle.pem: key + cert, as civetweb wants
  std::filesystem::path client_cert_file;    // client.pem
  std::filesystem::path client_key_file;     // client-key.pem
  std::filesystem::path other_ca_file;       // other-ca.pem: signed nothing here
  std::string ca_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string other_ca_pem;
};

inline constexpr const char* kTestClientCommonName = "system:node:test";

// Writes the files into `dir` (created if missing). Certificates are valid from an hour ago
// for 30 days.
Result<TestPki> MakeTestPki(const std::filesystem::path& dir);

}  // namespace gfp::apisim
