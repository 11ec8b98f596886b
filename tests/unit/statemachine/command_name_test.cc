// Command names come from the command types (commands.h kName), for the engine's messages.
#include <gtest/gtest.h>

#include <set>
#include <string_view>
#include <utility>

#include "statemachine/commands.h"

namespace gfp::sm {
namespace {

template <std::size_t... I>
std::set<std::string_view> AllNames(std::index_sequence<I...>) {
  return {CommandName(Command(std::in_place_index<I>))...};
}

TEST(CommandName, IsTheTypesName) {
  EXPECT_EQ(CommandName(RequestAllocation{}), "RequestAllocation");
  EXPECT_EQ(CommandName(AbandonInterruptedRequests{}), "AbandonInterruptedRequests");
}

// A copied-and-pasted kName would give two commands one name.
TEST(CommandName, EveryCommandHasItsOwnName) {
  const auto names = AllNames(std::make_index_sequence<std::variant_size_v<Command>>());
  EXPECT_EQ(names.size(), std::variant_size_v<Command>);
  EXPECT_EQ(names.count(""), 0u);
}

}  // namespace
}  // namespace gfp::sm
