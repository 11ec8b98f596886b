#include "adapters/mapping/module_mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "sim/node/fake_node.h"
#include "unit/host/fifo_guard.h"

namespace gfp::adapters::mapping {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class HostModuleMapping : public ::testing::Test {
 protected:
  // Writes `json` to a real file and loads it; returns the error message ("" on success).
  std::string LoadError(const std::string& json) {
    file_ = dir_.Write("mapping.json", json);
    auto mapping = LoadModuleMapping(file_);
    if (mapping.ok()) return "";
    EXPECT_EQ(mapping.status().code(), ErrorCode::kInvalidArgument);
    return mapping.status().message();
  }
  std::string Prefix() const { return "module mapping " + file_.string() + ": "; }

  gfp::testing::TempDir dir_;
  // Fixed up front so Prefix() is right whichever side of an EXPECT_EQ runs first.
  std::filesystem::path file_ = dir_.path() / "mapping.json";
};

TEST_F(HostModuleMapping, RealHgxH100FileNormalizesKeys) {
  auto mapping = LoadModuleMapping(std::filesystem::path(GFP_HOST_TESTDATA_DIR) /
                                   "gpu-pci-module-mapping.hgx-h100.json");
  ASSERT_TRUE(mapping.ok()) << mapping.status().message();
  EXPECT_EQ(mapping->module_by_bdf.size(), 8u);
  EXPECT_EQ(mapping->ModuleOf("0000:c3:00.0"), 1u);
  EXPECT_EQ(mapping->ModuleOf("0000:1b:00.0"), 8u);
  EXPECT_EQ(mapping->ModuleOf("00000000:1B:00.0"), std::nullopt);  // lookups use canonical BDFs
  EXPECT_EQ(mapping->BdfOf(2), "0000:df:00.0");
  EXPECT_EQ(mapping->BdfOf(9), std::nullopt);
  std::vector<std::string> by_module;
  for (const auto& [module_id, bdf] : mapping->bdf_by_module) by_module.push_back(bdf);
  EXPECT_THAT(by_module,
              ElementsAre("0000:c3:00.0", "0000:df:00.0", "0000:d1:00.0", "0000:9d:00.0",
                          "0000:43:00.0", "0000:61:00.0", "0000:52:00.0", "0000:1b:00.0"));
}

TEST_F(HostModuleMapping, FakeNodeFileCoversDiscoveredGpus) {
  for (auto preset :
       {sim::NodePreset::kHgxH100, sim::NodePreset::kHgxB200, sim::NodePreset::kHgxA100x16}) {
    gfp::testing::TempDir dir;
    auto node = sim::BuildFakeNode(dir.path(), {preset, false, true, true});
    ASSERT_TRUE(node.ok());
    auto checked = LoadModuleMappingFor(node->module_mapping_file, node->GpuBdfs());
    ASSERT_TRUE(checked.ok()) << checked.status().message();
    EXPECT_TRUE(checked->warnings.empty());
    for (const auto& gpu : node->gpus) EXPECT_EQ(checked->mapping.ModuleOf(gpu.bdf), gpu.module_id);
  }
}

TEST_F(HostModuleMapping, UnreadableFile) {
  const auto path = dir_.path() / "absent.json";
  auto mapping = LoadModuleMapping(path);
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(mapping.status().message(),
            "module mapping " + path.string() + ": cannot read file: No such file or directory");
}

TEST_F(HostModuleMapping, FifoIsRefusedWithoutBlocking) {
  const auto fifo = gfp::testing::MakeFifo(dir_.path() / "mapping.fifo");
  auto mapping = gfp::testing::ReadWithFifoGuard(fifo, [&] { return LoadModuleMapping(fifo); });
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().message(),
            "module mapping " + fifo.string() + ": cannot read file: not a regular file (a FIFO)");
}

TEST_F(HostModuleMapping, UntrustedKeysAndValuesAreEscapedInMessages) {
  // A newline in the file must not start a forged line in the log.
  EXPECT_EQ(LoadError("{\"0000:1b:00.0\\n[error] forged\": \"1\"}"),
            Prefix() +
                "key \"0000:1b:00.0\\n[error] forged\": \"0000:1b:00.0\\n[error] forged\" "
                "is not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:1b:00.0)");
  EXPECT_EQ(LoadError("{\"0000:1b:00.0\": \"1\\u001b[31m\"}"),
            Prefix() + "key \"0000:1b:00.0\": module id \"1\\x1b[31m\" is not a decimal number");
}

TEST_F(HostModuleMapping, MalformedJson) {
  const std::string error = LoadError("{\"0000:1b:00.0\": \"1\",");
  EXPECT_THAT(error, HasSubstr(Prefix() + "malformed JSON: parse error at line 1, column 22"));
  EXPECT_THAT(LoadError(""), HasSubstr(Prefix() + "malformed JSON: "));
  EXPECT_THAT(LoadError("{\"0000:1b:00.0\": \"1\"} trailing"),
              HasSubstr(Prefix() + "malformed JSON: "));
}

TEST_F(HostModuleMapping, NotAnObject) {
  EXPECT_EQ(
      LoadError("[\"0000:1b:00.0\", \"1\"]"),
      Prefix() + "top level is an array, expected a JSON object {\"<BDF>\": \"<module id>\", ...}");
  EXPECT_EQ(
      LoadError("\"0000:1b:00.0\""),
      Prefix() + "top level is a string, expected a JSON object {\"<BDF>\": \"<module id>\", ...}");
  EXPECT_EQ(
      LoadError("null"),
      Prefix() + "top level is null, expected a JSON object {\"<BDF>\": \"<module id>\", ...}");
}

TEST_F(HostModuleMapping, MalformedKey) {
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "1", "GPU-1": "2"})"),
            Prefix() +
                "key \"GPU-1\": \"GPU-1\" is not a PCI address (expected DDDD:BB:DD.F, "
                "e.g. 0000:1b:00.0)");
}

TEST_F(HostModuleMapping, ValueNotADecimalString) {
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "abc"})"),
            Prefix() + "key \"0000:1b:00.0\": module id \"abc\" is not a decimal number");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "-1"})"),
            Prefix() + "key \"0000:1b:00.0\": module id \"-1\" is not a decimal number");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": " 1"})"),
            Prefix() + "key \"0000:1b:00.0\": module id \" 1\" is not a decimal number");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "0x1"})"),
            Prefix() + "key \"0000:1b:00.0\": module id \"0x1\" is not a decimal number");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": ""})"),
            Prefix() + "key \"0000:1b:00.0\": module id \"\" is empty");
}

TEST_F(HostModuleMapping, ValueNotAString) {
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": 3})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id must be a string of decimal digits, "
                "got number 3");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": 1.5})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id must be a string of decimal digits, "
                "got number 1.5");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": ["1"]})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id must be a string of decimal digits, "
                "got an array");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": {"id": "1"}})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id must be a string of decimal digits, "
                "got an object");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": null})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id must be a string of decimal digits, "
                "got null");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": true})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id must be a string of decimal digits, "
                "got true");
}

TEST_F(HostModuleMapping, ValueOutOfRange) {
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "0"})"),
            Prefix() + "key \"0000:1b:00.0\": module id \"0\" is out of range (1..4294967295)");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "4294967296"})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id \"4294967296\" is out of range "
                "(1..4294967295)");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "99999999999999999999999"})"),
            Prefix() +
                "key \"0000:1b:00.0\": module id \"99999999999999999999999\" is out of "
                "range (1..4294967295)");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "4294967295"})"), "");
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "007"})"), "");
}

TEST_F(HostModuleMapping, DuplicateModuleIds) {
  EXPECT_EQ(
      LoadError(R"({"00000000:1B:00.0": "3", "00000000:43:00.0": "3"})"),
      Prefix() + "module id 3 is given to both \"00000000:1B:00.0\" and \"00000000:43:00.0\"");
}

TEST_F(HostModuleMapping, DuplicateBdfs) {
  EXPECT_EQ(LoadError(R"({"00000000:1B:00.0": "1", "0000:1b:00.0": "2"})"),
            Prefix() + "keys \"00000000:1B:00.0\" and \"0000:1b:00.0\" both name GPU 0000:1b:00.0");
  // The same key twice: a JSON DOM would silently keep one of them.
  EXPECT_EQ(LoadError(R"({"0000:1b:00.0": "1", "0000:1b:00.0": "2"})"),
            Prefix() + "key \"0000:1b:00.0\": appears twice");
}

TEST_F(HostModuleMapping, EmptyObjectIsValidButCoversNothing) {
  ASSERT_EQ(LoadError("{}"), "");
  auto mapping = LoadModuleMapping(file_);
  const std::vector<std::string> discovered = {"0000:1b:00.0"};
  auto covered = CheckModuleMappingCovers(*mapping, discovered);
  ASSERT_FALSE(covered.ok());
  EXPECT_EQ(covered.status().code(), ErrorCode::kFailedPrecondition);
}

TEST_F(HostModuleMapping, DiscoveredGpuMissingFromFile) {
  file_ = dir_.Write("mapping.json", R"({"00000000:1B:00.0": "1"})");
  const std::vector<std::string> one_missing = {"0000:1b:00.0", "0000:43:00.0"};
  auto checked = LoadModuleMappingFor(file_, one_missing);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(checked.status().message(),
            Prefix() +
                "discovered GPU 0000:43:00.0 has no entry (no module id, so no partition "
                "can include it)");
  const std::vector<std::string> two_missing = {"0000:52:00.0", "0000:1b:00.0", "0000:43:00.0"};
  EXPECT_EQ(LoadModuleMappingFor(file_, two_missing).status().message(),
            Prefix() +
                "discovered GPUs 0000:52:00.0, 0000:43:00.0 have no entry (no module id, "
                "so no partition can include it)");
}

TEST_F(HostModuleMapping, UndiscoveredEntriesAreWarnings) {
  file_ = dir_.Write("mapping.json", R"({"00000000:1B:00.0": "1", "00000000:43:00.0": "2"})");
  const std::vector<std::string> discovered = {"0000:1b:00.0"};
  auto checked = LoadModuleMappingFor(file_, discovered);
  ASSERT_TRUE(checked.ok()) << checked.status().message();
  EXPECT_THAT(checked->warnings,
              ElementsAre(Prefix() + "GPU 0000:43:00.0 (module 2) was not discovered; entry "
                                     "ignored"));
}

TEST_F(HostModuleMapping, ParseFromTextNamesTheSource) {
  auto mapping = ParseModuleMapping(R"({"0000:1b:00.0": "x"})", "inline");
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().message(),
            "module mapping inline: key \"0000:1b:00.0\": module id \"x\" is not a decimal number");
}

}  // namespace
}  // namespace gfp::adapters::mapping
