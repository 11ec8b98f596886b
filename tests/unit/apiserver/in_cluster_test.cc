#include "adapters/apiserver/in_cluster.h"

#include <sys/stat.h>

#include <map>

#include "unit/apiserver/apiserver_fixture.h"

namespace gfp::adapters::apiserver {
namespace {

using testing::ErrorOf;
using ::testing::HasSubstr;
using testing::kCaPem;
using ::testing::StartsWith;

class InCluster : public ::testing::Test {
 protected:
  InCluster() {
    dir_.Write("sa/ca.crt", kCaPem);
    dir_.Write("sa/token", "eyJhbGciOiJSUzI1NiJ9.payload.sig\n");
  }
  Result<ApiServerConfig> Load() {
    return InClusterConfig(
        [this](const std::string& name) -> std::optional<std::string> {
          const auto it = env_.find(name);
          if (it == env_.end()) return std::nullopt;
          return it->second;
        },
        sa());
  }
  std::string Error() {
    const Result<ApiServerConfig> config = Load();
    EXPECT_FALSE(config.ok());
    EXPECT_THAT(ErrorOf(config), StartsWith("in-cluster config: "));
    return ErrorOf(config);
  }
  std::filesystem::path sa() const { return dir_.path() / "sa"; }

  gfp::testing::TempDir dir_;
  std::map<std::string, std::string> env_ = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                             {"KUBERNETES_SERVICE_PORT", "443"}};
};

TEST_F(InCluster, ServiceAccountOfAPod) {
  const Result<ApiServerConfig> config = Load();
  ASSERT_TRUE(config.ok()) << ErrorOf(config);
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->auth, AuthKind::kTokenFile);
  EXPECT_EQ(config->token_file, sa() / "token");
  EXPECT_TRUE(config->bearer_token.empty());
  EXPECT_EQ(config->source, "in-cluster service account " + sa().string());
}

TEST_F(InCluster, Ipv6HostGetsBrackets) {
  env_["KUBERNETES_SERVICE_HOST"] = "fd00:10:96::1";
  EXPECT_EQ(Load()->server, "https://[fd00:10:96::1]:443");
  env_["KUBERNETES_SERVICE_HOST"] = "[fd00::1]";
  EXPECT_EQ(Load()->server, "https://[fd00::1]:443");
  env_["KUBERNETES_SERVICE_HOST"] = "kubernetes.default.svc";
  EXPECT_EQ(Load()->server, "https://kubernetes.default.svc:443");
}

TEST_F(InCluster, NotInAPod) {
  env_.clear();
  EXPECT_THAT(Error(), HasSubstr("not running in a pod: KUBERNETES_SERVICE_HOST and "
                                 "KUBERNETES_SERVICE_PORT must both be set (outside a cluster, "
                                 "give --kubeconfig)"));
  env_ = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}};
  EXPECT_THAT(Error(), HasSubstr("not running in a pod"));
  env_ = {{"KUBERNETES_SERVICE_HOST", ""}, {"KUBERNETES_SERVICE_PORT", "443"}};
  EXPECT_THAT(Error(), HasSubstr("not running in a pod"));
}

TEST_F(InCluster, BadHostOrPort) {
  env_["KUBERNETES_SERVICE_HOST"] = "10.0.0.1/evil";
  EXPECT_THAT(Error(),
              HasSubstr("KUBERNETES_SERVICE_HOST \"10.0.0.1/evil\" is not a host name or IP"));
  env_["KUBERNETES_SERVICE_HOST"] = "10.0.0.1";
  for (const char* port : {"0", "65536", "https", "-1", "4433333"}) {
    env_["KUBERNETES_SERVICE_PORT"] = port;
    EXPECT_THAT(Error(), HasSubstr("KUBERNETES_SERVICE_PORT \"" + std::string(port) +
                                   "\" is not a port number"));
  }
}

TEST_F(InCluster, MissingOrBadServiceAccountFiles) {
  std::filesystem::remove(sa() / "ca.crt");
  EXPECT_THAT(Error(), HasSubstr("the CA " + (sa() / "ca.crt").string() +
                                 " cannot be read: No such file or directory"));
  dir_.Write("sa/ca.crt", "garbage");
  EXPECT_THAT(Error(),
              HasSubstr("the CA " + (sa() / "ca.crt").string() + " holds no PEM certificate"));
  dir_.Write("sa/ca.crt", kCaPem);
  std::filesystem::remove(sa() / "token");
  EXPECT_THAT(Error(), HasSubstr("token file " + (sa() / "token").string() +
                                 " cannot be read: No such file or directory"));
  dir_.Write("sa/token", "");
  EXPECT_THAT(Error(), HasSubstr("token file " + (sa() / "token").string() + " is empty"));
  std::filesystem::remove(sa() / "token");
  ASSERT_EQ(::mkfifo((sa() / "token").c_str(), 0600), 0);
  EXPECT_THAT(testing::WithoutBlockingOn(sa() / "token", [this] { return Error(); }),
              HasSubstr("token file " + (sa() / "token").string() +
                        " cannot be read: not a regular file (a FIFO)"));
}

TEST_F(InCluster, ProcessEnvironmentReadsTheRealEnvironment) {
  ::setenv("GFP_APISERVER_TEST_VARIABLE", "value", 1);
  EXPECT_EQ(ProcessEnvironment()("GFP_APISERVER_TEST_VARIABLE"),
            std::optional<std::string>("value"));
  ::unsetenv("GFP_APISERVER_TEST_VARIABLE");
  EXPECT_EQ(ProcessEnvironment()("GFP_APISERVER_TEST_VARIABLE"), std::nullopt);
}

}  // namespace
}  // namespace gfp::adapters::apiserver
