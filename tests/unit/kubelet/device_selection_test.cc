#include "sim/kubelet/device_selection.h"

#include <gtest/gtest.h>

namespace gfp::kubelet {
namespace {

using Ids = std::vector<std::string>;

TEST(KubeletDeviceSelection, TakesValidAdviceInItsOrder) {
  const Ids preferred = {"d3", "d1"};
  EXPECT_EQ(ChooseDevices({"d0", "d1", "d2", "d3"}, 2, &preferred), (Ids{"d3", "d1"}));
}

TEST(KubeletDeviceSelection, IgnoresUnknownAndDuplicateAdviceAndFillsUp) {
  const Ids preferred = {"bogus", "d2", "d2"};
  EXPECT_EQ(ChooseDevices({"d0", "d1", "d2", "d3"}, 3, &preferred), (Ids{"d2", "d0", "d1"}));
}

TEST(KubeletDeviceSelection, TrimsTooLongAdvice) {
  const Ids preferred = {"d1", "d2", "d3"};
  EXPECT_EQ(ChooseDevices({"d0", "d1", "d2", "d3"}, 2, &preferred), (Ids{"d1", "d2"}));
}

TEST(KubeletDeviceSelection, WithoutAdviceTakesTheFirstAvailable) {
  EXPECT_EQ(ChooseDevices({"d0", "d1", "d2"}, 2, nullptr), (Ids{"d0", "d1"}));
}

}  // namespace
}  // namespace gfp::kubelet
