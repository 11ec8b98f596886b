// Nodes, ResourceClaims and ResourceSlices as kube-apiserver serves them: resourceVersions,
// generateName, field selectors, 404/409/422 Status objects, the request log.
#include <regex>

#include "unit/apisim/apisim_fixture.h"

namespace gfp::apisim::testing {
namespace {

const std::string kClaimPath = "/apis/resource.k8s.io/v1/namespaces/vms/resourceclaims/vm-a-gpus";

TEST_F(ApiSimTest, ClaimIsReadUntilDeletedAndEveryGetIsCounted) {
  StartServer();
  auto claim = server_->PutClaim({{"metadata", {{"namespace", "vms"}, {"name", "vm-a-gpus"}}},
                                  {"spec", nlohmann::json::object()}});
  ASSERT_TRUE(claim.ok()) << claim.status().message();
  HttpReply reply = Get(kClaimPath);
  ASSERT_EQ(reply.code, 200) << reply.body;
  EXPECT_EQ(reply.Json()["metadata"]["uid"], (*claim)["metadata"]["uid"]);
  EXPECT_EQ(reply.Json()["kind"], "ResourceClaim");
  EXPECT_TRUE(server_->DeleteClaim("vms", "vm-a-gpus"));
  reply = Get(kClaimPath);
  EXPECT_EQ(reply.code, 404);
  EXPECT_EQ(reply.Json()["reason"], "NotFound");
  EXPECT_EQ(server_->CallCount("get", "resourceclaims"), 2);
  EXPECT_EQ(server_->CallCount("list", "resourceslices"), 0);
  EXPECT_EQ(server_->Requests().back().path, kClaimPath);
  EXPECT_FALSE(server_->PutClaim({{"metadata", {{"name", "no-namespace"}}}}).ok());
}

TEST_F(ApiSimTest, CreateFillsNameFromGenerateNameAndServerFields) {
  StartServer();
  const nlohmann::json slice = Create("node-a-gpu.fabric-", "node-a");
  const std::string name = slice["metadata"]["name"];
  EXPECT_TRUE(std::regex_match(name, std::regex("node-a-gpu\\.fabric-[a-z0-9]{5}"))) << name;
  EXPECT_FALSE(slice["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(slice["metadata"]["creationTimestamp"].get<std::string>().empty());
  EXPECT_EQ(slice["metadata"]["resourceVersion"], std::to_string(server_->ResourceVersion()));
  ASSERT_EQ(server_->Slices().size(), 1u);

  HttpReply again = Send("POST", kSlices, SliceBody(name, "node-a"));
  EXPECT_EQ(again.code, 409);
  EXPECT_EQ(again.Json()["reason"], "AlreadyExists");
  nlohmann::json no_driver = SliceBody("s2", "node-a");
  no_driver["spec"].erase("driver");
  HttpReply invalid = Send("POST", kSlices, no_driver);
  EXPECT_EQ(invalid.code, 422);
  EXPECT_EQ(invalid.Json()["reason"], "Invalid");
  EXPECT_NE(invalid.Json()["message"].get<std::string>().find("spec.driver"), std::string::npos);
}

TEST_F(ApiSimTest, ListHonoursFieldSelector) {
  StartServer();
  Create("a1", "node-a");
  Create("b1", "node-b");
  Send("POST", kSlices, SliceBody("a2", "node-a", "other.example.com"));
  HttpReply reply = Get(kSlices +
                        "?fieldSelector=spec.nodeName%3Dnode-a%2Cspec.driver%3Dgpu."
                        "fabric.example.com");
  ASSERT_EQ(reply.code, 200) << reply.body;
  const nlohmann::json list = reply.Json();
  EXPECT_EQ(list["kind"], "ResourceSliceList");
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(server_->ResourceVersion()));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a1");
  EXPECT_EQ(Get(kSlices).Json()["items"].size(), 3u);
  EXPECT_EQ(Get(kSlices + "?fieldSelector=spec.color%3Dred").code, 400);
}

TEST_F(ApiSimTest, StaleUpdateIs409ConflictAndDeleteReturnsTheObject) {
  StartServer();
  nlohmann::json slice = Create("s1", "node-a");
  nlohmann::json stale = slice;
  slice["spec"]["pool"]["generation"] = 2;
  HttpReply updated = Send("PUT", kSlices + "/s1", slice);
  ASSERT_EQ(updated.code, 200) << updated.body;
  EXPECT_NE(updated.Json()["metadata"]["resourceVersion"], stale["metadata"]["resourceVersion"]);
  EXPECT_EQ(updated.Json()["metadata"]["uid"], stale["metadata"]["uid"]);

  HttpReply conflict = Send("PUT", kSlices + "/s1", stale);
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(conflict.Json()["kind"], "Status");
  EXPECT_EQ(conflict.Json()["reason"], "Conflict");

  HttpReply deleted = Send("DELETE", kSlices + "/s1", nlohmann::json::object());
  EXPECT_EQ(deleted.code, 200);
  EXPECT_EQ(deleted.Json()["metadata"]["name"], "s1");
  HttpReply gone = Get(kSlices + "/s1");
  EXPECT_EQ(gone.code, 404);
  EXPECT_EQ(gone.Json()["reason"], "NotFound");
  EXPECT_EQ(Send("PUT", kSlices + "/s1", slice).code, 404);
  EXPECT_EQ(server_->CallCount("update", "resourceslices"), 3);
}

}  // namespace
}  // namespace gfp::apisim::testing
