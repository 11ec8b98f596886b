// Every kubeconfig that is refused: the message names the file, the entry and the reason.
#include "adapters/apiserver/kubeconfig.h"
#include "unit/apiserver/apiserver_fixture.h"

namespace gfp::adapters::apiserver {
namespace {

using ::testing::AllOf;
using testing::Encode;
using testing::ErrorOf;
using ::testing::HasSubstr;
using testing::kCaPem;
using testing::kClientCertPem;
using testing::kClientKeyPem;
using testing::KubeconfigText;
using ::testing::Not;
using ::testing::StartsWith;

class KubeconfigRefuse : public ::testing::Test {
 protected:
  // The error of loading `text` from <tmp>/kube/config, checked to start with the file's name.
  std::string Error(const KubeconfigText& text) { return ErrorOfText(text.Render()); }
  std::string ErrorOfText(const std::string& text) {
    const auto path = dir_.Write("kube/config", text);
    const Result<ApiServerConfig> config = LoadKubeconfig(path);
    EXPECT_FALSE(config.ok());
    const std::string message = ErrorOf(config);
    EXPECT_THAT(message, StartsWith("kubeconfig " + path.string() + ": "));
    return message;
  }
  std::string WithUser(const std::string& user) {
    KubeconfigText text;
    text.user = user;
    return Error(text);
  }
  std::string WithCluster(const std::string& cluster) {
    KubeconfigText text;
    text.cluster = cluster;
    return Error(text);
  }
  gfp::testing::TempDir dir_;
};

TEST_F(KubeconfigRefuse, ExecCredentialPlugin) {
  EXPECT_THAT(WithUser("exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: aws"),
              HasSubstr(": user \"u1\" uses an exec credential plugin, which gpu-fabric-plugin "
                        "does not run: give it a token, a tokenFile or a client certificate"));
}

TEST_F(KubeconfigRefuse, ExecEvenBesideAToken) {
  EXPECT_THAT(WithUser("token: tok\nexec: {command: x}"),
              HasSubstr("user \"u1\" uses an exec credential plugin"));
}

TEST_F(KubeconfigRefuse, AuthProvider) {
  EXPECT_THAT(WithUser("auth-provider:\n  name: gcp"),
              HasSubstr("user \"u1\" uses an auth-provider, which gpu-fabric-plugin does not "
                        "support"));
}

TEST_F(KubeconfigRefuse, BasicAuthAndImpersonation) {
  EXPECT_THAT(WithUser("username: admin\npassword: pw"),
              HasSubstr("user \"u1\" uses basic authentication"));
  EXPECT_THAT(WithUser("token: tok\nas: system:admin"), HasSubstr("user \"u1\" impersonates (as)"));
  EXPECT_THAT(WithUser("token: tok\nas-groups: [a]"),
              HasSubstr("user \"u1\" impersonates (as-groups)"));
}

TEST_F(KubeconfigRefuse, NoCurrentContext) {
  KubeconfigText text;
  text.current_context = "\"\"";
  EXPECT_THAT(Error(text), HasSubstr("has no current-context"));
  std::string missing = text.Render();
  missing.erase(missing.find("current-context"),
                missing.find("\nclusters") - missing.find("current-context"));
  EXPECT_THAT(ErrorOfText(missing), HasSubstr("has no current-context"));
}

TEST_F(KubeconfigRefuse, UnknownContextClusterOrUser) {
  KubeconfigText text;
  text.current_context = "other";
  EXPECT_THAT(Error(text),
              HasSubstr("current-context \"other\" names no context (contexts: \"main\")"));
  text = {};
  text.context = "cluster: c9\nuser: u1";
  EXPECT_THAT(Error(text), HasSubstr("context \"main\" names cluster \"c9\", which is not in "
                                     "clusters (\"c1\")"));
  text.context = "cluster: c1\nuser: nobody";
  EXPECT_THAT(Error(text),
              HasSubstr("context \"main\" names user \"nobody\", which is not in users (\"u1\")"));
  text.context = "cluster: c1";
  EXPECT_THAT(Error(text), HasSubstr("context \"main\" names no user"));
  text.context = "user: u1\ncluster: [c1]";
  EXPECT_THAT(Error(text), HasSubstr("context \"main\" has cluster as a list, not text"));
}

TEST_F(KubeconfigRefuse, ServerThatIsNotHttps) {
  EXPECT_THAT(
      WithCluster("server: http://api.example:8080\ncertificate-authority-data: " + Encode(kCaPem)),
      HasSubstr("cluster \"c1\": server \"http://api.example:8080\" is not https"));
  EXPECT_THAT(WithCluster("certificate-authority-data: " + Encode(kCaPem)),
              HasSubstr("cluster \"c1\" has no server"));
}

TEST_F(KubeconfigRefuse, InsecureSkipTlsVerify) {
  const std::string ca = "\ncertificate-authority-data: " + Encode(kCaPem);
  for (const char* value : {"true", "True", "yes"}) {
    EXPECT_THAT(
        WithCluster("server: https://a\ninsecure-skip-tls-verify: " + std::string(value) + ca),
        HasSubstr("cluster \"c1\" sets insecure-skip-tls-verify: gpu-fabric-plugin always "
                  "verifies the API server's certificate"))
        << value;
  }
  EXPECT_THAT(WithCluster("server: https://a\ninsecure-skip-tls-verify: maybe" + ca),
              HasSubstr("insecure-skip-tls-verify that is neither true nor false"));
  EXPECT_THAT(WithCluster("server: https://a\nproxy-url: http://proxy:3128" + ca),
              HasSubstr("cluster \"c1\" sets proxy-url"));
}

TEST_F(KubeconfigRefuse, NoCa) {
  EXPECT_THAT(WithCluster("server: https://a"),
              HasSubstr("cluster \"c1\" has no CA (certificate-authority or "
                        "certificate-authority-data)"));
  EXPECT_THAT(WithCluster("server: https://a\ncertificate-authority-data: " + Encode("not pem")),
              HasSubstr("cluster \"c1\": the CA holds no PEM certificate"));
}

TEST_F(KubeconfigRefuse, NoCredentials) {
  EXPECT_THAT(WithUser("{}"), HasSubstr("user \"u1\" has no credentials: give it a token, a "
                                        "tokenFile or a client certificate"));
}

TEST_F(KubeconfigRefuse, MoreThanOneCredential) {
  dir_.Write("kube/token", "tok");
  const std::string cert = "client-certificate-data: " + Encode(kClientCertPem) +
                           "\nclient-key-data: " + Encode(kClientKeyPem);
  const auto more = HasSubstr(
      "user \"u1\" gives more than one credential (token, tokenFile, "
      "client certificate): keep one");
  EXPECT_THAT(WithUser("token: tok\n" + cert), more);
  EXPECT_THAT(WithUser("tokenFile: token\n" + cert), more);
  EXPECT_THAT(WithUser("token: tok\ntokenFile: token"), more);
}

TEST_F(KubeconfigRefuse, HalfAClientCertificate) {
  EXPECT_THAT(WithUser("client-certificate-data: " + Encode(kClientCertPem)),
              HasSubstr("user \"u1\" has a client certificate but no client-key"));
  EXPECT_THAT(WithUser("client-key-data: " + Encode(kClientKeyPem)),
              HasSubstr("user \"u1\" has a client key but no client certificate"));
  EXPECT_THAT(WithUser("client-certificate-data: " + Encode(kClientKeyPem) +
                       "\nclient-key-data: " + Encode(kClientKeyPem)),
              HasSubstr("user \"u1\": the client certificate holds no PEM certificate"));
  EXPECT_THAT(WithUser("client-certificate-data: " + Encode(kClientCertPem) +
                       "\nclient-key-data: " + Encode(kClientCertPem)),
              HasSubstr("user \"u1\": the client key holds no PEM private key"));
}

TEST_F(KubeconfigRefuse, BothFileAndData) {
  dir_.Write("kube/ca.crt", kCaPem);
  EXPECT_THAT(WithCluster("server: https://a\ncertificate-authority: ca.crt\n"
                          "certificate-authority-data: " +
                          Encode(kCaPem)),
              HasSubstr("cluster \"c1\" gives both certificate-authority and "
                        "certificate-authority-data: keep one"));
}

TEST_F(KubeconfigRefuse, BadBase64NamesTheFieldButQuotesNoSecret) {
  const std::string message = WithUser("client-certificate-data: " + Encode(kClientCertPem) +
                                       "\nclient-key-data: SECRETKEY*Zm9v");
  EXPECT_THAT(message, AllOf(HasSubstr("user \"u1\" has client-key-data that is not valid base64 "
                                       "(a character outside the alphabet at byte 9)"),
                             Not(HasSubstr("SECRETKEY"))));
  EXPECT_THAT(WithCluster("server: https://a\ncertificate-authority-data: Zm9"),
              HasSubstr("cluster \"c1\" has certificate-authority-data that is not valid base64"));
}

TEST_F(KubeconfigRefuse, UnreadableReferencedFiles) {
  EXPECT_THAT(WithCluster("server: https://a\ncertificate-authority: missing/ca.crt"),
              HasSubstr("cluster \"c1\": certificate-authority " +
                        (dir_.path() / "kube/missing/ca.crt").string() +
                        " cannot be read: No such file or directory"));
  EXPECT_THAT(WithUser("tokenFile: /nonexistent/token"),
              HasSubstr("user \"u1\": token file /nonexistent/token cannot be read: No such file"));
  EXPECT_THAT(WithUser("client-certificate: c.crt\nclient-key: c.key"),
              HasSubstr("user \"u1\": client-certificate " + (dir_.path() / "kube/c.crt").string() +
                        " cannot be read"));
  dir_.Write("kube/empty-token", " \n");
  EXPECT_THAT(WithUser("tokenFile: empty-token"),
              HasSubstr("user \"u1\": token file " + (dir_.path() / "kube/empty-token").string() +
                        " is empty"));
}

TEST_F(KubeconfigRefuse, TokenThatWouldBreakTheHeader) {
  EXPECT_THAT(WithUser("token: \"abc\\r\\nX-Evil: 1\""),
              HasSubstr("user \"u1\": token holds a character that cannot be sent in an HTTP "
                        "header (at byte 3)"));
}

TEST_F(KubeconfigRefuse, MissingKubeconfigAndAListOfThem) {
  const auto missing = dir_.path() / "nope";
  EXPECT_THAT(
      ErrorOf(LoadKubeconfig(missing)),
      HasSubstr("kubeconfig " + missing.string() + " cannot be read: No such file or directory"));
  const std::string list = missing.string() + ":" + (dir_.path() / "other").string();
  EXPECT_THAT(ErrorOf(LoadKubeconfig(list)),
              HasSubstr("a list of kubeconfig files separated by ':' is not merged here"));
}

}  // namespace
}  // namespace gfp::adapters::apiserver
