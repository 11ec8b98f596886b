// The fake kubelet against a tiny in-test device plugin, over real gRPC on Unix sockets.
#include "sim/kubelet/fake_kubelet.h"

#include <grpcpp/client_context.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

#include "adapters/kubelet/unix_channel.h"
#include "common/temp_dir.h"
#include "podresources/v1/api.grpc.pb.h"
#include "unit/kubelet/test_device_plugin.h"

namespace gfp::kubelet {
namespace {

using std::chrono::milliseconds;
using testing::MakeDevice;
using testing::TestDevicePlugin;
using Ids = std::vector<std::string>;

constexpr char kResource[] = "nvidia.com/GH100_H100_SXM5_80GB";
constexpr milliseconds kWait(5000);

v1beta1::DevicePluginOptions FullOptions() {
  v1beta1::DevicePluginOptions options;
  options.set_pre_start_required(true);
  options.set_get_preferred_allocation_available(true);
  return options;
}

std::vector<v1beta1::Device> FourDevices() {
  return {MakeDevice("0000:1b:00.0", "Healthy", 0), MakeDevice("0000:3b:00.0", "Healthy", 0),
          MakeDevice("0000:5b:00.0", "Healthy", 1), MakeDevice("0000:7b:00.0", "Healthy", 1)};
}

Ids IdsOf(const google::protobuf::RepeatedPtrField<std::string>& ids) {
  return {ids.begin(), ids.end()};
}

// Binds a Unix socket file at `path` (someone else's socket in the directory).
bool MakeSocketFile(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

class KubeletFakeKubelet : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    options_.device_plugin_dir = dir_.path() / "device-plugins";
    options_.pod_resources_socket = dir_.path() / "pod-resources" / "kubelet.sock";
    options_.dial_timeout = milliseconds(2000);
    options_.options_timeout = milliseconds(2000);
    options_.call_timeout = milliseconds(5000);
    kubelet_ = std::make_unique<FakeKubelet>(options_);
    ASSERT_TRUE(kubelet_->Start().ok());
  }

  void TearDown() override {
    plugin_.reset();
    kubelet_.reset();
  }

  // A serving plugin with four healthy devices, not yet registered.
  TestDevicePlugin& StartPlugin(v1beta1::DevicePluginOptions options = FullOptions()) {
    plugin_ = std::make_unique<TestDevicePlugin>(options_.device_plugin_dir, "kubevirt-test.sock",
                                                 kResource, options);
    plugin_->SetDevices(FourDevices());
    EXPECT_TRUE(plugin_->Serve());
    return *plugin_;
  }

  // A plugin registered and its four devices seen by the kubelet.
  TestDevicePlugin& RegisteredPlugin(v1beta1::DevicePluginOptions options = FullOptions()) {
    TestDevicePlugin& plugin = StartPlugin(options);
    const grpc::Status status = plugin.Register();
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(kubelet_->WaitForDevices(
        kResource, [](const auto& devices) { return devices.size() == 4; }, kWait));
    return plugin;
  }

  gfp::testing::TempDir dir_;
  FakeKubeletOptions options_;
  std::unique_ptr<FakeKubelet> kubelet_;
  std::unique_ptr<TestDevicePlugin> plugin_;
};

TEST_F(KubeletFakeKubelet, RegisterDialsThePluginBackBeforeAnswering) {
  TestDevicePlugin& plugin = StartPlugin();
  const grpc::Status status = plugin.Register();
  ASSERT_TRUE(status.ok()) << status.error_message();
  // GetDevicePluginOptions was answered while our Register call was still in flight.
  EXPECT_EQ(plugin.options_calls_during_register(), 1);

  auto resource = kubelet_->Resource(kResource);
  ASSERT_TRUE(resource.has_value());
  EXPECT_EQ(resource->registrations, 1);
  EXPECT_EQ(resource->endpoint, "kubevirt-test.sock");
  EXPECT_TRUE(resource->options.pre_start_required());
  EXPECT_TRUE(resource->options.get_preferred_allocation_available());
  const auto log = kubelet_->RegistrationLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(log[0].status.ok());
  EXPECT_EQ(log[0].request.version(), "v1beta1");
}

TEST_F(KubeletFakeKubelet, RefusesUnsupportedVersionWithoutDialling) {
  TestDevicePlugin& plugin = StartPlugin();
  const grpc::Status status = plugin.Register("v1beta2");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(status.error_message(),
            "requested API version \"v1beta2\" is not supported by kubelet. Supported version is "
            "[\"v1beta1\"]");
  EXPECT_EQ(plugin.options_calls(), 0);
  EXPECT_FALSE(kubelet_->Resource(kResource).has_value());
  ASSERT_EQ(kubelet_->RegistrationLog().size(), 1u);
  EXPECT_FALSE(kubelet_->RegistrationLog()[0].status.ok());
}

TEST_F(KubeletFakeKubelet, RefusesInvalidResourceNames) {
  TestDevicePlugin& plugin = StartPlugin();
  for (const std::string name : {"gpu", "kubernetes.io/gpu", "nvidia.com/a/b"}) {
    const grpc::Status status = plugin.RegisterAs("v1beta1", name);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNKNOWN) << name;
    EXPECT_EQ(status.error_message(), "the ResourceName \"" + name + "\" is invalid");
  }
  EXPECT_EQ(plugin.options_calls(), 0);
}

TEST_F(KubeletFakeKubelet, RegisterFailsWhenThePluginDoesNotServe) {
  kubelet_.reset();
  options_.dial_timeout = milliseconds(300);
  kubelet_ = std::make_unique<FakeKubelet>(options_);
  ASSERT_TRUE(kubelet_->Start().ok());
  TestDevicePlugin plugin(options_.device_plugin_dir, "absent.sock", kResource, FullOptions());
  const grpc::Status status = plugin.Register();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_NE(status.error_message().find("failed to dial device plugin"), std::string::npos)
      << status.error_message();
  EXPECT_FALSE(kubelet_->Resource(kResource).has_value());
}

TEST_F(KubeletFakeKubelet, SeesEveryListAndWatchUpdate) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  auto devices = FourDevices();
  devices[2].set_health("Unhealthy");
  devices.pop_back();
  plugin.SetDevices(devices);
  EXPECT_TRUE(kubelet_->WaitForDevices(
      kResource,
      [](const auto& seen) {
        return seen.size() == 3 && seen[2].id() == "0000:5b:00.0" &&
               seen[2].health() == "Unhealthy";
      },
      kWait));
  auto resource = kubelet_->Resource(kResource);
  ASSERT_TRUE(resource.has_value());
  EXPECT_GE(resource->updates, 2);
  EXPECT_EQ(resource->devices[0].topology().nodes(0).id(), 0);
  EXPECT_EQ(resource->devices[2].topology().nodes(0).id(), 1);
}

TEST_F(KubeletFakeKubelet, NoticesWhenTheStreamEnds) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  plugin.EndStreams();
  ASSERT_TRUE(kubelet_->WaitForResource(
      kResource, [](const ResourceSnapshot& r) { return !r.connected && r.stream_ends == 1; },
      kWait));
  // Without a connected plugin nothing can be admitted, like the kubelet.
  auto admitted = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 1}}, kResource);
  EXPECT_EQ(admitted.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  // Registering again brings it back.
  ASSERT_TRUE(plugin.Register().ok());
  EXPECT_TRUE(kubelet_->WaitForResource(
      kResource, [](const ResourceSnapshot& r) { return r.connected && r.registrations == 2; },
      kWait));
}

TEST_F(KubeletFakeKubelet, ReRegistrationReplacesTheOldStream) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  ASSERT_TRUE(plugin.WaitForOpenStreams(1, kWait));
  ASSERT_TRUE(plugin.Register().ok());
  ASSERT_TRUE(kubelet_->WaitForResource(
      kResource, [](const ResourceSnapshot& r) { return r.registrations == 2 && r.updates >= 2; },
      kWait));
  // The first stream was cancelled by the kubelet; exactly one remains.
  EXPECT_TRUE(plugin.WaitForOpenStreams(1, kWait));
  auto resource = kubelet_->Resource(kResource);
  EXPECT_TRUE(resource->connected);
  EXPECT_EQ(resource->stream_ends, 0);
}

TEST_F(KubeletFakeKubelet, AdmitPodFollowsAdviceAllocatesAndPreStarts) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  plugin.set_preferred_handler([](const v1beta1::PreferredAllocationRequest& request,
                                  v1beta1::PreferredAllocationResponse* response) {
    // Prefer the last devices offered.
    const auto& offered = request.container_requests(0).available_deviceids();
    auto* answer = response->add_container_responses();
    for (int i = offered.size() - 1;
         i >= 0 && answer->deviceids_size() < request.container_requests(0).allocation_size();
         --i) {
      answer->add_deviceids(offered[i]);
    }
    return grpc::Status::OK;
  });

  auto first = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, kResource);
  ASSERT_TRUE(first.ok()) << first.status.error_message();
  ASSERT_EQ(first.response.containers.size(), 1u);
  EXPECT_EQ(first.response.containers[0].device_ids, (Ids{"0000:7b:00.0", "0000:5b:00.0"}));
  EXPECT_EQ(first.response.containers[0].allocate_response.envs().at("PCI_RESOURCE_TEST"),
            "0000:7b:00.0,0000:5b:00.0");

  // What the plugin was asked, in the kubelet's shapes.
  ASSERT_EQ(plugin.preferred_requests().size(), 1u);
  const v1beta1::PreferredAllocationRequest ask = plugin.preferred_requests()[0];
  ASSERT_EQ(ask.container_requests_size(), 1);
  EXPECT_EQ(IdsOf(ask.container_requests(0).available_deviceids()),
            (Ids{"0000:1b:00.0", "0000:3b:00.0", "0000:5b:00.0", "0000:7b:00.0"}));
  EXPECT_EQ(ask.container_requests(0).allocation_size(), 2);
  ASSERT_EQ(plugin.allocate_requests().size(), 1u);
  ASSERT_EQ(plugin.allocate_requests()[0].container_requests_size(), 1);
  EXPECT_EQ(IdsOf(plugin.allocate_requests()[0].container_requests(0).devices_ids()),
            (Ids{"0000:7b:00.0", "0000:5b:00.0"}));
  ASSERT_EQ(plugin.prestart_requests().size(), 1u);
  EXPECT_EQ(IdsOf(plugin.prestart_requests()[0].devices_ids()),
            (Ids{"0000:7b:00.0", "0000:5b:00.0"}));

  // Published through PodResources, one entry per (device, NUMA node).
  const auto pods = kubelet_->pod_resources().Pods();
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].namespace_(), "vms");
  ASSERT_EQ(pods[0].containers(0).devices_size(), 2);
  EXPECT_EQ(pods[0].containers(0).devices(0).resource_name(), kResource);
  EXPECT_EQ(pods[0].containers(0).devices(0).topology().nodes(0).id(), 1);

  // The next pod is offered only what is left, and one more finds nothing.
  auto second = kubelet_->AdmitPod("vms", "vm-b", {{"compute", 2}}, kResource);
  ASSERT_TRUE(second.ok()) << second.status.error_message();
  EXPECT_EQ(IdsOf(plugin.preferred_requests()[1].container_requests(0).available_deviceids()),
            (Ids{"0000:1b:00.0", "0000:3b:00.0"}));
  auto third = kubelet_->AdmitPod("vms", "vm-c", {{"compute", 1}}, kResource);
  EXPECT_EQ(third.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(kubelet_->AllocatedDevices(kResource).size(), 4u);

  // Deleting a pod frees its devices and removes it from PodResources.
  EXPECT_TRUE(kubelet_->DeletePod("vms", "vm-a"));
  EXPECT_FALSE(kubelet_->DeletePod("vms", "vm-a"));
  EXPECT_EQ(kubelet_->pod_resources().Pods().size(), 1u);
  auto fourth = kubelet_->AdmitPod("vms", "vm-c", {{"compute", 1}}, kResource);
  ASSERT_TRUE(fourth.ok()) << fourth.status.error_message();
}

TEST_F(KubeletFakeKubelet, AdmitPodRepairsBadAdviceAndSkipsUnhealthyDevices) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  auto devices = FourDevices();
  devices[0].set_health("Unhealthy");
  plugin.SetDevices(devices);
  ASSERT_TRUE(kubelet_->WaitForDevices(
      kResource, [](const auto& seen) { return seen[0].health() == "Unhealthy"; }, kWait));
  plugin.set_preferred_handler(
      [](const v1beta1::PreferredAllocationRequest&, v1beta1::PreferredAllocationResponse* r) {
        auto* answer = r->add_container_responses();
        for (const char* id : {"0000:1b:00.0", "bogus", "0000:7b:00.0", "0000:7b:00.0"}) {
          answer->add_deviceids(id);
        }
        return grpc::Status::OK;
      });
  auto admitted = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, kResource);
  ASSERT_TRUE(admitted.ok()) << admitted.status.error_message();
  // The unhealthy and unknown advice is dropped, the shortfall filled from the first available.
  EXPECT_EQ(admitted.response.containers[0].device_ids, (Ids{"0000:7b:00.0", "0000:3b:00.0"}));
}

TEST_F(KubeletFakeKubelet, AdmitPodWithoutPreferredAllocationTakesFirstDevicesPerContainer) {
  TestDevicePlugin& plugin = RegisteredPlugin(v1beta1::DevicePluginOptions());
  auto admitted =
      kubelet_->AdmitPod("vms", "vm-a", {{"init", 0}, {"compute", 1}, {"helper", 2}}, kResource);
  ASSERT_TRUE(admitted.ok()) << admitted.status.error_message();
  ASSERT_EQ(admitted.response.containers.size(), 3u);
  EXPECT_TRUE(admitted.response.containers[0].device_ids.empty());
  EXPECT_EQ(admitted.response.containers[1].device_ids, (Ids{"0000:1b:00.0"}));
  EXPECT_EQ(admitted.response.containers[2].device_ids, (Ids{"0000:3b:00.0", "0000:5b:00.0"}));
  EXPECT_TRUE(plugin.preferred_requests().empty());
  EXPECT_TRUE(plugin.prestart_requests().empty());
  EXPECT_EQ(plugin.allocate_requests().size(), 2u);  // one per container that has devices
}

TEST_F(KubeletFakeKubelet, FailedAdmissionReturnsThePluginStatusAndRecordsNothing) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  plugin.set_allocate_handler([](const v1beta1::AllocateRequest&, v1beta1::AllocateResponse*) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "FM_ST_IN_USE activating partition 3");
  });
  auto refused = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, kResource);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(refused.status.error_message(), "FM_ST_IN_USE activating partition 3");
  EXPECT_TRUE(plugin.prestart_requests().empty());

  plugin.set_allocate_handler(nullptr);
  plugin.set_prestart_handler([](const v1beta1::PreStartContainerRequest&) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "partition not active");
  });
  auto prestart_failed = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, kResource);
  EXPECT_EQ(prestart_failed.status.error_code(), grpc::StatusCode::UNAVAILABLE);

  plugin.set_prestart_handler(nullptr);
  plugin.set_preferred_handler(
      [](const v1beta1::PreferredAllocationRequest&, v1beta1::PreferredAllocationResponse*) {
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no partition of size 2");
      });
  const size_t allocates_before = plugin.allocate_requests().size();
  auto no_partition = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, kResource);
  EXPECT_EQ(no_partition.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(plugin.allocate_requests().size(), allocates_before);  // fail closed: no Allocate

  EXPECT_TRUE(kubelet_->Pods().empty());
  EXPECT_TRUE(kubelet_->AllocatedDevices(kResource).empty());
  EXPECT_TRUE(kubelet_->pod_resources().Pods().empty());
}

TEST_F(KubeletFakeKubelet, ServesPodResourcesGetAndAllocatable) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  auto devices = FourDevices();
  devices[3].set_health("Unhealthy");
  plugin.SetDevices(devices);
  ASSERT_TRUE(kubelet_->WaitForDevices(
      kResource, [](const auto& seen) { return seen[3].health() == "Unhealthy"; }, kWait));
  ASSERT_TRUE(kubelet_->AdmitPod("vms", "vm-a", {{"compute", 1}}, kResource).ok());

  auto stub = v1::PodResourcesLister::NewStub(
      adapters::kubelet::MakeUnixSocketChannel(options_.pod_resources_socket.string()));
  {
    grpc::ClientContext context;
    v1::GetPodResourcesRequest request;
    request.set_pod_namespace("vms");
    request.set_pod_name("vm-a");
    v1::GetPodResourcesResponse response;
    ASSERT_TRUE(stub->Get(&context, request, &response).ok());
    EXPECT_EQ(response.pod_resources().containers(0).devices(0).device_ids(0), "0000:1b:00.0");
  }
  {
    grpc::ClientContext context;
    v1::GetPodResourcesRequest request;
    request.set_pod_namespace("vms");
    request.set_pod_name("nope");
    v1::GetPodResourcesResponse response;
    const grpc::Status status = stub->Get(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNKNOWN);
    EXPECT_EQ(status.error_message(), "pod nope in namespace vms not found");
  }
  {
    grpc::ClientContext context;
    v1::AllocatableResourcesResponse response;
    ASSERT_TRUE(
        stub->GetAllocatableResources(&context, v1::AllocatableResourcesRequest(), &response).ok());
    Ids ids;
    for (const auto& entry : response.devices()) ids.push_back(entry.device_ids(0));
    EXPECT_EQ(ids, (Ids{"0000:1b:00.0", "0000:3b:00.0", "0000:5b:00.0"}));  // healthy ones
  }
}

TEST_F(KubeletFakeKubelet, RestartRemovesEverySocketAndThePluginMustRegisterAgain) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  ASSERT_TRUE(kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, kResource).ok());
  const auto dir = options_.device_plugin_dir;
  ASSERT_TRUE(MakeSocketFile(dir / "other-plugin.sock"));
  { std::ofstream(dir / "kubelet_internal_checkpoint") << "{}"; }
  std::filesystem::create_directory(dir / "subdir");
  struct stat before {};
  ASSERT_EQ(::stat(kubelet_->kubelet_socket().c_str(), &before), 0);

  ASSERT_TRUE(kubelet_->Restart().ok());

  EXPECT_FALSE(std::filesystem::exists(plugin.socket_path()));
  EXPECT_FALSE(std::filesystem::exists(dir / "other-plugin.sock"));
  EXPECT_TRUE(std::filesystem::exists(dir / "kubelet_internal_checkpoint"));
  EXPECT_TRUE(std::filesystem::is_directory(dir / "subdir"));
  struct stat after {};
  ASSERT_EQ(::stat(kubelet_->kubelet_socket().c_str(), &after), 0);
  EXPECT_TRUE(S_ISSOCK(after.st_mode));
  EXPECT_TRUE(after.st_ino != before.st_ino || after.st_ctim.tv_nsec != before.st_ctim.tv_nsec ||
              after.st_ctim.tv_sec != before.st_ctim.tv_sec);

  // The kubelet forgot the plugin (its stream is gone) but kept the admitted pod.
  EXPECT_FALSE(kubelet_->Resource(kResource)->connected);
  EXPECT_TRUE(plugin.WaitForOpenStreams(0, kWait));
  EXPECT_EQ(kubelet_->Pods().size(), 1u);
  EXPECT_EQ(kubelet_->pod_resources().Pods().size(), 1u);

  // The plugin serves its socket again and re-registers; the kept pod's devices stay taken.
  plugin.StopServing();
  ASSERT_TRUE(plugin.Serve());
  ASSERT_TRUE(plugin.Register().ok());
  ASSERT_TRUE(kubelet_->WaitForDevices(
      kResource, [](const auto& seen) { return seen.size() == 4; }, kWait));
  EXPECT_EQ(kubelet_->Resource(kResource)->registrations, 2);
  auto next = kubelet_->AdmitPod("vms", "vm-b", {{"compute", 2}}, kResource);
  ASSERT_TRUE(next.ok()) << next.status.error_message();
  auto full = kubelet_->AdmitPod("vms", "vm-c", {{"compute", 1}}, kResource);
  EXPECT_EQ(full.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(KubeletFakeKubelet, CallsToAnUnregisteredResourceFailCleanly) {
  auto allocated = kubelet_->Allocate("nvidia.com/NOPE", v1beta1::AllocateRequest());
  EXPECT_EQ(allocated.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  auto prestart =
      kubelet_->PreStartContainer("nvidia.com/NOPE", v1beta1::PreStartContainerRequest());
  EXPECT_EQ(prestart.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(KubeletFakeKubelet, DirectCallsReachThePlugin) {
  TestDevicePlugin& plugin = RegisteredPlugin();
  v1beta1::PreferredAllocationRequest ask;
  auto* container = ask.add_container_requests();
  container->add_available_deviceids("0000:1b:00.0");
  container->add_available_deviceids("0000:3b:00.0");
  container->set_allocation_size(1);
  auto advice = kubelet_->GetPreferredAllocation(kResource, ask);
  ASSERT_TRUE(advice.ok());
  EXPECT_EQ(IdsOf(advice.response.container_responses(0).deviceids()), (Ids{"0000:1b:00.0"}));

  v1beta1::AllocateRequest allocate;
  allocate.add_container_requests()->add_devices_ids("0000:3b:00.0");
  auto allocated = kubelet_->Allocate(kResource, allocate);
  ASSERT_TRUE(allocated.ok());
  EXPECT_EQ(allocated.response.container_responses(0).envs().at("PCI_RESOURCE_TEST"),
            "0000:3b:00.0");
  EXPECT_EQ(plugin.allocate_requests().size(), 1u);
}

}  // namespace
}  // namespace gfp::kubelet
