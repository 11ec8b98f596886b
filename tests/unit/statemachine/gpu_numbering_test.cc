// GpuNumbering: the GPUs of the module mapping numbered in module-id order, the same whether a
// module id is looked up in the table (ids below kTableBound) or by binary search (any id at or
// above it).
#include "statemachine/gpu_numbering.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace gfp::sm {
namespace {

State WithModules(const std::map<ModuleId, Bdf>& bdf_of_module) {
  State state;
  std::map<Bdf, ModuleId> module_of_bdf;
  for (const auto& [module, bdf] : bdf_of_module) module_of_bdf.emplace(bdf, module);
  state.bdf_of_module = bdf_of_module;
  state.module_of_bdf = module_of_bdf;
  return state;
}

// The numbers expected of {1, 5, last}: 0, 1, 2; every other id has none.
void ExpectNumbersOfOneFiveAnd(ModuleId last) {
  const State state =
      WithModules({{1, "0000:1b:00.0"}, {5, "0000:43:00.0"}, {last, "0000:52:00.0"}});
  const GpuNumbering numbering(state);
  SCOPED_TRACE("modules 1, 5, " + std::to_string(last));
  ASSERT_EQ(numbering.size(), 3U);
  EXPECT_EQ(numbering.OfModule(1), std::optional<std::size_t>(0));
  EXPECT_EQ(numbering.OfModule(5), std::optional<std::size_t>(1));
  EXPECT_EQ(numbering.OfModule(last), std::optional<std::size_t>(2));
  for (ModuleId absent : {0U, 2U, 4U, 6U, last - 1, last + 1, GpuNumbering::kTableBound - 1,
                          GpuNumbering::kTableBound, 0xffffffffU}) {
    if (absent == 1 || absent == 5 || absent == last) continue;
    EXPECT_EQ(numbering.OfModule(absent), std::nullopt) << "module " << absent;
  }
  EXPECT_EQ(numbering.OfBdf("0000:43:00.0"), std::optional<std::size_t>(1));
  EXPECT_EQ(numbering.OfBdf("0000:52:00.0"), std::optional<std::size_t>(2));
  EXPECT_EQ(numbering.OfBdf("0000:61:00.0"), std::nullopt);
  EXPECT_EQ(numbering.bdf(0), "0000:1b:00.0");
  EXPECT_EQ(numbering.bdf(2), "0000:52:00.0");
}

TEST(GpuNumberingTest, SmallModuleIdsAreNumberedInModuleOrder) { ExpectNumbersOfOneFiveAnd(9); }

TEST(GpuNumberingTest, TheLargestIdBelowTheTableBoundIsInTheTable) {
  ExpectNumbersOfOneFiveAnd(GpuNumbering::kTableBound - 1);
}

TEST(GpuNumberingTest, AnIdAtOrAboveTheTableBoundIsNumberedTheSame) {
  ExpectNumbersOfOneFiveAnd(GpuNumbering::kTableBound);
  ExpectNumbersOfOneFiveAnd(4'000'000'000U);
}

TEST(GpuNumberingTest, NoMappingNumbersNothing) {
  const State state;
  const GpuNumbering numbering(state);
  EXPECT_EQ(numbering.size(), 0U);
  EXPECT_EQ(numbering.OfModule(0), std::nullopt);
  EXPECT_EQ(numbering.OfModule(1), std::nullopt);
  EXPECT_EQ(numbering.OfBdf("0000:1b:00.0"), std::nullopt);
}

}  // namespace
}  // namespace gfp::sm
