// Debian's civetweb 1.15 loads OpenSSL at run time (dlopen "libssl.so") and looks up the OpenSSL
// 1.1 name SSL_get_peer_certificate, which OpenSSL 3 keeps only as a macro: the lookup yields
// null and every TLS connection crashes in civetweb's worker. This library's soname is
// "libssl.so" and it depends on the real libssl.so.3: loaded first (FakeApiServer::Start does),
// civetweb's dlopen finds it by soname, and its lookups find the real functions through it and
// this one function here. Test tooling only: the product never serves TLS through civetweb.

struct ssl_st;
struct x509_st;

extern "C" {

x509_st* SSL_get1_peer_certificate(const ssl_st* ssl);

// Same contract as OpenSSL 1.1's: the caller owns a reference to the certificate.
__attribute__((visibility("default"))) x509_st* SSL_get_peer_certificate(const ssl_st* ssl) {
  return SSL_get1_peer_certificate(ssl);
}
}
