// Keeps the docs honest: every message an operator is told to look for in a troubleshooting
// table must be one the program can print. A message is the backticked text in the first column
// of a table whose header starts with "| symptom"; "…" stands for the parts filled in at run time,
// and every fragment between them must appear literally in one and the same source file under
// src/ or sim/ (a message is put together in one place).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace gfp {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = GFP_SOURCE_DIR;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct DocMessage {
  std::string doc;
  int line = 0;
  std::string text;
};

// Backticked texts in the first column of every "| symptom | …" table of the docs.
std::vector<DocMessage> TroubleshootingMessages() {
  std::vector<DocMessage> out;
  const std::regex code("`([^`]+)`");
  for (const auto& entry : fs::directory_iterator(kRoot / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::istringstream lines(ReadAll(entry.path()));
    std::string line;
    bool in_table = false;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (line.rfind("| symptom", 0) == 0) {
        in_table = true;
        continue;
      }
      if (!in_table) continue;
      if (line.rfind("|", 0) != 0) {
        in_table = false;
        continue;
      }
      const std::string first_column = line.substr(1, line.find('|', 1) - 1);
      for (std::sregex_iterator it(first_column.begin(), first_column.end(), code), end; it != end;
           ++it) {
        out.push_back({entry.path().filename().string(), number, (*it)[1].str()});
      }
    }
  }
  return out;
}

// Every source file the program is built from (a few MB at most).
const std::vector<std::string>& AllSources() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> files;
    for (const char* dir : {"src", "sim"}) {
      for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
        const auto ext = entry.path().extension();
        if (ext == ".cc" || ext == ".h") files.push_back(ReadAll(entry.path()));
      }
    }
    return files;
  }();
  return all;
}

bool OneFileHasAll(const std::vector<std::string>& fragments) {
  for (const auto& file : AllSources()) {
    bool all = true;
    for (const auto& fragment : fragments) all = all && file.find(fragment) != std::string::npos;
    if (all) return true;
  }
  return false;
}

std::vector<std::string> LiteralFragments(const std::string& message) {
  std::vector<std::string> fragments;
  const std::string ellipsis = "\xE2\x80\xA6";
  std::size_t start = 0;
  while (start <= message.size()) {
    const std::size_t next = message.find(ellipsis, start);
    std::string piece =
        message.substr(start, next == std::string::npos ? std::string::npos : next - start);
    while (!piece.empty() && piece.front() == ' ') piece.erase(piece.begin());
    while (!piece.empty() && piece.back() == ' ') piece.pop_back();
    if (piece.size() >= 4) fragments.push_back(piece);
    if (next == std::string::npos) break;
    start = next + ellipsis.size();
  }
  return fragments;
}

TEST(DocsMessages, TheDocsHaveTroubleshootingMessages) {
  // Guards the extraction itself: an empty list would make the next test pass vacuously.
  EXPECT_GE(TroubleshootingMessages().size(), 8u);
}

TEST(DocsMessages, EveryTroubleshootingMessageIsOneTheProgramPrints) {
  for (const auto& message : TroubleshootingMessages()) {
    const auto fragments = LiteralFragments(message.text);
    EXPECT_FALSE(fragments.empty()) << message.doc << ":" << message.line << ": `" << message.text
                                    << "` has no literal text to look for";
    EXPECT_TRUE(OneFileHasAll(fragments))
        << message.doc << ":" << message.line << ": no source file under src/ or sim/ prints `"
        << message.text << "` (\"\xE2\x80\xA6\" marks the parts filled in at run time)";
  }
}

// The tests of the repository: "Suite.Name" of every TEST, TEST_F and TEST_P under tests/.
std::vector<std::string> AllTestNames() {
  std::vector<std::string> names;
  const std::regex test(R"(TEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "tests")) {
    if (entry.path().extension() != ".cc") continue;
    const std::string text = ReadAll(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), test), end; it != end; ++it) {
      names.push_back((*it)[1].str() + "." + (*it)[2].str());
    }
  }
  return names;
}

// A row of docs/recovery.md's decision table whose proof is one named test.
struct RecoveryRow {
  int line = 0;
  std::string test;  // "Name" or "Suite.Name"
};

std::vector<RecoveryRow> RecoveryRowsWithATest() {
  std::vector<RecoveryRow> rows;
  const std::regex row(R"(^\| *\d+ *\|.*\| *`(\w+(?:\.\w+)?)` *\| *$)");
  std::istringstream lines(ReadAll(kRoot / "docs" / "recovery.md"));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows.push_back({number, m[1].str()});
  }
  return rows;
}

// docs/recovery.md promises one test per row of its decision table: each one named exists.
TEST(DocsRecovery, EveryRowNamesATestThatExists) {
  const auto rows = RecoveryRowsWithATest();
  EXPECT_GE(rows.size(), 15u) << "the decision table's rows were not found";
  const auto names = AllTestNames();
  for (const auto& row : rows) {
    const bool qualified = row.test.find('.') != std::string::npos;
    const bool found = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
      return qualified ? name == row.test : name.substr(name.find('.') + 1) == row.test;
    });
    EXPECT_TRUE(found) << "docs/recovery.md:" << row.line << " names test " << row.test
                       << ", which no TEST under tests/ defines";
  }
}

}  // namespace
}  // namespace gfp
