// The fake API server's TLS and authentication: the certificate chains to ca.pem (and not to
// other-ca.pem), bearer tokens (inline, rotated in a file), client certificates, 403 switches.
#include <sys/stat.h>

#include <fstream>

#include "unit/apisim/apisim_fixture.h"

namespace gfp::apisim::testing {
namespace {

TEST_F(ApiSimTest, PkiFilesArePrivate) {
  for (const auto& file : {pki_.ca_file, pki_.server_key_file, pki_.client_key_file,
                           pki_.server_bundle_file, pki_.other_ca_file}) {
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << file;
  }
  EXPECT_NE(pki_.ca_pem, pki_.other_ca_pem);
}

TEST_F(ApiSimTest, ServerCertificateChainsToTheCaAndNotToAnother) {
  StartServer();
  const std::string uid = server_->PutNode("node-a");
  HttpReply ok = Get("/api/v1/nodes/node-a");
  ASSERT_EQ(ok.result, CURLE_OK) << curl_easy_strerror(ok.result);
  EXPECT_EQ(ok.code, 200);
  EXPECT_EQ(ok.Json()["metadata"]["uid"], uid);
  EXPECT_EQ(ok.Json()["kind"], "Node");

  CurlOptions wrong = Client();
  wrong.ca_file = pki_.other_ca_file.string();
  HttpReply refused = Call("GET", server_->url() + "/api/v1/nodes/node-a", "", wrong);
  EXPECT_EQ(refused.result, CURLE_PEER_FAILED_VERIFICATION) << curl_easy_strerror(refused.result);
  EXPECT_EQ(server_->CallCount("get", "nodes"), 1);  // the refused one never reached HTTP
}

TEST_F(ApiSimTest, MissingOrWrongTokenGets401Status) {
  StartServer();
  server_->PutNode("node-a");
  CurlOptions none = Client();
  none.token.clear();
  HttpReply reply = Call("GET", server_->url() + "/api/v1/nodes/node-a", "", none);
  EXPECT_EQ(reply.code, 401);
  EXPECT_EQ(reply.Json()["kind"], "Status");
  EXPECT_EQ(reply.Json()["reason"], "Unauthorized");
  CurlOptions wrong = Client();
  wrong.token = "not-the-token";
  EXPECT_EQ(Call("GET", server_->url() + "/api/v1/nodes/node-a", "", wrong).code, 401);
  server_->SetToken("rotated");
  EXPECT_EQ(Get("/api/v1/nodes/node-a").code, 401);  // the old token no longer works
}

TEST_F(ApiSimTest, TokenFileIsReReadPerRequest) {
  const auto token_file = dir_ / "token";
  std::ofstream(token_file) << "first\n";
  FakeApiServer::Options options;
  options.token_file = token_file;
  StartServer(std::move(options));
  server_->PutNode("node-a");
  CurlOptions client = Client();
  client.token = "first";
  EXPECT_EQ(Call("GET", server_->url() + "/api/v1/nodes/node-a", "", client).code, 200);
  std::ofstream(token_file) << "second\n";
  EXPECT_EQ(Call("GET", server_->url() + "/api/v1/nodes/node-a", "", client).code, 401);
  client.token = "second";
  EXPECT_EQ(Call("GET", server_->url() + "/api/v1/nodes/node-a", "", client).code, 200);
}

TEST_F(ApiSimTest, ClientCertificateAuthenticatesWhenAccepted) {
  FakeApiServer::Options options;
  options.accept_client_cert = true;
  StartServer(std::move(options));
  server_->PutNode("node-a");
  CurlOptions client = Client();
  client.token.clear();
  EXPECT_EQ(Call("GET", server_->url() + "/api/v1/nodes/node-a", "", client).code, 401);
  client.client_cert = pki_.client_cert_file.string();
  client.client_key = pki_.client_key_file.string();
  HttpReply reply = Call("GET", server_->url() + "/api/v1/nodes/node-a", "", client);
  EXPECT_EQ(reply.result, CURLE_OK) << curl_easy_strerror(reply.result);
  EXPECT_EQ(reply.code, 200) << reply.body;
}

TEST_F(ApiSimTest, ForbiddenSwitchGives403ForThatVerbAndResourceOnly) {
  StartServer();
  server_->SetForbidden("list", "resourceslices", true);
  HttpReply reply = Get(kSlices);
  EXPECT_EQ(reply.code, 403);
  EXPECT_EQ(reply.Json()["reason"], "Forbidden");
  EXPECT_EQ(Send("POST", kSlices, SliceBody("s1", "node-a")).code, 201);  // create still allowed
  server_->SetForbidden("list", "resourceslices", false);
  EXPECT_EQ(Get(kSlices).code, 200);
}

TEST_F(ApiSimTest, UnknownPathIs404StatusAndWrongMethod405) {
  StartServer();
  HttpReply reply = Get("/apis/resource.k8s.io/v1/deviceclasses");
  EXPECT_EQ(reply.code, 404);
  EXPECT_EQ(reply.Json()["kind"], "Status");
  EXPECT_EQ(Send("DELETE", "/api/v1/nodes/node-a", nlohmann::json::object()).code, 405);
}

}  // namespace
}  // namespace gfp::apisim::testing
