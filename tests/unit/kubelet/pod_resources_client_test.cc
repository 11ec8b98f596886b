// The PodResources client against the fake kubelet's PodResources server, over a real socket.
#include "adapters/kubelet/pod_resources_client.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/temp_dir.h"
#include "sim/kubelet/fake_pod_resources.h"
#include "sim/kubelet/pod_resources_builder.h"

namespace gfp::kubelet {
namespace {

using std::chrono::milliseconds;

class KubeletPodResourcesClient : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    socket_ = dir_.path() / "pod-resources" / "kubelet.sock";
    ASSERT_TRUE(server_.Start(socket_).ok());
    server_.SetPod(BuildPodResources(
        "vms", "vm-a",
        {{"compute", "nvidia.com/GPU", {{"0000:1b:00.0", {0}}, {"0000:3b:00.0", {0, 1}}}}}));
  }

  adapters::kubelet::PodResourcesClientOptions Options() const {
    adapters::kubelet::PodResourcesClientOptions options;
    options.socket_path = socket_.string();
    options.deadline = milliseconds(2000);
    return options;
  }

  gfp::testing::TempDir dir_;
  std::filesystem::path socket_;
  FakePodResources server_;
};

TEST_F(KubeletPodResourcesClient, ListsContainersWithDeduplicatedDevices) {
  adapters::kubelet::PodResourcesClient client(Options());
  auto listed = client.List();
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  const std::vector<adapters::kubelet::ContainerDeviceAssignment> expected = {
      {"vms", "vm-a", "compute", "nvidia.com/GPU", {"0000:1b:00.0", "0000:3b:00.0"}}};
  EXPECT_EQ(*listed, expected);
  EXPECT_EQ(server_.list_calls(), 1);
}

TEST_F(KubeletPodResourcesClient, AcceptsAnswersAboveGrpcDefaultLimit) {
  server_.OversizeNextList(1, 8u << 20);  // twice gRPC's 4 MiB default
  adapters::kubelet::PodResourcesClient client(Options());
  auto listed = client.List();
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_EQ(listed->size(), 2u);  // vm-a and the filler pod

  // The same answer is refused by a client with gRPC's default limit: the option matters.
  server_.OversizeNextList(1, 8u << 20);
  adapters::kubelet::PodResourcesClientOptions small = Options();
  small.max_receive_bytes = 4 << 20;
  adapters::kubelet::PodResourcesClient small_client(small);
  auto refused = small_client.List();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kResourceExhausted);
}

TEST_F(KubeletPodResourcesClient, AnswerAbove16MiBIsResourceExhaustedThenRecovers) {
  server_.OversizeNextList();
  adapters::kubelet::PodResourcesClient client(Options());
  auto refused = client.List();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("RESOURCE_EXHAUSTED"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find(socket_.string()), std::string::npos);

  auto listed = client.List();
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(KubeletPodResourcesClient, InjectedErrorsAreReportedWithTheirCodeAndChannelIsRecreated) {
  adapters::kubelet::PodResourcesClient client(Options());
  ASSERT_TRUE(client.List().ok());
  EXPECT_EQ(client.channels_created(), 1);

  server_.FailNextList(grpc::StatusCode::RESOURCE_EXHAUSTED, "rejected by rate limit");
  server_.FailNextList(grpc::StatusCode::UNKNOWN, "sources not ready");
  server_.FailNextList(grpc::StatusCode::UNAVAILABLE, "shutting down");

  auto rate_limited = client.List();
  ASSERT_FALSE(rate_limited.ok());
  EXPECT_EQ(rate_limited.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(rate_limited.status().message().find("RESOURCE_EXHAUSTED: rejected by rate limit"),
            std::string::npos)
      << rate_limited.status().message();

  auto unknown = client.List();
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(unknown.status().message().find("UNKNOWN: sources not ready"), std::string::npos);

  auto unavailable = client.List();
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.status().code(), ErrorCode::kUnavailable);

  ASSERT_TRUE(client.List().ok());
  EXPECT_EQ(client.channels_created(), 4);  // a fresh channel after each of the 3 failures
}

TEST_F(KubeletPodResourcesClient, DeadlineBoundsASlowKubelet) {
  server_.DelayNextList(milliseconds(3000));
  adapters::kubelet::PodResourcesClientOptions options = Options();
  options.deadline = milliseconds(200);
  adapters::kubelet::PodResourcesClient client(options);
  const auto start = std::chrono::steady_clock::now();
  auto listed = client.List();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), ErrorCode::kDeadlineExceeded) << listed.status().message();
  EXPECT_LT(took, milliseconds(2000));
}

TEST_F(KubeletPodResourcesClient, MissingSocketIsUnavailableAndNamesThePath) {
  server_.Stop();
  ASSERT_FALSE(std::filesystem::exists(socket_));
  adapters::kubelet::PodResourcesClient client(Options());
  auto listed = client.List();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(listed.status().message().find(socket_.string()), std::string::npos);
  EXPECT_EQ(client.channels_created(), 0);
}

TEST_F(KubeletPodResourcesClient, NewSocketFileGetsANewChannel) {
  adapters::kubelet::PodResourcesClient client(Options());
  ASSERT_TRUE(client.List().ok());
  ASSERT_TRUE(client.List().ok());
  EXPECT_EQ(client.channels_created(), 1);

  // A kubelet restart: the socket file is removed and created again; pods survive.
  server_.Stop();
  ASSERT_TRUE(server_.Start(socket_).ok());
  auto listed = client.List();
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_EQ(listed->size(), 1u);
  EXPECT_EQ(client.channels_created(), 2);
}

}  // namespace
}  // namespace gfp::kubelet
