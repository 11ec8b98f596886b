// What DRA mode offers (SPEC §11) on each real partition table (sim/fm/tables, the copies of
// reference/partition-tables): the expected offers are written out by hand from the tables, and
// the greedy rule is checked again pairwise (a partition is offered exactly when no offered
// partition of its size with a smaller id shares a GPU with it) under every single and double
// degradation.
#include "statemachine/offered_partitions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace gfp::sm {
namespace {

using Table = std::map<PartitionId, PartitionState>;
using BySize = std::map<std::size_t, std::vector<PartitionId>>;

Table LoadTable(const std::string& name) {
  const std::string path = std::string(GFP_FM_TABLES_DIR) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << path;
  Table table;
  if (json.is_discarded()) return table;
  for (const auto& p : json.at("partitions")) {
    PartitionState state;
    state.id = p.at("id").get<PartitionId>();
    state.physical_ids = p.at("physical_ids").get<std::vector<ModuleId>>();
    state.max_nvlinks = p.value("max_nvlinks", 0U);
    state.nvlinks_available = p.value("nvlinks_available", 0U);
    table[state.id] = state;
  }
  return table;
}

std::vector<PartitionId> Range(PartitionId first, PartitionId last) {
  std::vector<PartitionId> ids;
  for (PartitionId id = first; id <= last; ++id) ids.push_back(id);
  return ids;
}

struct Case {
  std::string table;
  BySize offered;
  BySize left_out;
};

// Read off reference/partition-tables: on the 16-GPU tables, of the 8-GPU partitions only the
// two baseboards (1 and 2) are disjoint; the cross-board ones overlap them.
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"hgx-h100-8gpu.json", {{8, {0}}, {4, {1, 2}}, {2, Range(3, 6)}, {1, Range(7, 14)}}, {}},
      {"hgx-b200-8gpu.json", {{8, {1}}, {4, {2, 3}}, {2, Range(4, 7)}, {1, Range(8, 15)}}, {}},
      {"hgx-a100-16gpu.json",
       {{16, {0}}, {8, {1, 2}}, {4, Range(7, 10)}, {2, Range(11, 18)}, {1, Range(19, 34)}},
       {{8, {3, 4, 5, 6}}}},
      {"hgx2-16gpu.json",
       {{16, {0}}, {8, {1, 2}}, {4, Range(5, 8)}, {2, Range(9, 16)}, {1, Range(17, 32)}},
       {{8, {3, 4}}}},
  };
  return cases;
}

// The tables here hold the reference's partitions (the simulator's copies add fields of its own;
// checked when shared/reference/partition-tables is beside the checkout).
TEST(OfferedPartitions, TheTablesAreTheReferenceTables) {
  const std::string reference = GFP_REFERENCE_TABLES_DIR;
  if (reference.empty()) GTEST_SKIP() << "shared/reference/partition-tables not found";
  for (const Case& c : Cases()) {
    std::ifstream ours(std::string(GFP_FM_TABLES_DIR) + "/" + c.table);
    std::ifstream theirs(reference + "/" + c.table);
    ASSERT_TRUE(ours && theirs) << c.table;
    const auto our_json = nlohmann::json::parse(ours, nullptr, false);
    const auto their_json = nlohmann::json::parse(theirs, nullptr, false);
    ASSERT_TRUE(our_json.contains("partitions") && their_json.contains("partitions")) << c.table;
    EXPECT_EQ(our_json["partitions"], their_json["partitions"])
        << c.table << "'s partitions differ from the reference's";
  }
}

TEST(OfferedPartitions, EachRealTableOffersWhatItsLayoutAllows) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.table);
    const OfferedPartitions offer = OfferPartitions(LoadTable(c.table));
    EXPECT_EQ(offer.offered, c.offered);
    EXPECT_EQ(offer.left_out, c.left_out);
  }
}

TEST(OfferedPartitions, EveryGpuNamesTheOfferedPartitionOfEachSizeThatHoldsIt) {
  const Table table = LoadTable("hgx-a100-16gpu.json");
  const OfferedPartitions offer = OfferPartitions(table);
  ASSERT_EQ(offer.of_module.size(), 16U);
  // GPU 5 (baseboard 1): 16-GPU 0, 8-GPU 1 (not the cross-board 4 or 6), 4-GPU 8, 2-GPU 13, 23.
  const std::map<std::size_t, PartitionId> gpu5 = {{16, 0}, {8, 1}, {4, 8}, {2, 13}, {1, 23}};
  EXPECT_EQ(offer.of_module.at(5), gpu5);
  const std::map<std::size_t, PartitionId> gpu16 = {{16, 0}, {8, 2}, {4, 10}, {2, 18}, {1, 34}};
  EXPECT_EQ(offer.of_module.at(16), gpu16);
}

TEST(OfferedPartitions, DegradedOrUnsupportedPartitionsAreNeverOfferedAndFreeTheirGpus) {
  Table table = LoadTable("hgx-a100-16gpu.json");
  table.at(1).nvlinks_available = table.at(1).max_nvlinks - 1;  // board 1's 8 GPUs lost a link
  OfferedPartitions offer = OfferPartitions(table);
  // Greedy in id order: 2 is taken, and every cross-board partition overlaps it.
  EXPECT_EQ(offer.offered.at(8), (std::vector<PartitionId>{2}));
  EXPECT_EQ(offer.left_out.at(8), (std::vector<PartitionId>{3, 4, 5, 6}));
  EXPECT_EQ(offer.of_module.at(1).count(8), 0U) << "no 8-GPU partition holds GPU 1 any more";

  table = LoadTable("hgx-a100-16gpu.json");
  table.at(2).unsupported = true;
  offer = OfferPartitions(table);
  EXPECT_EQ(offer.offered.at(8), (std::vector<PartitionId>{1}));
  EXPECT_EQ(offer.left_out.at(8), (std::vector<PartitionId>{3, 4, 5, 6}));
}

TEST(OfferedPartitions, AnEmptyTableOffersNothing) {
  const OfferedPartitions offer = OfferPartitions({});
  EXPECT_TRUE(offer.offered.empty());
  EXPECT_TRUE(offer.left_out.empty());
  EXPECT_TRUE(offer.of_module.empty());
}

bool Share(const PartitionState& a, const PartitionState& b) {
  return std::any_of(a.physical_ids.begin(), a.physical_ids.end(), [&](ModuleId m) {
    return std::find(b.physical_ids.begin(), b.physical_ids.end(), m) != b.physical_ids.end();
  });
}

// The rule restated pairwise, apart from the greedy loop: P (usable) is offered iff no offered
// partition of P's size with a smaller id shares a GPU with P.
std::string BreaksTheRule(const Table& table, const OfferedPartitions& offer) {
  std::set<PartitionId> offered;
  for (const auto& [size, ids] : offer.offered) offered.insert(ids.begin(), ids.end());
  std::ostringstream why;
  for (const auto& [id, p] : table) {
    const bool usable = !p.degraded();
    bool blocked = false;
    for (const auto& [other_id, other] : table) {
      if (other_id < id && offered.count(other_id) &&
          other.physical_ids.size() == p.physical_ids.size() && Share(p, other)) {
        blocked = true;
      }
    }
    if ((usable && !blocked) != (offered.count(id) != 0)) {
      why << "partition " << id << (offered.count(id) ? " offered" : " not offered") << "; ";
    }
    if (offered.count(id)) {
      for (ModuleId m : p.physical_ids) {
        auto it = offer.of_module.find(m);
        if (it == offer.of_module.end() || it->second.count(p.physical_ids.size()) == 0 ||
            it->second.at(p.physical_ids.size()) != id) {
          why << "GPU " << m << " does not name partition " << id << "; ";
        }
      }
    }
  }
  return why.str();
}

TEST(OfferedPartitions, TheGreedyRuleHoldsUnderEverySingleAndDoubleDegradation) {
  int checked = 0;
  for (const Case& c : Cases()) {
    const Table full = LoadTable(c.table);
    for (const auto& [a, pa] : full) {
      for (const auto& [b, pb] : full) {
        if (b < a) continue;
        Table table = full;
        table.at(a).unsupported = true;
        table.at(b).nvlinks_available = 0;
        const std::string why = BreaksTheRule(table, OfferPartitions(table));
        EXPECT_EQ(why, "") << c.table << " with " << a << " unsupported, " << b << " degraded";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace gfp::sm
