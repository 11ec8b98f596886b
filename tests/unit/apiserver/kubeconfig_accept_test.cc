// Every form of kubeconfig that is accepted, and what the config then holds.
#include "adapters/apiserver/kubeconfig.h"
#include "unit/apiserver/apiserver_fixture.h"

namespace gfp::adapters::apiserver {
namespace {

using testing::Encode;
using testing::ErrorOf;
using testing::kCaPem;
using testing::kClientCertPem;
using testing::kClientKeyPem;
using testing::KubeconfigText;

class KubeconfigAccept : public ::testing::Test {
 protected:
  // Writes `text` as <tmp>/kube/config and loads it.
  Result<ApiServerConfig> Load(const KubeconfigText& text) {
    return LoadKubeconfig(dir_.Write("kube/config", text.Render()));
  }
  gfp::testing::TempDir dir_;
};

TEST_F(KubeconfigAccept, InlineTokenAndCaData) {
  const Result<ApiServerConfig> config = Load(KubeconfigText{});
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->server, "https://api.example:6443");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->auth, AuthKind::kBearerToken);
  EXPECT_EQ(config->bearer_token, "abc.def-ghi_123");
  EXPECT_TRUE(config->token_file.empty());
  EXPECT_TRUE(config->client_key_pem.empty());
  EXPECT_TRUE(config->tls_server_name.empty());
  EXPECT_EQ(config->source,
            "kubeconfig " + (dir_.path() / "kube/config").string() + " (context \"main\")");
}

TEST_F(KubeconfigAccept, TokenFileRelativeToTheKubeconfigsFolder) {
  dir_.Write("kube/secrets/token", "  tok-from-file\n");
  KubeconfigText text;
  text.user = "tokenFile: secrets/token";
  const Result<ApiServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->auth, AuthKind::kTokenFile);
  EXPECT_EQ(config->token_file, dir_.path() / "kube/secrets/token");
  EXPECT_TRUE(config->bearer_token.empty());  // re-read from the file by the client
}

TEST_F(KubeconfigAccept, TokenFileAbsolute) {
  const auto token = dir_.Write("elsewhere/token", "tok");
  KubeconfigText text;
  text.user = "tokenFile: " + token.string();
  const Result<ApiServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->token_file, token);
}

TEST_F(KubeconfigAccept, ClientCertificateData) {
  KubeconfigText text;
  text.user = "client-certificate-data: " + Encode(kClientCertPem) +
              "\nclient-key-data: " + Encode(kClientKeyPem);
  const Result<ApiServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->auth, AuthKind::kClientCertificate);
  EXPECT_EQ(config->client_certificate_pem, kClientCertPem);
  EXPECT_EQ(config->client_key_pem, kClientKeyPem);
  EXPECT_TRUE(config->bearer_token.empty());
}

TEST_F(KubeconfigAccept, ClientCertificateFilesRelativeAndAbsolute) {
  dir_.Write("kube/pki/client.crt", kClientCertPem);
  const auto key = dir_.Write("keys/client.key", kClientKeyPem);
  KubeconfigText text;
  text.user = "client-certificate: pki/client.crt\nclient-key: " + key.string();
  const Result<ApiServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->auth, AuthKind::kClientCertificate);
  EXPECT_EQ(config->client_certificate_pem, kClientCertPem);
  EXPECT_EQ(config->client_key_pem, kClientKeyPem);
}

TEST_F(KubeconfigAccept, CaFileRelativeAndTlsServerName) {
  dir_.Write("kube/ca/ca.crt", kCaPem);
  KubeconfigText text;
  text.cluster =
      "server: https://10.0.0.1/\ncertificate-authority: ca/ca.crt\n"
      "tls-server-name: kubernetes.default.svc\ninsecure-skip-tls-verify: false";
  const Result<ApiServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->server, "https://10.0.0.1");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->tls_server_name, "kubernetes.default.svc");
}

TEST_F(KubeconfigAccept, BaseDirOfABareFileNameIsTheWorkingDirectory) {
  // "config" with no folder: relative paths resolve against ".", not "".
  dir_.Write("token", "tok");
  KubeconfigText text;
  text.user = "tokenFile: token";
  dir_.Write("config", text.Render());
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  const Result<ApiServerConfig> config = LoadKubeconfig("config");
  std::filesystem::current_path(previous);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->token_file, std::filesystem::path("./token"));
}

// kubectl's real layout: several clusters, contexts and users; current-context picks one.
constexpr const char* kSeveralContexts = R"(apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: staging
  cluster:
    server: http://staging.example
- name: prod
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: CADATA
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {a: 1}
contexts:
- name: staging-admin
  context: {cluster: staging, user: exec-user}
- name: prod-plugin
  context:
    cluster: prod
    user: plugin
    namespace: gpu
current-context: prod-plugin
users:
- name: exec-user
  user:
    exec: {command: aws}
- name: plugin
  user:
    token: prod-token
)";

TEST_F(KubeconfigAccept, CurrentContextChoosesAmongSeveralAndOthersAreNotJudged) {
  std::string text = kSeveralContexts;
  text.replace(text.find("CADATA"), 6, Encode(kCaPem));
  const Result<ApiServerConfig> config = LoadKubeconfig(dir_.Write("config", text));
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->server, "https://prod.example:6443");
  EXPECT_EQ(config->bearer_token, "prod-token");
  EXPECT_EQ(config->source,
            "kubeconfig " + (dir_.path() / "config").string() + " (context \"prod-plugin\")");
}

TEST_F(KubeconfigAccept, NullAndEmptyFieldsCountAsUnset) {
  KubeconfigText text;
  text.user = "token: tok\ntokenFile: \"\"\nexec: null\nclient-certificate:\nusername: \"\"";
  const Result<ApiServerConfig> config = Load(text);
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->auth, AuthKind::kBearerToken);
}

}  // namespace
}  // namespace gfp::adapters::apiserver
