// Our own kubelet .proto files must be wire-identical to the official ones: same packages (the
// gRPC method paths), services, methods, message names, field numbers and types. The official
// files are parsed at run time from shared/reference/kubelet-api when that folder exists.
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "deviceplugin/v1beta1/api.pb.h"
#include "dra/v1/api.pb.h"
#include "pluginregistration/v1/api.pb.h"
#include "podresources/v1/api.pb.h"
#include "unit/kubelet/official_kubelet_api.h"
#include "unit/kubelet/twin_message_filler.h"

namespace gfp::kubelet::testing {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::Message;

namespace dra_v1 = ::k8s::io::kubelet::pkg::apis::dra::v1;

std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

// Our generated file for each official relative path.
struct FilePair {
  std::string relative_path;
  const FileDescriptor* ours;
};

std::vector<FilePair> OurFiles() {
  return {
      {"deviceplugin/v1beta1/api.proto", v1beta1::Device::descriptor()->file()},
      {"podresources/v1/api.proto", v1::PodResources::descriptor()->file()},
      {"dra/v1/api.proto", dra_v1::Claim::descriptor()->file()},
      {"pluginregistration/v1/api.proto", ::pluginregistration::PluginInfo::descriptor()->file()}};
}

// Nested declarations (map entries, nested messages and enums) by name, at every depth: the
// encoding test reaches them only through the fields that use them.
void ExpectSameNestedTypes(const Descriptor* official, const Descriptor* ours) {
  ASSERT_EQ(ours->nested_type_count(), official->nested_type_count()) << official->full_name();
  ASSERT_EQ(ours->enum_type_count(), official->enum_type_count()) << official->full_name();
  for (int i = 0; i < official->nested_type_count(); ++i) {
    const Descriptor* our_nested = ours->FindNestedTypeByName(official->nested_type(i)->name());
    ASSERT_NE(our_nested, nullptr) << "missing " << official->nested_type(i)->full_name();
    EXPECT_EQ(our_nested->options().map_entry(), official->nested_type(i)->options().map_entry())
        << official->nested_type(i)->full_name();
    ExpectSameNestedTypes(official->nested_type(i), our_nested);
  }
  for (int i = 0; i < official->enum_type_count(); ++i) {
    EXPECT_NE(ours->FindEnumTypeByName(official->enum_type(i)->name()), nullptr)
        << "missing " << official->enum_type(i)->full_name();
  }
}

class KubeletWireCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = GFP_OFFICIAL_KUBELET_API_DIR;
    if (dir.empty() || !std::filesystem::is_directory(dir)) {
      GTEST_SKIP() << "official kubelet API files not found (looked for shared/reference/"
                      "kubelet-api next to the checkout at configure time: '"
                   << dir << "'); wire compatibility against them is not checked";
    }
    api_ = OpenOfficialKubeletApi(dir, GFP_PROTOC_EXECUTABLE);
    std::cout << "official files parsed with " << api_->method() << "\n";
  }

  const FileDescriptor* Official(const std::string& relative_path) {
    std::string error;
    const FileDescriptor* file = api_->Load(relative_path, &error);
    EXPECT_NE(file, nullptr) << error;
    return file;
  }

  std::unique_ptr<OfficialKubeletApi> api_;
};

TEST_F(KubeletWireCompat, FilesDeclareTheSamePackagesMessagesAndFields) {
  for (const FilePair& pair : OurFiles()) {
    SCOPED_TRACE(pair.relative_path);
    const FileDescriptor* official = Official(pair.relative_path);
    ASSERT_NE(official, nullptr);
    EXPECT_EQ(pair.ours->name(), official->name()) << "keep the relative paths distinct and equal";
    EXPECT_EQ(pair.ours->package(), official->package());
    EXPECT_EQ(pair.ours->syntax(), official->syntax());
    ASSERT_EQ(pair.ours->message_type_count(), official->message_type_count());
    for (int i = 0; i < official->message_type_count(); ++i) {
      const Descriptor* ours = pair.ours->FindMessageTypeByName(official->message_type(i)->name());
      EXPECT_NE(ours, nullptr) << "missing message " << official->message_type(i)->full_name();
      if (ours != nullptr) ExpectSameNestedTypes(official->message_type(i), ours);
    }
    EXPECT_EQ(pair.ours->enum_type_count(), official->enum_type_count());
  }
}

TEST_F(KubeletWireCompat, EveryMessageEncodesIdenticallyBothWays) {
  int compared = 0;
  for (const FilePair& pair : OurFiles()) {
    const FileDescriptor* official_file = Official(pair.relative_path);
    ASSERT_NE(official_file, nullptr);
    google::protobuf::DynamicMessageFactory factory(official_file->pool());
    for (int i = 0; i < official_file->message_type_count(); ++i) {
      const Descriptor* official_type = official_file->message_type(i);
      SCOPED_TRACE(official_type->full_name());
      const Descriptor* our_type = pair.ours->FindMessageTypeByName(official_type->name());
      ASSERT_NE(our_type, nullptr);

      std::unique_ptr<Message> official(factory.GetPrototype(official_type)->New());
      std::unique_ptr<Message> ours(
          google::protobuf::MessageFactory::generated_factory()->GetPrototype(our_type)->New());
      std::vector<std::string> mismatches;
      FillTwins(official.get(), ours.get(), i, &mismatches);
      for (const std::string& m : mismatches) ADD_FAILURE() << m;

      // Every field is set, so a field missing on one side would change the bytes.
      std::vector<const google::protobuf::FieldDescriptor*> set_fields;
      ours->GetReflection()->ListFields(*ours, &set_fields);
      EXPECT_EQ(static_cast<int>(set_fields.size()), our_type->field_count());

      const std::string official_bytes = DeterministicBytes(*official);
      const std::string our_bytes = DeterministicBytes(*ours);
      EXPECT_EQ(Hex(our_bytes), Hex(official_bytes));
      if (our_type->field_count() > 0) {
        EXPECT_FALSE(our_bytes.empty());
      }

      // Official bytes decode into our class with nothing unknown, and re-encode identically.
      std::unique_ptr<Message> ours_decoded(ours->New());
      ASSERT_TRUE(ours_decoded->ParseFromString(official_bytes));
      EXPECT_EQ(ours_decoded->GetReflection()->GetUnknownFields(*ours_decoded).field_count(), 0);
      EXPECT_EQ(Hex(DeterministicBytes(*ours_decoded)), Hex(official_bytes));

      // And the other way round.
      std::unique_ptr<Message> official_decoded(official->New());
      ASSERT_TRUE(official_decoded->ParseFromString(our_bytes));
      EXPECT_EQ(
          official_decoded->GetReflection()->GetUnknownFields(*official_decoded).field_count(), 0);
      EXPECT_EQ(Hex(DeterministicBytes(*official_decoded)), Hex(our_bytes));
      ++compared;
    }
  }
  // At kubelet v0.36.3: 20 device-plugin, 15 PodResources, 8 DRA and 4 plugin-registration
  // top-level messages (map entries are covered inside their parents); never fewer.
  EXPECT_GE(compared, 20 + 15 + 8 + 4);
  std::cout << compared << " messages encoded both ways\n";
}

TEST_F(KubeletWireCompat, ServicesAndMethodsHaveTheSameNamesTypesAndStreaming) {
  int methods = 0;
  for (const FilePair& pair : OurFiles()) {
    SCOPED_TRACE(pair.relative_path);
    const FileDescriptor* official = Official(pair.relative_path);
    ASSERT_NE(official, nullptr);
    ASSERT_EQ(pair.ours->service_count(), official->service_count());
    for (int s = 0; s < official->service_count(); ++s) {
      const auto* official_service = official->service(s);
      const auto* our_service = pair.ours->FindServiceByName(official_service->name());
      ASSERT_NE(our_service, nullptr) << official_service->full_name();
      EXPECT_EQ(our_service->full_name(), official_service->full_name());
      ASSERT_EQ(our_service->method_count(), official_service->method_count());
      for (int m = 0; m < official_service->method_count(); ++m) {
        const auto* om = official_service->method(m);
        const auto* um = our_service->FindMethodByName(om->name());
        ASSERT_NE(um, nullptr) << om->full_name();
        EXPECT_EQ(um->full_name(), om->full_name());
        EXPECT_EQ(um->input_type()->full_name(), om->input_type()->full_name()) << om->full_name();
        EXPECT_EQ(um->output_type()->full_name(), om->output_type()->full_name())
            << om->full_name();
        EXPECT_EQ(um->client_streaming(), om->client_streaming()) << om->full_name();
        EXPECT_EQ(um->server_streaming(), om->server_streaming()) << om->full_name();
        ++methods;
      }
    }
  }
  // At kubelet v0.36.3: device-plugin Registration 1 + DevicePlugin 5, PodResourcesLister 3,
  // DRAPlugin 2, pluginregistration Registration 2.
  EXPECT_EQ(methods, 1 + 5 + 3 + 2 + 2);
  std::cout << methods << " methods compared\n";
}

// The method paths the kubelet dials and serves (kubelet.md §1.3), independent of the official
// files.
TEST(KubeletWireFormat, MethodPathsAreTheKubelets) {
  auto path = [](const google::protobuf::ServiceDescriptor* s, int m) {
    return "/" + s->full_name() + "/" + s->method(m)->name();
  };
  const auto* registration =
      v1beta1::Device::descriptor()->file()->FindServiceByName("Registration");
  const auto* plugin = v1beta1::Device::descriptor()->file()->FindServiceByName("DevicePlugin");
  const auto* lister =
      v1::PodResources::descriptor()->file()->FindServiceByName("PodResourcesLister");
  ASSERT_NE(registration, nullptr);
  ASSERT_NE(plugin, nullptr);
  ASSERT_NE(lister, nullptr);
  EXPECT_EQ(path(registration, 0), "/v1beta1.Registration/Register");
  std::vector<std::string> plugin_paths;
  for (int m = 0; m < plugin->method_count(); ++m) plugin_paths.push_back(path(plugin, m));
  EXPECT_EQ(plugin_paths, (std::vector<std::string>{"/v1beta1.DevicePlugin/GetDevicePluginOptions",
                                                    "/v1beta1.DevicePlugin/ListAndWatch",
                                                    "/v1beta1.DevicePlugin/GetPreferredAllocation",
                                                    "/v1beta1.DevicePlugin/Allocate",
                                                    "/v1beta1.DevicePlugin/PreStartContainer"}));
  std::vector<std::string> lister_paths;
  for (int m = 0; m < lister->method_count(); ++m) lister_paths.push_back(path(lister, m));
  EXPECT_EQ(lister_paths,
            (std::vector<std::string>{"/v1.PodResourcesLister/List",
                                      "/v1.PodResourcesLister/GetAllocatableResources",
                                      "/v1.PodResourcesLister/Get"}));
}

// The DRA paths the kubelet calls on a DRA driver, and the plugin-registration paths its plugin
// watcher calls on the registration socket, written out independently of the official files.
TEST(KubeletWireFormat, DraAndPluginRegistrationPathsAreTheKubelets) {
  auto paths = [](const google::protobuf::ServiceDescriptor* s) {
    std::vector<std::string> out;
    for (int m = 0; m < s->method_count(); ++m) {
      out.push_back("/" + s->full_name() + "/" + s->method(m)->name());
    }
    return out;
  };
  const auto* dra = dra_v1::Claim::descriptor()->file()->FindServiceByName("DRAPlugin");
  const auto* registration =
      ::pluginregistration::PluginInfo::descriptor()->file()->FindServiceByName("Registration");
  ASSERT_NE(dra, nullptr);
  ASSERT_NE(registration, nullptr);
  EXPECT_EQ(paths(dra), (std::vector<std::string>{
                            "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
                            "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"}));
  EXPECT_EQ(paths(registration), (std::vector<std::string>{
                                     "/pluginregistration.Registration/GetInfo",
                                     "/pluginregistration.Registration/NotifyRegistrationStatus"}));
}

// The vector verified against the Go types (kubelet.md §1.3): NUMA node 0 is an empty NUMANode.
TEST(KubeletWireFormat, DeviceEncodesToTheKnownVector) {
  v1beta1::Device device;
  device.set_id("0000:3b:00.0");
  device.set_health("Healthy");
  device.mutable_topology()->add_nodes()->set_id(0);
  v1beta1::ListAndWatchResponse response;
  *response.add_devices() = device;
  EXPECT_EQ(Hex(response.SerializeAsString()),
            "0a1b0a0c303030303a33623a30302e3012074865616c7468791a020a00");

  v1beta1::ListAndWatchResponse decoded;
  ASSERT_TRUE(decoded.ParseFromString(response.SerializeAsString()));
  ASSERT_EQ(decoded.devices_size(), 1);
  EXPECT_EQ(decoded.devices(0).id(), "0000:3b:00.0");
  EXPECT_EQ(decoded.devices(0).topology().nodes_size(), 1);
  EXPECT_EQ(decoded.devices(0).topology().nodes(0).id(), 0);
}

}  // namespace
}  // namespace gfp::kubelet::testing
