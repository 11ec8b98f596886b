// ReadClaim: a ResourceClaim from the API server read into what Prepare journals, and each
// reason a claim cannot be prepared here told apart (reconciliation acts on the kind).
#include "plugin/dra/claim_json.h"

#include <gtest/gtest.h>

namespace gfp::plugin::dra {
namespace {

using Json = nlohmann::json;

ClaimExpectation Want() {
  return {"u-1",
          "gpu-fabric-plugin.io",
          "node-a",
          {{"gpu-0000-1b-00-0", "0000:1b:00.0"}, {"gpu-0000-43-00-0", "0000:43:00.0"}}};
}

Json Result(const std::string& request, const std::string& device,
            const std::string& pool = "node-a",
            const std::string& driver = "gpu-fabric-plugin.io") {
  return {{"request", request}, {"driver", driver}, {"pool", pool}, {"device", device}};
}

Json Claim(Json results) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata",
           {{"name", "vm-a-gpus"},
            {"namespace", "vms"},
            {"uid", "u-1"},
            {"annotations", {{"resource.kubernetes.io/pod-claim-name", "gpus"}}}}},
          {"status",
           {{"allocation", {{"devices", {{"results", std::move(results)}}}}},
            {"reservedFor",
             Json::array({{{"resource", "pods"}, {"name", "virt-launcher-a"}, {"uid", "p"}},
                          {{"apiGroup", "other.io"}, {"resource", "pods"}, {"name", "x"}}})}}}};
}

TEST(ReadClaim, ReadsOurResultsInOrderTheConsumersAndThePodClaimName) {
  Json results = Json::array({Result("gpu1", "gpu-0000-43-00-0"),
                              Result("nic", "eth0", "node-a", "other.example.com"),
                              Result("gpu0", "gpu-0000-1b-00-0")});
  ClaimReading r = ReadClaim(Claim(results), Want());
  ASSERT_EQ(r.problem, ClaimProblem::kNone) << r.reason;
  EXPECT_EQ(r.namespace_name, "vms");
  EXPECT_EQ(r.name, "vm-a-gpus");
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].request, "gpu1");
  EXPECT_EQ(r.devices[0].bdf, "0000:43:00.0");
  EXPECT_EQ(r.devices[1].request, "gpu0");
  EXPECT_EQ(r.devices[1].bdf, "0000:1b:00.0");
  EXPECT_EQ(r.reserved_for, std::vector<std::string>{"vms/virt-launcher-a"});
  EXPECT_EQ(r.pod_claim_name, "gpus");
}

TEST(ReadClaim, AnotherUidIsTheClaimCreatedAgain) {
  Json claim = Claim(Json::array({Result("gpu0", "gpu-0000-1b-00-0")}));
  claim["metadata"]["uid"] = "u-2";
  ClaimReading r = ReadClaim(claim, Want());
  EXPECT_EQ(r.problem, ClaimProblem::kUidDiffers);
  EXPECT_EQ(r.reason,
            "claim \"vms/vm-a-gpus\" has uid \"u-2\", not \"u-1\" (it was deleted and created "
            "again)");
}

TEST(ReadClaim, NoAllocationOrNoResultOfOursIsNotAllocated) {
  Json claim = Claim(Json::array());
  claim["status"].erase("allocation");
  EXPECT_EQ(ReadClaim(claim, Want()).problem, ClaimProblem::kNotAllocated);
  EXPECT_EQ(ReadClaim(claim, Want()).reason, "claim \"vms/vm-a-gpus\" is not allocated");
  ClaimReading other =
      ReadClaim(Claim(Json::array({Result("nic", "eth0", "node-a", "other.io")})), Want());
  EXPECT_EQ(other.problem, ClaimProblem::kNotAllocated);
  EXPECT_EQ(other.reason,
            "claim \"vms/vm-a-gpus\" is allocated no device of driver gpu-fabric-plugin.io");
}

TEST(ReadClaim, AnotherPoolOrAnUnknownDeviceIsNotOurs) {
  ClaimReading pool =
      ReadClaim(Claim(Json::array({Result("gpu0", "gpu-0000-1b-00-0", "node-b")})), Want());
  EXPECT_EQ(pool.problem, ClaimProblem::kOtherDevices);
  EXPECT_EQ(pool.reason,
            "claim \"vms/vm-a-gpus\" is allocated device \"gpu-0000-1b-00-0\" of pool "
            "\"node-b\", not of this node's pool \"node-a\"");
  ClaimReading unknown =
      ReadClaim(Claim(Json::array({Result("gpu0", "gpu-0000-99-00-0")})), Want());
  EXPECT_EQ(unknown.problem, ClaimProblem::kOtherDevices);
  EXPECT_EQ(unknown.reason,
            "claim \"vms/vm-a-gpus\" is allocated device \"gpu-0000-99-00-0\", which this node "
            "does not have");
}

TEST(ReadClaim, GarbageOfAnyShapeIsMalformedAndNeverThrows) {
  for (const Json& garbage :
       {Json(nullptr), Json(42), Json::array({1, 2}), Json{{"metadata", "x"}},
        Json{{"metadata", {{"uid", 7}}}},
        Json{{"metadata", {{"uid", "u-1"}}}, {"status", {{"allocation", {{"devices", 1}}}}}},
        Json{{"metadata", {{"uid", "u-1"}}},
             {"status", {{"allocation", {{"devices", {{"results", "x"}}}}}}}}}) {
    ClaimReading r = ReadClaim(garbage, Want());
    EXPECT_NE(r.problem, ClaimProblem::kNone) << garbage.dump();
    EXPECT_FALSE(r.reason.empty()) << garbage.dump();
  }
}

TEST(ReadClaim, AHugeClaimIsReadBoundedSoTheStateMachineCanNameIt) {
  Json results = Json::array();
  for (int i = 0; i < 5000; ++i) results.push_back(Result("gpu0", "gpu-0000-1b-00-0"));
  ClaimReading r = ReadClaim(Claim(results), Want());
  EXPECT_EQ(r.devices.size(), kMaxClaimEntriesRead);
  Json claim = Claim(Json::array({Result("gpu0", "gpu-0000-1b-00-0")}));
  claim["metadata"]["name"] = std::string(100'000, 'n');
  claim["metadata"]["uid"] = std::string(100'000, 'u');
  EXPECT_LT(ReadClaim(claim, Want()).reason.size(), 400u);
}

}  // namespace
}  // namespace gfp::plugin::dra
