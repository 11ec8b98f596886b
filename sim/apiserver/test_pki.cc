#include "sim/apiserver/test_pki.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <system_error>

namespace gfp::apisim {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

Result<Key> NewKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return Internal("test PKI: cannot generate an EC P-256 key");
  return key;
}

// The certificate's extensions, with `issuer` as the issuing certificate (itself for a CA).
Status AddExtensions(X509* cert, X509* issuer, const char* const* extensions) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  for (const char* const* e = extensions; e[0] != nullptr; e += 2) {
    X509_EXTENSION* ext = X509V3_EXT_conf(nullptr, &ctx, e[0], e[1]);
    if (!ext) return Internal(std::string("test PKI: bad extension ") + e[0] + "=" + e[1]);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  return Status::Ok();
}

// A certificate for `key` named `cn`, signed by `issuer_key` (and `issuer`, null: self-signed).
Result<Cert> NewCert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
                     const char* const* extensions) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  GFP_RETURN_IF_ERROR(AddExtensions(cert.get(), issuer ? issuer : cert.get(), extensions));
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) {
    return Internal("test PKI: cannot sign the certificate for " + cn);
  }
  return cert;
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string CertPem(X509* cert) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

std::string KeyPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

Status WriteFile0600(const std::filesystem::path& path, const std::string& text) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return Internal("test PKI: cannot write " + path.string());
  }
  if (::chmod(path.c_str(), 0600) != 0) return Internal("test PKI: cannot chmod " + path.string());
  return Status::Ok();
}

const char* const kCaExtensions[] = {"basicConstraints",
                                     "critical,CA:TRUE",
                                     "keyUsage",
                                     "critical,keyCertSign,cRLSign",
                                     "subjectKeyIdentifier",
                                     "hash",
                                     nullptr,
                                     nullptr};
const char* const kServerExtensions[] = {"basicConstraints",
                                         "critical,CA:FALSE",
                                         "keyUsage",
                                         "critical,digitalSignature",
                                         "extendedKeyUsage",
                                         "serverAuth",
                                         "subjectAltName",
                                         "IP:127.0.0.1,DNS:localhost",
                                         "authorityKeyIdentifier",
                                         "keyid",
                                         nullptr,
                                         nullptr};
const char* const kClientExtensions[] = {"basicConstraints",
                                         "critical,CA:FALSE",
                                         "keyUsage",
                                         "critical,digitalSignature",
                                         "extendedKeyUsage",
                                         "clientAuth",
                                         "authorityKeyIdentifier",
                                         "keyid",
                                         nullptr,
                                         nullptr};

}  // namespace

Result<TestPki> MakeTestPki(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("test PKI: cannot create " + dir.string() + ": " + ec.message());
  GFP_ASSIGN_OR_RETURN(Key ca_key, NewKey());
  GFP_ASSIGN_OR_RETURN(Cert ca,
                       NewCert(ca_key.get(), "gfp-test-ca", nullptr, ca_key.get(), kCaExtensions));
  GFP_ASSIGN_OR_RETURN(Key server_key, NewKey());
  GFP_ASSIGN_OR_RETURN(Cert server, NewCert(server_key.get(), "gfp-fake-apiserver", ca.get(),
                                            ca_key.get(), kServerExtensions));
  GFP_ASSIGN_OR_RETURN(Key client_key, NewKey());
  GFP_ASSIGN_OR_RETURN(Cert client, NewCert(client_key.get(), kTestClientCommonName, ca.get(),
                                            ca_key.get(), kClientExtensions));
  GFP_ASSIGN_OR_RETURN(Key other_key, NewKey());
  GFP_ASSIGN_OR_RETURN(Cert other, NewCert(other_key.get(), "gfp-other-ca", nullptr,
                                           other_key.get(), kCaExtensions));
  TestPki pki;
  pki.ca_file = dir / "ca.pem";
  pki.server_cert_file = dir / "server.pem";
  pki.server_key_file = dir / "server-key.pem";
  pki.server_bundle_file = dir / "server-bundle.pem";
  pki.client_cert_file = dir / "client.pem";
  pki.client_key_file = dir / "client-key.pem";
  pki.other_ca_file = dir / "other-ca.pem";
  pki.ca_pem = CertPem(ca.get());
  pki.server_cert_pem = CertPem(server.get());
  pki.server_key_pem = KeyPem(server_key.get());
  pki.client_cert_pem = CertPem(client.get());
  pki.client_key_pem = KeyPem(client_key.get());
  pki.other_ca_pem = CertPem(other.get());
  GFP_RETURN_IF_ERROR(WriteFile0600(pki.ca_file, pki.ca_pem));
  GFP_RETURN_IF_ERROR(WriteFile0600(pki.server_cert_file, pki.server_cert_pem));
  GFP_RETURN_IF_ERROR(WriteFile0600(pki.server_key_file, pki.server_key_pem));
  GFP_RETURN_IF_ERROR(
      WriteFile0600(pki.server_bundle_file, pki.server_key_pem + pki.server_cert_pem));
  GFP_RETURN_IF_ERROR(WriteFile0600(pki.client_cert_file, pki.client_cert_pem));
  GFP_RETURN_IF_ERROR(WriteFile0600(pki.client_key_file, pki.client_key_pem));
  GFP_RETURN_IF_ERROR(WriteFile0600(pki.other_ca_file, pki.other_ca_pem));
  return pki;
}

}  // namespace gfp::apisim
