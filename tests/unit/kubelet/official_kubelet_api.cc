#include "unit/kubelet/official_kubelet_api.h"

#include <google/protobuf/descriptor.pb.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/temp_dir.h"
#include "process/child_process.h"

#if __has_include(<google/protobuf/compiler/importer.h>)
#include <google/protobuf/compiler/importer.h>
#define GFP_HAVE_PROTOBUF_IMPORTER 1
#endif

namespace gfp::kubelet::testing {
namespace {

#ifdef GFP_HAVE_PROTOBUF_IMPORTER

class ImporterApi final : public OfficialKubeletApi {
 public:
  explicit ImporterApi(const std::string& api_dir) : importer_(&source_tree_, &errors_) {
    source_tree_.MapPath("", api_dir);
  }

  const google::protobuf::FileDescriptor* Load(const std::string& relative_path,
                                               std::string* error) override {
    errors_.text.clear();
    const google::protobuf::FileDescriptor* file = importer_.Import(relative_path);
    if (file == nullptr) *error = "cannot parse " + relative_path + ": " + errors_.text;
    return file;
  }
  std::string method() const override { return "google::protobuf::compiler::Importer"; }

 private:
  struct Errors final : google::protobuf::compiler::MultiFileErrorCollector {
    void AddError(const std::string& filename, int line, int column,
                  const std::string& message) override {
      text += filename + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " +
              message + "\n";
    }
    std::string text;
  };

  google::protobuf::compiler::DiskSourceTree source_tree_;
  Errors errors_;
  google::protobuf::compiler::Importer importer_;
};

#endif  // GFP_HAVE_PROTOBUF_IMPORTER

// Without the Importer header: the protoc binary parses the files into a FileDescriptorSet.
class ProtocApi final : public OfficialKubeletApi {
 public:
  ProtocApi(std::string api_dir, std::string protoc_path)
      : api_dir_(std::move(api_dir)), protoc_path_(std::move(protoc_path)) {}

  const google::protobuf::FileDescriptor* Load(const std::string& relative_path,
                                               std::string* error) override {
    if (const auto* known = pool_.FindFileByName(relative_path)) return known;
    gfp::testing::TempDir temp;
    const std::string out = (temp.path() / "official.desc").string();
    gfp::process::ProcessOptions protoc;
    protoc.binary = protoc_path_;
    protoc.args = {"--include_imports", "--descriptor_set_out=" + out, "-I" + api_dir_,
                   relative_path};
    protoc.log_path = temp.path() / "protoc.log";
    auto ran = gfp::process::RunCommand(protoc, std::chrono::seconds(60));
    if (!ran.ok()) {
      *error = ran.status().message();
      return nullptr;
    }
    if (!ran->status.success()) {
      *error = protoc_path_ + " failed on " + api_dir_ + "/" + relative_path + " (" +
               ran->status.ToString() + "): " + ran->output;
      return nullptr;
    }
    std::ifstream in(out, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    google::protobuf::FileDescriptorSet set;
    if (!set.ParseFromString(bytes.str())) {
      *error = "cannot decode the descriptor set protoc wrote for " + relative_path;
      return nullptr;
    }
    for (const auto& file : set.file()) {
      if (pool_.FindFileByName(file.name()) != nullptr) continue;
      if (pool_.BuildFile(file) == nullptr) {
        *error = "cannot build descriptor of " + file.name();
        return nullptr;
      }
    }
    return pool_.FindFileByName(relative_path);
  }
  std::string method() const override {
    return "protoc --descriptor_set_out (" + protoc_path_ + ")";
  }

 private:
  const std::string api_dir_;
  const std::string protoc_path_;
  google::protobuf::DescriptorPool pool_;
};

}  // namespace

std::unique_ptr<OfficialKubeletApi> OpenOfficialKubeletApi(const std::string& api_dir,
                                                           const std::string& protoc_path) {
#ifdef GFP_HAVE_PROTOBUF_IMPORTER
  (void)protoc_path;
  return std::make_unique<ImporterApi>(api_dir);
#else
  return std::make_unique<ProtocApi>(api_dir, protoc_path);
#endif
}

}  // namespace gfp::kubelet::testing
