// The NFD feature file's text (SPEC §8.2): exact lines, valid label names, nothing NFD would
// read as a directive.
#include "plugin/labels/node_labels.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace gfp::plugin::labels {
namespace {

// The lines that are not comments.
std::vector<std::string> Features(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

TEST(FormatNodeLabels, OneLinePerSizeAscendingThenTheLargestFreeSize) {
  // An HGX H100 with a 2-GPU VM on GPUs 1-2: 6 singles, 3 pairs, 1 quad, no 8-GPU partition.
  const std::string text = FormatNodeLabels({{8, 0}, {1, 6}, {4, 1}, {2, 3}});
  EXPECT_EQ(Features(text), (std::vector<std::string>{
                                "gpu-fabric.free-partitions.1=6",
                                "gpu-fabric.free-partitions.2=3",
                                "gpu-fabric.free-partitions.4=1",
                                "gpu-fabric.free-partitions.8=0",
                                "gpu-fabric.largest-free-partition=4",
                            }));
  EXPECT_EQ(text.back(), '\n') << "the last line must be whole";
}

TEST(FormatNodeLabels, NothingFreeIsZeroEverywhere) {
  EXPECT_EQ(
      Features(FormatNodeLabels({{1, 0}, {2, 0}})),
      (std::vector<std::string>{"gpu-fabric.free-partitions.1=0", "gpu-fabric.free-partitions.2=0",
                                "gpu-fabric.largest-free-partition=0"}));
}

TEST(FormatNodeLabels, CommentsAreNoDirectivesAndNamesAreValidLabelNames) {
  const std::string text = FormatNodeLabels({{1, 16}, {16, 1}});
  std::istringstream in(text);
  // A Kubernetes label name (after the feature.node.kubernetes.io/ prefix): at most 63
  // characters, alphanumerics with '-', '_', '.' inside; the value: digits only here.
  const std::regex feature("([A-Za-z0-9][-A-Za-z0-9_.]{0,61}[A-Za-z0-9])=([0-9]+)");
  for (std::string line; std::getline(in, line);) {
    SCOPED_TRACE(line);
    EXPECT_EQ(line.find('\r'), std::string::npos);
    if (line.rfind("#", 0) == 0) {
      EXPECT_NE(line.rfind("# +", 0), 0u) << "nfd-worker would parse this comment as a directive";
    } else {
      EXPECT_TRUE(std::regex_match(line, feature));
    }
  }
}

TEST(FormatNodeLabels, StaysFarBelowNfdsSizeLimit) {
  std::map<std::size_t, std::size_t> many;
  for (std::size_t size = 1; size <= 64; ++size) many[size] = 1000;
  EXPECT_LT(FormatNodeLabels(many).size(), kNfdMaxFeatureFileBytes / 8);
}

}  // namespace
}  // namespace gfp::plugin::labels
