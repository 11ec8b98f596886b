// Loads the official kubelet .proto files (shared/reference/kubelet-api) at run time into a
// descriptor pool of their own, to compare our generated code against.
#pragma once

#include <google/protobuf/descriptor.h>

#include <memory>
#include <string>

namespace gfp::kubelet::testing {

class OfficialKubeletApi {
 public:
  virtual ~OfficialKubeletApi() = default;
  // The file at `relative_path` ("deviceplugin/v1beta1/api.proto"), or null with `error` set.
  virtual const google::protobuf::FileDescriptor* Load(const std::string& relative_path,
                                                       std::string* error) = 0;
  // How the files are parsed, for test logs.
  virtual std::string method() const = 0;
};

// Parses with google::protobuf::compiler::Importer when its header is installed (libprotoc-dev);
// otherwise runs `protoc_path --descriptor_set_out` on the same files and loads the result.
std::unique_ptr<OfficialKubeletApi> OpenOfficialKubeletApi(const std::string& api_dir,
                                                           const std::string& protoc_path);

}  // namespace gfp::kubelet::testing
