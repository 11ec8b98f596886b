// The migrations runner: embedded files are in sequence, gaps and disorder are refused, and each
// migration is all-or-nothing.
#include <gtest/gtest.h>

#include <array>

#include "journal_test_util.h"
#include "store/migrations.h"

namespace gfp::store {
namespace {

using testing::RawDb;
using testing::TempDir;

TEST(JournalMigrationsTest, EmbeddedMigrationsAreInSequenceAndMatchTheLatestVersion) {
  const auto migrations = EmbeddedMigrations();
  ASSERT_EQ(migrations.size(), static_cast<std::size_t>(Journal::kLatestSchemaVersion));
  EXPECT_TRUE(ValidateMigrationSequence(migrations).ok());
  EXPECT_EQ(migrations[0].name, "initial");
  EXPECT_NE(migrations[0].sql.find("CREATE TABLE events"), std::string_view::npos);
  EXPECT_NE(migrations[0].sql.find("CREATE TABLE snapshots"), std::string_view::npos);
}

TEST(JournalMigrationsTest, GapsDuplicatesAndDisorderAreRefusedNamingTheFile) {
  const std::array<Migration, 2> gap = {Migration{1, "a", "SELECT 1"},
                                        Migration{3, "c", "SELECT 1"}};
  const Status g = ValidateMigrationSequence(gap);
  EXPECT_FALSE(g.ok());
  EXPECT_NE(g.message().find("0003_c.sql"), std::string::npos) << g.message();

  const std::array<Migration, 2> dup = {Migration{1, "a", ""}, Migration{1, "b", ""}};
  EXPECT_FALSE(ValidateMigrationSequence(dup).ok());
  const std::array<Migration, 2> disorder = {Migration{2, "b", ""}, Migration{1, "a", ""}};
  EXPECT_FALSE(ValidateMigrationSequence(disorder).ok());
  EXPECT_FALSE(ValidateMigrationSequence({}).ok());
}

TEST(JournalMigrationsTest, EachMigrationCommitsWithItsVersionAndAFailingOneLeavesNoTrace) {
  TempDir dir;
  const auto path = dir / "m.db";
  RawDb raw(path, /*create=*/true);
  const std::array<Migration, 3> migrations = {
      Migration{1, "one", "CREATE TABLE a(x INTEGER);"},
      Migration{2, "two", "CREATE TABLE b(x INTEGER);"},
      Migration{3, "broken", "CREATE TABLE c(x INTEGER); THIS IS NOT SQL;"},
  };
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  const Status s = ApplyMigrations(db, migrations, 0, path);
  sqlite3_close(db);
  ASSERT_FALSE(s.ok()) << "a broken migration was applied";
  EXPECT_NE(s.message().find("0003_broken.sql"), std::string::npos) << s.message();
  EXPECT_EQ(raw.QueryInt("PRAGMA user_version"), 2);
  EXPECT_EQ(raw.QueryInt("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'b'"), 1);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'c'"), 0)
      << "the failed migration left a table behind";
}

TEST(JournalMigrationsTest, AlreadyAppliedMigrationsAreSkipped) {
  TempDir dir;
  const auto path = dir / "m.db";
  RawDb raw(path, /*create=*/true);
  ASSERT_EQ(raw.Exec("PRAGMA user_version = 1"), SQLITE_OK);
  const std::array<Migration, 2> migrations = {
      Migration{1, "one", "THIS WOULD FAIL IF RUN;"},
      Migration{2, "two", "CREATE TABLE b(x INTEGER);"},
  };
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  const Status s = ApplyMigrations(db, migrations, 1, path);
  sqlite3_close(db);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(raw.QueryInt("PRAGMA user_version"), 2);
}

}  // namespace
}  // namespace gfp::store
