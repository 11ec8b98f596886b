// `module-mapping generate|check` through the real binary: exit codes 0 / 1 / 2, stdout holding
// only the file (generate) or the problem lines (check), every check problem once.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/sanitizer_build.h"
#include "common/temp_dir.h"
#include "process/child_process.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/node/fake_node.h"

namespace gfp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kH100Mapping =
    "{\n  \"0000:1b:00.0\": \"8\",\n  \"0000:43:00.0\": \"5\",\n  \"0000:52:00.0\": \"7\",\n"
    "  \"0000:61:00.0\": \"6\",\n  \"0000:9d:00.0\": \"4\",\n  \"0000:c3:00.0\": \"1\",\n"
    "  \"0000:d1:00.0\": \"3\",\n  \"0000:df:00.0\": \"2\"\n}\n";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path Recorded(const std::string& name) { return fs::path(GFP_NVIDIA_SMI_TESTDATA_DIR) / name; }

struct Outcome {
  int code = -1;
  std::string out;  // stdout only
  std::string err;  // stderr only
};

class ModuleMappingCli : public ::testing::Test {
 protected:
  // Runs the binary with stdin from `input` (or /dev/null), stdout and stderr kept apart.
  Outcome Mapping(std::vector<std::string> args, const std::map<std::string, std::string>& env = {},
                  const fs::path& input = "/dev/null") {
    process::ProcessOptions o;
    o.binary = "/bin/sh";
    o.args = {"-c", "exec \"$0\" module-mapping \"$@\" <\"$GFP_IN\" >\"$GFP_OUT\" 2>\"$GFP_ERR\"",
              GFP_BINARY};
    o.args.insert(o.args.end(), args.begin(), args.end());
    o.env = env;
    o.env["GFP_IN"] = input.string();
    o.env["GFP_OUT"] = (dir_.path() / "out").string();
    o.env["GFP_ERR"] = (dir_.path() / "err").string();
    o.env["NVFM_SIM_STATE"] = fm_state().string();
    o.unset_env = {"ENABLE_FABRIC_MANAGER", "FABRIC_MANAGER_ADDRESS", "NVFM_LIBRARY_PATH",
                   "GPU_PCI_MODULE_MAPPING_PATH"};
    o.log_path = dir_.path() / "log";
    auto result = process::RunCommand(o, 60s);
    EXPECT_TRUE(result.ok()) << result.status().message();
    Outcome run;
    if (!result.ok()) return run;
    EXPECT_TRUE(result->status.exited) << result->status.ToString();
    run.code = result->status.code;
    run.out = ReadFile(dir_.path() / "out");
    run.err = ReadFile(dir_.path() / "err");
    return run;
  }

  sim::FakeNode& Node(sim::NodePreset preset = sim::NodePreset::kHgxH100) {
    if (!node_) {
      sim::FakeNodeSpec spec;
      spec.preset = preset;
      auto node = sim::BuildFakeNode(dir_.path() / "node", spec);
      EXPECT_TRUE(node.ok()) << node.status().message();
      node_ = std::move(node).value();
    }
    return *node_;
  }

  void StartFm(const std::string& table) {
    auto fm = fmsim::FmSimControl::Create(fm_state().string(), table);
    ASSERT_TRUE(fm.ok()) << fm.status().message();
    fm_.emplace(std::move(fm).value());
  }

  std::vector<std::string> FmArgs() const {
    return {"--fm-address", (dir_.path() / "fmpm.sock").string(), "--fm-library",
            GFP_FM_SIM_LIBRARY};
  }

  std::vector<std::string> CheckArgs(const fs::path& file, bool with_fm = false) {
    std::vector<std::string> args = {"check", "--pci-module-mapping", file.string(), "--sysfs-root",
                                     Node().sysfs_root.string()};
    if (with_fm) {
      args.push_back("--fabric-manager");
      for (const std::string& a : FmArgs()) args.push_back(a);
    }
    return args;
  }

  fs::path fm_state() const { return dir_.path() / "fm-state.json"; }

  gfp::testing::TempDir dir_;
  std::optional<sim::FakeNode> node_;
  std::optional<fmsim::FmSimControl> fm_;
};

// ---- generate --from-nvidia-smi ----

TEST_F(ModuleMappingCli, GenerateFromRecordedH100PrintsOnlyTheFile) {
  Outcome run = Mapping({"generate", "--from-nvidia-smi", Recorded("hgx-h100-8gpu.txt").string()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, kH100Mapping);
  EXPECT_EQ(run.err, "");
}

TEST_F(ModuleMappingCli, GenerateFromStdinThenCheckIsConsistentEndToEnd) {
  Outcome run = Mapping({"generate", "--from-nvidia-smi", "-"}, {}, Recorded("hgx-h100-8gpu.txt"));
  ASSERT_EQ(run.code, 0) << run.err;
  const fs::path file = dir_.Write("mapping.json", run.out);
  Outcome check = Mapping(CheckArgs(file));
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("consistent: 8 entries"), std::string::npos) << check.out;
}

TEST_F(ModuleMappingCli, GenerateFromRecordedA100) {
  Outcome run = Mapping({"generate", "--from-nvidia-smi", Recorded("hgx-a100-8gpu.txt").string()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("\"0000:47:00.0\": \"1\""), std::string::npos) << run.out;
}

TEST_F(ModuleMappingCli, GenerateRefusesAGpuWithoutModuleId) {
  std::string text = ReadFile(Recorded("hgx-h100-8gpu.txt"));
  const std::string line = "Module ID                             : 5";
  text.replace(text.find(line), line.size(), "Module ID                             : N/A");
  Outcome run = Mapping({"generate", "--from-nvidia-smi", dir_.Write("smi.txt", text).string()});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("GPU 00000000:43:00.0 (line 124): Module ID is \"N/A\", not a number"),
            std::string::npos)
      << run.err;
}

TEST_F(ModuleMappingCli, GenerateUnreadableInputExits2) {
  Outcome missing = Mapping({"generate", "--from-nvidia-smi", (dir_.path() / "none.txt").string()});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("none.txt: No such file or directory"), std::string::npos);

  const fs::path fifo = dir_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Outcome from_fifo = Mapping({"generate", "--from-nvidia-smi", fifo.string()});
  EXPECT_EQ(from_fifo.code, 2);
  EXPECT_NE(from_fifo.err.find("not a regular file (a FIFO)"), std::string::npos) << from_fifo.err;

  const fs::path huge = dir_.path() / "huge.txt";
  std::ofstream(huge).close();
  fs::resize_file(huge, 17 * 1024 * 1024);  // sparse
  Outcome too_big = Mapping({"generate", "--from-nvidia-smi", huge.string()});
  EXPECT_EQ(too_big.code, 2);
  EXPECT_NE(too_big.err.find("larger than 16777216 bytes"), std::string::npos) << too_big.err;

  Outcome big_stdin = Mapping({"generate", "--from-nvidia-smi", "-"}, {}, huge);
  EXPECT_EQ(big_stdin.code, 2);
  EXPECT_NE(big_stdin.err.find("<stdin>: input is larger than"), std::string::npos)
      << big_stdin.err;
}

// 40,000 GPU blocks (an input far from one node's) made a mapping of more than 1 MiB, which
// `check` and serve then refused (issue 21): generate refuses to write it.
TEST_F(ModuleMappingCli, GenerateRefusesAMappingServeWouldNotRead) {
  std::string text = "==============NVSMI LOG==============\n\nAttached GPUs : 40000\n";
  for (int i = 0; i < 40000; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "%08X:%02X:%02X.0", i / 2048, (i / 8) % 256, i % 8);
    text += std::string("GPU ") + bus +
            "\n    Module ID                             : " + std::to_string(i + 1) + "\n";
  }
  Outcome run = Mapping({"generate", "--from-nvidia-smi", dir_.Write("many.txt", text).string()});
  EXPECT_EQ(run.code, 1) << run.err.substr(0, 500);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("more than the 1048576 that serve and check read; nothing written"),
            std::string::npos)
      << run.err.substr(0, 500);
}

// 16 MiB of newlines (the input cap) took 435 MB: every line was kept in a list (issue 21). The
// largest child this test binary waited for is this one (the others read a few KB).
TEST_F(ModuleMappingCli, GenerateOnNewlinesAloneStaysSmall) {
  if (gfp::testing::kSanitizerBuild) GTEST_SKIP() << "RSS bounds are for the product build";
  const std::string newlines(16 * 1024 * 1024 - 1, '\n');
  Outcome run =
      Mapping({"generate", "--from-nvidia-smi", dir_.Write("newlines.txt", newlines).string()});
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("no \"GPU 00000000:1B:00.0\" block found"), std::string::npos) << run.err;
  rusage children{};
  ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &children), 0);
  EXPECT_LT(children.ru_maxrss, 120 * 1024) << "KiB at the largest child";
}

TEST_F(ModuleMappingCli, GenerateBinaryInputIsAProblem) {
  const std::string elf(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0",
      20);
  Outcome run = Mapping({"generate", "--from-nvidia-smi", dir_.Write("a.out", elf).string()});
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("contains a NUL byte"), std::string::npos) << run.err;
}

TEST_F(ModuleMappingCli, GenerateNeedsExactlyOneSource) {
  Outcome neither = Mapping({"generate"});
  EXPECT_EQ(neither.code, 2);
  EXPECT_NE(neither.err.find("needs exactly one of --from-nvidia-smi FILE|- and "
                             "--from-fabric-manager"),
            std::string::npos);
  Outcome both = Mapping({"generate", "--from-nvidia-smi", "-", "--from-fabric-manager"});
  EXPECT_EQ(both.code, 2);
}

// ---- generate --from-fabric-manager ----

TEST_F(ModuleMappingCli, GenerateFromA100FabricManagerMatchesTheNode) {
  StartFm("a100");
  std::vector<std::string> args = {"generate", "--from-fabric-manager"};
  for (const std::string& a : FmArgs()) args.push_back(a);
  Outcome run = Mapping(args);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("\"0000:07:00.0\": \"3\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"0000:cc:00.0\": \"14\""), std::string::npos) << run.out;
  // The fake A100 node was built with the same module ids: the file checks clean, FM included.
  Node(sim::NodePreset::kHgxA100x16);
  Outcome check = Mapping(CheckArgs(dir_.Write("fm.json", run.out), /*with_fm=*/true));
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("consistent: 16 entries"), std::string::npos) << check.out;
}

TEST_F(ModuleMappingCli, GenerateFromH100FabricManagerSaysWhyNot) {
  StartFm("h100");
  std::vector<std::string> args = {"generate", "--from-fabric-manager"};
  for (const std::string& a : FmArgs()) args.push_back(a);
  Outcome run = Mapping(args);
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("Fabric Manager reports no PCI bus id for modules 1, 2, 3, 4, 5, 6, 7, 8 "
                         "(H100 and later systems leave pciBusId empty); generate the file with "
                         "--from-nvidia-smi instead"),
            std::string::npos)
      << run.err;
}

TEST_F(ModuleMappingCli, GenerateFromUnreachableFabricManagerExits2) {
  StartFm("a100");
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  std::vector<std::string> args = {"generate", "--from-fabric-manager"};
  for (const std::string& a : FmArgs()) args.push_back(a);
  Outcome run = Mapping(args);
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("cannot connect to Fabric Manager at"), std::string::npos) << run.err;

  Outcome no_library = Mapping(
      {"generate", "--from-fabric-manager", "--fm-library", (dir_.path() / "libnone.so").string()});
  EXPECT_EQ(no_library.code, 2);
  EXPECT_NE(no_library.err.find("cannot use Fabric Manager"), std::string::npos) << no_library.err;
}

// ---- check ----

TEST_F(ModuleMappingCli, CheckConsistentNodeFileWithAndWithoutFm) {
  StartFm("h100");
  Outcome plain = Mapping(CheckArgs(Node().module_mapping_file));
  EXPECT_EQ(plain.code, 0) << plain.out << plain.err;
  Outcome with_fm = Mapping(CheckArgs(Node().module_mapping_file, /*with_fm=*/true));
  EXPECT_EQ(with_fm.code, 0) << with_fm.out << with_fm.err;
  EXPECT_NE(with_fm.out.find("and 15 Fabric Manager partitions"), std::string::npos) << with_fm.out;
}

TEST_F(ModuleMappingCli, CheckMalformedJsonIsOneProblemLine) {
  const fs::path file = dir_.Write("bad.json", "{\"0000:1b:00.0\": \"8\",");
  Outcome run = Mapping(CheckArgs(file));
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  EXPECT_NE(run.out.find("bad.json: malformed JSON"), std::string::npos) << run.out;
}

TEST_F(ModuleMappingCli, CheckDuplicateModuleIdAndBadValues) {
  Outcome dup = Mapping(
      CheckArgs(dir_.Write("dup.json", "{\"0000:1b:00.0\": \"8\", \"0000:43:00.0\": \"8\"}")));
  EXPECT_EQ(dup.code, 1);
  EXPECT_NE(dup.out.find("module id 8 is given to both"), std::string::npos) << dup.out;
  Outcome bad = Mapping(CheckArgs(dir_.Write("nan.json", "{\"0000:1b:00.0\": \"N/A\"}")));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("module id \"N/A\" is not a decimal number"), std::string::npos)
      << bad.out;
}

TEST_F(ModuleMappingCli, CheckSameGpuTwiceAndNotAnObject) {
  Outcome twice = Mapping(CheckArgs(
      dir_.Write("twice.json", "{\"0000:1b:00.0\": \"8\", \"00000000:1B:00.0\": \"7\"}")));
  EXPECT_EQ(twice.code, 1);
  EXPECT_NE(
      twice.out.find("keys \"0000:1b:00.0\" and \"00000000:1B:00.0\" both name GPU 0000:1b:00.0"),
      std::string::npos)
      << twice.out;
  Outcome array = Mapping(CheckArgs(dir_.Write("array.json", "[\"0000:1b:00.0\", \"8\"]")));
  EXPECT_EQ(array.code, 1);
  EXPECT_NE(array.out.find("top level is an array"), std::string::npos) << array.out;
}

TEST_F(ModuleMappingCli, CheckUnscannableSysfsExits2) {
  const fs::path file = dir_.Write("m.json", kH100Mapping);
  Outcome run = Mapping({"check", "--pci-module-mapping", file.string(), "--sysfs-root",
                         (dir_.path() / "no-sys").string()});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("error: cannot scan sysfs " + (dir_.path() / "no-sys").string()),
            std::string::npos)
      << run.err;
}

TEST_F(ModuleMappingCli, CheckNamesEveryVfioGpuWithoutAnEntry) {
  const fs::path file = dir_.Write("six.json",
                                   "{\"0000:1b:00.0\": \"8\", \"0000:43:00.0\": \"5\", "
                                   "\"0000:52:00.0\": \"7\", \"0000:61:00.0\": \"6\", "
                                   "\"0000:9d:00.0\": \"4\", \"0000:c3:00.0\": \"1\"}");
  Outcome run = Mapping(CheckArgs(file));
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.out, "module mapping " + file.string() +
                         ": GPU 0000:d1:00.0 (on vfio-pci in sysfs) has no entry\n"
                         "module mapping " +
                         file.string() +
                         ": GPU 0000:df:00.0 (on vfio-pci in sysfs) has no entry\n");
}

TEST_F(ModuleMappingCli, CheckEntryForADeviceThatDoesNotExist) {
  std::string text = ReadFile(Node().module_mapping_file);
  text.insert(text.find('{') + 1, "\"0000:ee:00.0\": \"9\",");
  Outcome run = Mapping(CheckArgs(dir_.Write("extra.json", text)));
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.out.find(": entry 0000:ee:00.0 (module 9): no such PCI device in sysfs"),
            std::string::npos)
      << run.out;
}

TEST_F(ModuleMappingCli, CheckEntryOfAGpuOnTheNvidiaDriverIsANoteOnly) {
  ASSERT_TRUE(Node().RebindDriver("0000:1b:00.0", "nvidia").ok());
  Outcome run = Mapping(CheckArgs(Node().module_mapping_file));
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.err.find("note: module mapping " + Node().module_mapping_file.string() +
                         ": entry 0000:1b:00.0 (module 8): GPU is not on a VFIO driver"),
            std::string::npos)
      << run.err;
}

TEST_F(ModuleMappingCli, CheckAgainstFmModuleUnmappedAndModuleUnknown) {
  StartFm("h100");
  std::string text = ReadFile(Node().module_mapping_file);
  const std::string eight = "\"00000000:1B:00.0\": \"8\"";  // as the fake node writes it
  ASSERT_NE(text.find(eight), std::string::npos) << text;
  text.replace(text.find(eight), eight.size(), "\"00000000:1B:00.0\": \"9\"");
  const fs::path file = dir_.Write("nine.json", text);
  Outcome run = Mapping(CheckArgs(file, /*with_fm=*/true));
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.out, "module mapping " + file.string() +
                         ": module 8 (in Fabric Manager partitions 0, 2, 6, 14) has no entry\n"
                         "module mapping " +
                         file.string() +
                         ": entry 0000:1b:00.0 has module 9, which is in no Fabric Manager "
                         "partition\n");
}

TEST_F(ModuleMappingCli, CheckAgainstA100FmBusIdsFindsSwappedModules) {
  StartFm("a100");
  Node(sim::NodePreset::kHgxA100x16);
  std::string text = ReadFile(Node().module_mapping_file);
  // Swap modules 3 and 4 (GPUs 07 and 0f): sysfs cannot tell, FM's bus ids can.
  auto replace = [&text](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << text;
    text.replace(text.find(from), from.size(), to);
  };
  replace("\"00000000:07:00.0\": \"3\"", "\"00000000:07:00.0\": \"X\"");
  replace("\"00000000:0F:00.0\": \"4\"", "\"00000000:0F:00.0\": \"3\"");
  replace("\"00000000:07:00.0\": \"X\"", "\"00000000:07:00.0\": \"4\"");
  const fs::path file = dir_.Write("swapped.json", text);
  EXPECT_EQ(Mapping(CheckArgs(file)).code, 0);
  Outcome run = Mapping(CheckArgs(file, /*with_fm=*/true));
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.out.find(": module 3 is GPU 0000:0f:00.0 here but GPU 0000:07:00.0 in Fabric "
                         "Manager's partition table\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find(": module 4 is GPU 0000:07:00.0 here but GPU 0000:0f:00.0"),
            std::string::npos)
      << run.out;
}

TEST_F(ModuleMappingCli, CheckUnreadableFileOrFmExits2) {
  Outcome missing = Mapping(CheckArgs(dir_.path() / "none.json"));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("none.json: cannot read file: No such file or directory"),
            std::string::npos)
      << missing.err;
  const fs::path fifo = dir_.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Outcome from_fifo = Mapping(CheckArgs(fifo));
  EXPECT_EQ(from_fifo.code, 2);
  EXPECT_NE(from_fifo.err.find("not a regular file (a FIFO)"), std::string::npos) << from_fifo.err;

  StartFm("h100");
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  Outcome no_fm = Mapping(CheckArgs(Node().module_mapping_file, /*with_fm=*/true));
  EXPECT_EQ(no_fm.code, 2);
  EXPECT_NE(no_fm.err.find("cannot connect to Fabric Manager"), std::string::npos) << no_fm.err;
}

TEST_F(ModuleMappingCli, CheckEscapesHostileKeys) {
  Outcome run = Mapping(CheckArgs(dir_.Write("evil.json", "{\"0000:1b:00.0\\nforged\": \"8\"}")));
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  EXPECT_NE(run.out.find("\\nforged"), std::string::npos) << run.out;
}

TEST_F(ModuleMappingCli, CheckReadsTheEnvironmentAndRefusesAnEmptyOne) {
  Outcome from_env =
      Mapping({"check", "--sysfs-root", Node().sysfs_root.string()},
              {{"GPU_PCI_MODULE_MAPPING_PATH", Node().module_mapping_file.string()}});
  EXPECT_EQ(from_env.code, 0) << from_env.out << from_env.err;
  Outcome empty = Mapping({"check", "--sysfs-root", Node().sysfs_root.string()},
                          {{"GPU_PCI_MODULE_MAPPING_PATH", ""}});
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("GPU_PCI_MODULE_MAPPING_PATH"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace gfp
