// Token-file change detection (projected tokens rotate) and the once-per-change logging of
// 401/403 answers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "adapters/apiserver/auth_failure_log.h"
#include "adapters/apiserver/token_file.h"
#include "common/temp_dir.h"
#include "unit/apiserver/log_capture.h"

namespace gfp::adapters::apiserver {
namespace {

void Write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

TEST(TokenFile, ReadsOnceWhileTheFileStaysTheSame) {
  gfp::testing::TempDir dir;
  Write(dir.path() / "token", "  first-token\n");
  TokenFile file(dir.path() / "token");
  for (int i = 0; i < 3; ++i) {
    auto token = file.Token();
    ASSERT_TRUE(token.ok()) << token.status().message();
    EXPECT_EQ(*token, "first-token");
  }
  EXPECT_EQ(file.reads(), 1);
}

TEST(TokenFile, ReadsAgainWhenTheFileIsSwappedAsKubeletRotatesIt) {
  gfp::testing::TempDir dir;
  // kubelet's projected volume: token -> ..data/token, ..data swapped to a new folder.
  std::filesystem::create_directory(dir.path() / "v1");
  std::filesystem::create_directory(dir.path() / "v2");
  Write(dir.path() / "v1" / "token", "token-one");
  Write(dir.path() / "v2" / "token", "token-two");  // same size, same second
  std::filesystem::create_directory_symlink("v1", dir.path() / "..data");
  std::filesystem::create_symlink("..data/token", dir.path() / "token");
  TokenFile file(dir.path() / "token");
  ASSERT_EQ(*file.Token(), "token-one");
  std::filesystem::create_directory_symlink("v2", dir.path() / "..data_tmp");
  std::filesystem::rename(dir.path() / "..data_tmp", dir.path() / "..data");
  auto token = file.Token();
  ASSERT_TRUE(token.ok()) << token.status().message();
  EXPECT_EQ(*token, "token-two");
  EXPECT_EQ(file.reads(), 2);
}

TEST(TokenFile, ReadsAgainWhenTheFileIsRewrittenInPlace) {
  gfp::testing::TempDir dir;
  Write(dir.path() / "token", "aaaa");
  TokenFile file(dir.path() / "token");
  ASSERT_EQ(*file.Token(), "aaaa");
  Write(dir.path() / "token", "bbbbbb");
  EXPECT_EQ(*file.Token(), "bbbbbb");
}

TEST(TokenFile, AMissingOrEmptyFileIsAnErrorNamingIt) {
  gfp::testing::TempDir dir;
  TokenFile missing(dir.path() / "nope");
  auto token = missing.Token();
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find((dir.path() / "nope").string()), std::string::npos);
  Write(dir.path() / "empty", " \n");
  TokenFile empty(dir.path() / "empty");
  token = empty.Token();
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("is empty"), std::string::npos);
}

TEST(AuthFailureLog, LogsA403OnceAtErrorLevelThenAtDebugLevelWhileItRepeats) {
  testing::LogCapture log;
  AuthFailureLog auth("https://api:6443", "kubeconfig /k");
  EXPECT_TRUE(auth.Note(Verb::kCreate, "resourceslices", 403));
  EXPECT_FALSE(auth.Note(Verb::kCreate, "resourceslices", 403));
  EXPECT_FALSE(auth.Note(Verb::kCreate, "resourceslices", 0));  // no answer: no change
  EXPECT_FALSE(auth.Note(Verb::kCreate, "resourceslices", 403));
  EXPECT_EQ(log.Count("error", "create resourceslices with 403 Forbidden: an RBAC rule is missing"),
            1)
      << log.text();
  EXPECT_EQ(log.Count("debug", "create resourceslices with 403"), 2) << log.text();
}

TEST(AuthFailureLog, LogsAgainWhenTheStatusChangesAndApartPerVerbAndResource) {
  testing::LogCapture log;
  AuthFailureLog auth("https://api:6443", "kubeconfig /k");
  EXPECT_TRUE(auth.Note(Verb::kGet, "resourceclaims", 403));
  EXPECT_TRUE(auth.Note(Verb::kGet, "resourceclaims", 401));  // 403 -> 401: a change
  EXPECT_FALSE(auth.Note(Verb::kGet, "resourceclaims", 200));
  EXPECT_TRUE(auth.Note(Verb::kGet, "resourceclaims", 401));  // fixed, then broken again
  EXPECT_TRUE(auth.Note(Verb::kList, "resourceclaims", 401));
  EXPECT_TRUE(auth.Note(Verb::kGet, "nodes", 401));
  EXPECT_EQ(log.Count("error", "401 Unauthorized"), 4) << log.text();
  EXPECT_EQ(log.Count("error", "get resourceclaims"), 3) << log.text();
}

}  // namespace
}  // namespace gfp::adapters::apiserver
