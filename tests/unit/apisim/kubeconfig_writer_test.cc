// The written kubeconfig is one LoadKubeconfig (adapters/apiserver) accepts, in both forms.
#include "sim/apiserver/kubeconfig_writer.h"

#include <fstream>

#include "adapters/apiserver/kubeconfig.h"
#include "unit/apisim/apisim_fixture.h"

namespace gfp::apisim::testing {
namespace {

using adapters::apiserver::AuthKind;
using adapters::apiserver::LoadKubeconfig;

TEST_F(ApiSimTest, KubeconfigWithTokenFileIsAccepted) {
  const auto token_file = dir_ / "token";
  std::ofstream(token_file) << kToken << "\n";
  const auto path = dir_ / "kubeconfig";
  ASSERT_TRUE(
      WriteKubeconfig(path, "https://127.0.0.1:6443", pki_.ca_file, {.token_file = token_file})
          .ok());
  auto config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->auth, AuthKind::kTokenFile);
  EXPECT_EQ(config->token_file, token_file);
  EXPECT_EQ(config->ca_pem, pki_.ca_pem);
}

TEST_F(ApiSimTest, KubeconfigWithClientCertificateIsAccepted) {
  const auto path = dir_ / "kubeconfig";
  ASSERT_TRUE(WriteKubeconfig(path, "https://127.0.0.1:6443", pki_.ca_file,
                              {.client_cert_file = pki_.client_cert_file,
                               .client_key_file = pki_.client_key_file})
                  .ok());
  auto config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->auth, AuthKind::kClientCertificate);
  EXPECT_EQ(config->client_certificate_pem, pki_.client_cert_pem);
  EXPECT_FALSE(WriteKubeconfig(path, "https://x", pki_.ca_file, {}).ok());
}

}  // namespace
}  // namespace gfp::apisim::testing
