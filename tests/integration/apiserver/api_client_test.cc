// ApiClient against the fake API server over real HTTPS: the verbs, authentication by rotating
// token file and by client certificate, the CA and tls-server-name, 401/403 logged once.
#include <gtest/gtest.h>

#include "adapters/apiserver/kubeconfig.h"
#include "integration/apiserver/fake_server_fixture.h"
#include "sim/apiserver/kubeconfig_writer.h"
#include "unit/apiserver/log_capture.h"

namespace gfp::adapters::apiserver::testing {
namespace {

using Json = nlohmann::json;

class ApiClientTest : public FakeServerTest {};

TEST_F(ApiClientTest, CreatesGetsListsUpdatesAndDeletesASlice) {
  auto client = Client();
  ASSERT_NE(client, nullptr);
  auto created =
      client->Call({Verb::kCreate, "resourceslices", kSlices, Slice("node-1-gpus").dump(), ""});
  ASSERT_TRUE(created.ok()) << created.status().message();
  ASSERT_EQ(created->code, 201) << created->body;
  auto got = client->Call({Verb::kGet, "resourceslices", kSlices + "/node-1-gpus", "", ""});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->code, 200);
  Json slice = *got->Json();
  EXPECT_EQ(slice["spec"]["nodeName"], "node-1");
  slice["spec"]["pool"]["generation"] = 2;
  auto updated =
      client->Call({Verb::kUpdate, "resourceslices", kSlices + "/node-1-gpus", slice.dump(), ""});
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->code, 200) << updated->body;
  auto listed = client->Call(
      {Verb::kList, "resourceslices", kSlices + "?fieldSelector=spec.nodeName%3Dnode-1", "", ""});
  ASSERT_TRUE(listed.ok());
  Json list = *listed->Json();
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["spec"]["pool"]["generation"], 2);
  auto deleted = client->Call({Verb::kDelete, "resourceslices", kSlices + "/node-1-gpus", "", ""});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->code, 200);
  // A 404 is an answer, not an error.
  auto gone = client->Call({Verb::kGet, "resourceslices", kSlices + "/node-1-gpus", "", ""});
  ASSERT_TRUE(gone.ok()) << gone.status().message();
  EXPECT_EQ(gone->code, 404);
  EXPECT_EQ(observer_.Codes(), (std::vector<int>{201, 200, 200, 200, 200, 404}));
  ASSERT_FALSE(observer_.Calls().empty());
  EXPECT_EQ(observer_.Calls()[0],
            std::make_tuple(std::string("create"), std::string("resourceslices"), 201));
}

TEST_F(ApiClientTest, PicksUpARotatedTokenFile) {
  server_->PutNode("node-1");
  auto client = Client();
  ASSERT_NE(client, nullptr);
  const ApiCall get{Verb::kGet, "nodes", "/api/v1/nodes/node-1", "", ""};
  EXPECT_EQ(client->Call(get)->code, 200);
  server_->SetToken("token-2");
  EXPECT_EQ(client->Call(get)->code, 401);  // the server rotated first
  WriteToken("token-2");
  EXPECT_EQ(client->Call(get)->code, 200);
}

TEST_F(ApiClientTest, AuthenticatesWithAClientCertificateFromAKubeconfig) {
  server_->PutNode("node-1");
  const auto path = dir_.path() / "kubeconfig";
  ASSERT_TRUE(apisim::WriteKubeconfig(path, server_->url(), pki_.ca_file,
                                      {{}, pki_.client_cert_file, pki_.client_key_file})
                  .ok());
  auto config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->auth, AuthKind::kClientCertificate);
  auto client = Client(*config, FastOptions());
  auto got = client->Call({Verb::kGet, "nodes", "/api/v1/nodes/node-1", "", ""});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->code, 200);
  // Without the certificate (and no token) the same server says 401.
  ApiServerConfig anonymous = *config;
  anonymous.auth = AuthKind::kBearerToken;
  anonymous.bearer_token = "not-a-token";
  EXPECT_EQ(Client(anonymous, FastOptions())
                ->Call({Verb::kGet, "nodes", "/api/v1/nodes/node-1", "", ""})
                ->code,
            401);
}

TEST_F(ApiClientTest, RefusesAServerWhoseCertificateDoesNotChainToTheCa) {
  ApiServerConfig config = Config();
  config.ca_pem = pki_.other_ca_pem;
  ApiClientOptions options = FastOptions();
  options.attempts = 1;
  auto client = Client(config, options);
  auto got = client->Call({Verb::kGet, "nodes", "/api/v1/nodes/node-1", "", ""});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(got.status().message().find("API server " + server_->url()), std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("certificate"), std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("get nodes"), std::string::npos);
  EXPECT_EQ(server_->CallCount("get", "nodes"), 0);
  EXPECT_EQ(observer_.Codes(), std::vector<int>{0});
}

TEST_F(ApiClientTest, ChecksTheCertificateAgainstTheTlsServerName) {
  server_->PutNode("node-1");
  const ApiCall get{Verb::kGet, "nodes", "/api/v1/nodes/node-1", "", ""};
  ApiServerConfig config = Config();
  config.tls_server_name = "localhost";  // in the server certificate, not the URL's host
  auto got = Client(config, FastOptions())->Call(get);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->code, 200);
  config.tls_server_name = "elsewhere.example";
  ApiClientOptions options = FastOptions();
  options.attempts = 1;
  auto refused = Client(config, options)->Call(get);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("elsewhere.example"), std::string::npos)
      << refused.status().message();
}

TEST_F(ApiClientTest, Logs403And401OncePerChangeNamingVerbAndResource) {
  LogCapture log;
  auto client = Client();
  server_->SetForbidden("create", "resourceslices", true);
  const ApiCall create{Verb::kCreate, "resourceslices", kSlices, Slice("s").dump(), ""};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client->Call(create)->code, 403);
  EXPECT_EQ(log.Count("error", "create resourceslices with 403 Forbidden: an RBAC rule is missing"),
            1)
      << log.text();
  EXPECT_EQ(log.Count("debug", "create resourceslices with 403"), 2);
  EXPECT_EQ(server_->CallCount("create", "resourceslices"), 3);  // 403 is not retried
  server_->SetToken("token-2");
  for (int i = 0; i < 2; ++i) EXPECT_EQ(client->Call(create)->code, 401);
  EXPECT_EQ(log.Count("error", "create resourceslices with 401 Unauthorized"), 1) << log.text();
}

}  // namespace
}  // namespace gfp::adapters::apiserver::testing
