// The simulated FM's call log is trimmed by streaming the file (KeepLastLines), not by holding the
// log: the simulator runs inside serve, and the soak benchmark measures serve's memory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/temp_dir.h"
#include "sim/fm/call_log_file.h"
#include "sim/fm/sim_state.h"

namespace gfp::fmsim {
namespace {

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteAll(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

class CallLogFileTest : public ::testing::Test {
 protected:
  gfp::testing::TempDir dir_;
  std::filesystem::path log_ = dir_.path() / "state.calls";
};

TEST_F(CallLogFileTest, KeepsTheLastLinesInOrder) {
  std::string text;
  for (int i = 0; i < 25; ++i) text += "call " + std::to_string(i) + "\n";
  WriteAll(log_, text);
  auto kept = KeepLastLines(log_.string(), 10);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(*kept, 10u);
  EXPECT_EQ(ReadAll(log_), text.substr(text.find("call 15\n")));
  EXPECT_FALSE(std::filesystem::exists(log_.string() + ".tmp"));
}

TEST_F(CallLogFileTest, ALogWithinTheLimitIsLeftAsItIs) {
  WriteAll(log_, "a\nb\nc\n");
  struct stat before {};
  ASSERT_EQ(::stat(log_.c_str(), &before), 0);
  auto kept = KeepLastLines(log_.string(), 5);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, 3u);
  EXPECT_EQ(ReadAll(log_), "a\nb\nc\n");
  struct stat after {};
  ASSERT_EQ(::stat(log_.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the log was rewritten";
}

TEST_F(CallLogFileTest, LinesLongerThanTheBufferAreCopiedWhole) {
  std::string lines[5];
  for (int i = 0; i < 5; ++i)
    lines[i] = std::string(100'000 + i, static_cast<char>('a' + i)) + "\n";
  WriteAll(log_, lines[0] + lines[1] + lines[2] + lines[3] + lines[4]);
  auto kept = KeepLastLines(log_.string(), 2);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, 2u);
  EXPECT_TRUE(ReadAll(log_) == lines[3] + lines[4]) << "kept " << ReadAll(log_).size() << " bytes";
}

TEST_F(CallLogFileTest, AnUnfinishedLastLineCountsAndIsKept) {
  WriteAll(log_, "a\nb\nc");
  auto kept = KeepLastLines(log_.string(), 2);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, 2u);
  EXPECT_EQ(ReadAll(log_), "b\nc");
}

TEST_F(CallLogFileTest, AMissingLogIsAnErrorNamingIt) {
  auto kept = KeepLastLines(log_.string(), 2);
  ASSERT_FALSE(kept.ok());
  EXPECT_NE(kept.status().message().find(log_.string()), std::string::npos)
      << kept.status().message();
}

// Commit trims a log past twice the limit to the newest kCallLogLimit calls, oldest first.
TEST_F(CallLogFileTest, CommitTrimsTheStateFilesLogToTheNewestCalls) {
  const std::string state = (dir_.path() / "state").string();
  ASSERT_TRUE(LockedState::Initialise(state, SimState{}).ok());
  auto locked = LockedState::Acquire(state);
  ASSERT_TRUE(locked.ok()) << locked.status().message();
  const std::size_t calls = 2 * kCallLogLimit + 1;
  for (std::size_t i = 0; i < calls; ++i) {
    locked->AppendCall({"fmActivateFabricPartition", std::to_string(i), 0, 0, 1, {}, ""});
  }
  ASSERT_TRUE(locked->Commit().ok());
  EXPECT_EQ(locked->state().call_log_lines, kCallLogLimit);
  auto log = locked->ReadCallLog();
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->size(), kCallLogLimit);
  EXPECT_EQ(log->front().args, std::to_string(calls - kCallLogLimit));
  EXPECT_EQ(log->back().args, std::to_string(calls - 1));
}

}  // namespace
}  // namespace gfp::fmsim
