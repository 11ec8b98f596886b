#include "adapters/nvidia_smi/nvidia_smi_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gfp::adapters::nvidia_smi {
namespace {

using Mapping = std::map<std::string, std::uint32_t>;

std::string Recorded(const std::string& name) {
  std::ifstream in(std::string(GFP_NVIDIA_SMI_TESTDATA_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A small nvidia-smi -q document; `blocks` are the GPU blocks.
std::string Doc(const std::string& blocks) {
  return "\n==============NVSMI LOG==============\n\n"
         "Timestamp                                 : Mon Nov 30 09:14:02 2026\n"
         "Driver Version                            : 550.127.05\n\n"
         "Attached GPUs                             : 2\n" +
         blocks;
}

std::string Gpu(const std::string& bus_id, const std::string& module_line) {
  return "GPU " + bus_id +
         "\n"
         "    Product Name                          : NVIDIA H100 80GB HBM3\n"
         "    MIG Mode\n"
         "        Current                           : Disabled\n" +
         module_line +
         "    PCI\n"
         "        Bus Id                            : " +
         bus_id + "\n\n";
}

std::string ModuleLine(const std::string& value) {
  return "    Module ID                             : " + value + "\n";
}

TEST(NvidiaSmiParser, RecordedHgxH100GivesTheModuleIdsOfTheRealHost) {
  auto mapping = ParseNvidiaSmiModuleIds(Recorded("hgx-h100-8gpu.txt"), "h100");
  ASSERT_TRUE(mapping.ok()) << mapping.status().message();
  EXPECT_EQ(*mapping, (Mapping{{"0000:1b:00.0", 8},
                               {"0000:43:00.0", 5},
                               {"0000:52:00.0", 7},
                               {"0000:61:00.0", 6},
                               {"0000:9d:00.0", 4},
                               {"0000:c3:00.0", 1},
                               {"0000:d1:00.0", 3},
                               {"0000:df:00.0", 2}}));
}

TEST(NvidiaSmiParser, RecordedHgxA100) {
  auto mapping = ParseNvidiaSmiModuleIds(Recorded("hgx-a100-8gpu.txt"), "a100");
  ASSERT_TRUE(mapping.ok()) << mapping.status().message();
  EXPECT_EQ(*mapping, (Mapping{{"0000:07:00.0", 3},
                               {"0000:0f:00.0", 4},
                               {"0000:47:00.0", 1},
                               {"0000:4e:00.0", 2},
                               {"0000:87:00.0", 7},
                               {"0000:90:00.0", 8},
                               {"0000:b7:00.0", 5},
                               {"0000:bd:00.0", 6}}));
}

TEST(NvidiaSmiParser, CrLfLinesAndModuleIdSpelling) {
  std::string text =
      Doc(Gpu("00000000:1B:00.0", "    Module Id                             : 8\n"));
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  auto mapping = ParseNvidiaSmiModuleIds(crlf, "x");
  ASSERT_TRUE(mapping.ok()) << mapping.status().message();
  EXPECT_EQ(*mapping, (Mapping{{"0000:1b:00.0", 8}}));
}

void ExpectError(const std::string& text, const std::string& part) {
  auto mapping = ParseNvidiaSmiModuleIds(text, "/tmp/smi.txt");
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(mapping.status().message().find(part), std::string::npos) << mapping.status().message();
  EXPECT_NE(mapping.status().message().find("nvidia-smi output /tmp/smi.txt"), std::string::npos);
}

TEST(NvidiaSmiParser, ModuleIdNotAvailableNamesTheGpu) {
  ExpectError(
      Doc(Gpu("00000000:1B:00.0", ModuleLine("8")) + Gpu("00000000:43:00.0", ModuleLine("N/A"))),
      "GPU 00000000:43:00.0 (line 16): Module ID is \"N/A\", not a number");
}

TEST(NvidiaSmiParser, MissingModuleIdNamesTheGpu) {
  ExpectError(Doc(Gpu("00000000:1B:00.0", "")),
              "GPU 00000000:1B:00.0 (line 8) has no Module ID line");
}

TEST(NvidiaSmiParser, NestedModuleIdIsNotTheGpusModuleId) {
  // GB200-style "Platform Info" sections have their own "Module Id" one level deeper.
  ExpectError(Doc(Gpu("00000000:1B:00.0", "    Platform Info\n        Module Id : 3\n")),
              "has no Module ID line");
}

TEST(NvidiaSmiParser, ZeroAndHugeModuleIdsAreOutOfRange) {
  ExpectError(Doc(Gpu("00000000:1B:00.0", ModuleLine("0"))), "out of range");
  ExpectError(Doc(Gpu("00000000:1B:00.0", ModuleLine("4294967296"))), "out of range");
  ExpectError(Doc(Gpu("00000000:1B:00.0", ModuleLine("-1"))), "not a number");
}

TEST(NvidiaSmiParser, DuplicateGpuIsRefusedEvenInAnotherSpelling) {
  ExpectError(Doc(Gpu("00000000:1B:00.0", ModuleLine("1")) + Gpu("0000:1b:00.0", ModuleLine("2"))),
              "appears twice (first at line 8)");
}

TEST(NvidiaSmiParser, DuplicateModuleIdIsRefused) {
  ExpectError(
      Doc(Gpu("00000000:1B:00.0", ModuleLine("4")) + Gpu("00000000:43:00.0", ModuleLine("4"))),
      "GPU 00000000:43:00.0 (line 16) has module id 4, which GPU 0000:1b:00.0 has too");
}

TEST(NvidiaSmiParser, TwoModuleIdLinesInOneBlock) {
  ExpectError(Doc(Gpu("00000000:1B:00.0", ModuleLine("4") + ModuleLine("5"))),
              "has a second Module ID line (the first is line 12)");
}

TEST(NvidiaSmiParser, NoGpuBlockAtAll) {
  ExpectError("Failed to initialize NVML: Driver/library version mismatch\n",
              "no \"GPU 00000000:1B:00.0\" block found");
  ExpectError("", "no \"GPU 00000000:1B:00.0\" block found");
}

TEST(NvidiaSmiParser, BinaryInputIsRefused) {
  ExpectError(std::string("\x7f"
                          "ELF\x02\x01\x01\0\0\0",
                          10),
              "contains a NUL byte");
}

TEST(NvidiaSmiParser, HostileTextIsEscapedInMessages) {
  auto mapping = ParseNvidiaSmiModuleIds(Doc(Gpu("00000000:1B:00.0", ModuleLine("7\x1b[2J"))), "x");
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().message().find('\x1b'), std::string::npos);
  EXPECT_NE(mapping.status().message().find("\\x1b"), std::string::npos);
  auto header = ParseNvidiaSmiModuleIds(Doc("GPU 0000:zz:00.0\n"), "x");
  ASSERT_FALSE(header.ok());
  EXPECT_NE(
      header.status().message().find("GPU header \"0000:zz:00.0\" does not name a PCI address"),
      std::string::npos)
      << header.status().message();
}

TEST(ModuleMappingJson, SortedCanonicalOneEntryPerLine) {
  EXPECT_EQ(FormatModuleMappingJson({{"0000:c3:00.0", 1}, {"0000:1b:00.0", 8}}),
            "{\n  \"0000:1b:00.0\": \"8\",\n  \"0000:c3:00.0\": \"1\"\n}\n");
  EXPECT_EQ(FormatModuleMappingJson({}), "{}\n");
}

}  // namespace
}  // namespace gfp::adapters::nvidia_smi
