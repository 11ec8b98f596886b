// Decide is deterministic across processes and builds: a few seeded scenarios (scenario.h's
// generator and runner, on the in-memory executor) are run here, and the journal each produces is
// compared with the golden one an earlier process wrote under tests/fixtures/decide-golden/. A
// golden file holds the scenario's steps digest, one line per event (its seq, type and the first
// 8 bytes of its chain hash, so a failure names the first event that differs), the number of
// events, what the scenario did, and the SHA-256 chain head the journal would store for them
// (docs/journal-format.md).
//
// When a change to Decide (or to the scenario generator: the "steps" line then differs too) is
// meant to change these journals, rewrite the golden files and commit them with the change:
//   GFP_UPDATE_GOLDEN=1 build/tests/property/statemachine/statemachine_property_tests
//   --gtest_filter='*DecideGolden*'
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memory_executor.h"
#include "scenario.h"
#include "statemachine/event_codec.h"
#include "store/hash_chain.h"

namespace gfp::testing {
namespace {

struct GoldenScenario {
  const char* name;
  int node;  // AnyNode's index: 0 H100, 1 B200, 2 A100x16
  bool fm;
  std::uint64_t seed;
};

// How gtest names a scenario in a failure.
void PrintTo(const GoldenScenario& scenario, std::ostream* os) {
  *os << scenario.name << " seed " << scenario.seed;
}

// Seeds picked so that, together, the scenarios grant, fail, restart and crash mid-saga (each
// golden file's "stats" line shows it).
constexpr GoldenScenario kScenarios[] = {
    {"h100-fm", 0, true, 11},
    {"b200-fm", 1, true, 22},
    {"a100-fm", 2, true, 3},
    {"h100-no-fm", 0, false, 5},
};
constexpr int kScenarioSize = 100;  // rapidcheck size: up to 300 steps

std::filesystem::path GoldenPath(const GoldenScenario& scenario) {
  return std::filesystem::path(GFP_SOURCE_DIR) / "tests/fixtures/decide-golden" /
         (std::string(scenario.name) + ".txt");
}

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr) != 1) return "?";
  store::Hash hash{};
  std::copy_n(digest, hash.size(), hash.begin());
  return store::HashToHex(hash);
}

// Runs the scenario in this process and words its journal as a golden file does.
Result<std::string> Regenerate(const GoldenScenario& scenario) {
  const NodeFixture node = AnyNode(scenario.node);
  const std::vector<Step> steps =
      GenScenario(node, scenario.fm)(rc::Random(scenario.seed), kScenarioSize).value();
  std::ostringstream steps_text;
  for (const Step& step : steps) {
    showValue(step, steps_text);
    steps_text << "\n";
  }
  MemoryExecutor executor;
  ScenarioRunner runner(executor, node, scenario.fm);
  GFP_RETURN_IF_ERROR(runner.Run(steps).WithContext("running the scenario"));
  GFP_ASSIGN_OR_RETURN(store::ChainHasher hasher, store::ChainHasher::Create());
  store::Hash head = store::kZeroHash;
  std::ostringstream lines;
  const auto& journal = executor.driver.journal;
  for (std::size_t i = 0; i < journal.size(); ++i) {
    const std::string type = sm::EventTypeName(journal[i]);
    GFP_ASSIGN_OR_RETURN(head, hasher.EventHash(head, i + 1, journal[i].time_unix_micros(), type,
                                                sm::EncodeEvent(journal[i])));
    lines << (i + 1) << " " << type << " " << store::ShortHex(head) << "\n";
  }
  const ScenarioStats& stats = runner.stats();
  std::ostringstream out;
  out << "# Decide's journal for one seeded scenario; see decide_golden_test.cc.\n"
      << "scenario " << scenario.name << " seed " << scenario.seed << "\n"
      << "steps " << steps.size() << " " << Sha256Hex(steps_text.str()) << "\n"
      << lines.str()  // before the totals: a difference is reported at its first event
      << "events " << journal.size() << "\n"
      << "stats grants " << stats.grants << " rejections " << stats.rejections << " restarts "
      << stats.restarts << " crashes_mid_saga " << stats.crashes_mid_saga << " drifts "
      << stats.drifts << "\n"
      << "head " << store::HashToHex(head) << "\n";
  return out.str();
}

// The first line where the two texts differ, both sides quoted; "" when equal.
std::string FirstDifference(const std::string& golden, const std::string& now) {
  std::istringstream a(golden), b(now);
  std::string left, right;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, left));
    const bool more_b = static_cast<bool>(std::getline(b, right));
    if (!more_a && !more_b) return "";
    if (!more_a) left = "<end of file>";
    if (!more_b) right = "<end of journal>";
    if (left != right || !more_a || !more_b) {
      std::string hint =
          left.starts_with("steps ") ? " (the scenario generator changed, so the steps did)" : "";
      return "line " + std::to_string(line) + hint + ": golden \"" + left + "\", now \"" + right +
             "\"";
    }
  }
}

class DecideGolden : public ::testing::TestWithParam<GoldenScenario> {};

TEST_P(DecideGolden, JournalEqualsTheOneAnEarlierProcessWrote) {
  const GoldenScenario& scenario = GetParam();
  const std::string where =
      std::string("scenario ") + scenario.name + " (seed " + std::to_string(scenario.seed) + ")";
  auto now = Regenerate(scenario);
  ASSERT_TRUE(now.ok()) << where << ": " << now.status().message();
  const std::filesystem::path path = GoldenPath(scenario);
  if (const char* update = std::getenv("GFP_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << *now;
    std::cout << "rewrote " << path.string() << "\n";
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << where << ": no golden file " << path.string()
                         << " (write it with GFP_UPDATE_GOLDEN=1)";
  const std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string difference = FirstDifference(golden, *now);
  if (!difference.empty()) {
    ADD_FAILURE() << where << ": Decide's journal differs from the golden " << path.string()
                  << " at " << difference
                  << ". If the change is intended, rewrite it with GFP_UPDATE_GOLDEN=1 (see "
                     "decide_golden_test.cc).";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeded, DecideGolden, ::testing::ValuesIn(kScenarios),
                         [](const ::testing::TestParamInfo<GoldenScenario>& param) {
                           std::string name = param.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace gfp::testing
