// A claim's host files are keyed by its uid (issue 45): a claim deleted and made again under its
// name (a new uid) never shares a file with the old one, so the old one's Unprepare leaves the new
// one's files; the files a node's earlier version wrote at <ns>_<name> are rewritten at the new
// path by a repeated Prepare and removed by the Unprepare of the uid they name, and only by it;
// a uid that is no plain file name is refused before anything is written or removed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "plugin/dra/claim_file_staging.h"
#include "plugin/dra/claim_file_store.h"
#include "unit/dra/claim_files_on_disk.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ClaimFileUidTest : public ClaimFilesOnDisk {
 protected:
  void SetUp() override {
    ClaimFilesOnDisk::SetUp();
    again = claim;  // the same namespace and name, made again: a new uid, other GPUs
    again.uid = "0b9e7a41-3c2d-4e5f-8a6b-7c8d9e0f1a2b";
    again.gpus = {{"gpu0", "0000:c3:00.0", {"/dev/vfio/44", "/dev/vfio/vfio"}}};
  }
  fs::path OldFolder(const PreparedClaim& c) const {
    return dirs.plugin_dir / "dra-device-metadata" / (c.namespace_name + "_" + c.name);
  }
  // What the earlier version wrote for `c`: the same CDI spec names, its metadata folder at
  // <ns>_<name>, the metadata specs mounting from there. `requests` narrows the requests.
  void WriteOldLayout(const PreparedClaim& c, const std::vector<std::string>& requests = {}) {
    const std::string new_folder = ClaimMetadataDir(c, dirs).string();
    for (const ClaimFile& f : ClaimFiles(c, dirs)) {
      const std::string request = f.path.parent_path().filename().string();
      if (f.path.filename() == "metadata.json") {
        if (!requests.empty() &&
            std::find(requests.begin(), requests.end(), request) == requests.end()) {
          continue;
        }
        fs::create_directories(OldFolder(c) / request);
        std::ofstream(OldFolder(c) / request / "metadata.json") << f.content;
        continue;
      }
      std::string content = f.content;
      const std::string old_folder = OldFolder(c).string();
      for (auto at = content.find(new_folder); at != std::string::npos;
           at = content.find(new_folder, at + old_folder.size())) {
        content.replace(at, new_folder.size(), old_folder);
      }
      fs::create_directories(f.path.parent_path());
      std::ofstream(f.path) << content;
    }
  }
  // Every path below the temporary folder with its content ("" for a folder).
  std::map<std::string, std::string> Tree() const {
    std::map<std::string, std::string> tree;
    for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
      std::string content;
      if (entry.is_regular_file()) {
        std::ifstream in(entry.path());
        content.assign(std::istreambuf_iterator<char>(in), {});
      }
      tree[entry.path().string()] = content;
    }
    return tree;
  }

  PreparedClaim again;
};

TEST_F(ClaimFileUidTest, ANewUidOfTheSameNameKeepsItsFilesWhenTheOldOneIsRemoved) {
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  const auto again_files = ClaimFiles(again, dirs);
  ASSERT_TRUE(WriteClaimFiles(dirs, again_files).ok());
  for (const ClaimFile& f : again_files) {
    for (const ClaimFile& old : files) EXPECT_NE(f.path, old.path) << "shared by both uids";
  }
  ASSERT_TRUE(RemoveClaimFiles(dirs, ClaimPaths(claim, dirs)).ok());
  EXPECT_TRUE(ClaimFilesPresent(again_files)) << "the old uid's Unprepare removed the new one's";
  for (const ClaimFile& f : files) EXPECT_FALSE(fs::exists(f.path)) << f.path;
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());  // and the other way round
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, again).ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
}

TEST_F(ClaimFileUidTest, TheMetadataFolderIsTheUidsAndTheMountInTheVmIsUnchanged) {
  EXPECT_EQ(ClaimMetadataDir(claim, dirs), dirs.plugin_dir / "dra-device-metadata" / claim.uid);
  for (const ClaimFile& f : files) {
    if (f.path.filename() == "metadata.json") continue;
    EXPECT_EQ(f.path.parent_path(), dirs.cdi_dir);
    EXPECT_THAT(f.path.filename().string(), HasSubstr(claim.uid));
  }
  const auto spec = nlohmann::json::parse(files[2].content);
  const auto& mount = spec["devices"][0]["containerEdits"]["mounts"][0];
  EXPECT_EQ(mount["hostPath"], (ClaimMetadataDir(claim, dirs) / "gpu0/metadata.json").string());
  EXPECT_EQ(mount["containerPath"],
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpus/gpu0/"
            "gpu-fabric-plugin.io-metadata.json");
}

// A node upgraded with the claim prepared: kubelet's repeated Prepare finds the files changed and
// writes them at the uid's folder, the CDI spec mounting from there; Unprepare removes both.
TEST_F(ClaimFileUidTest, ARepeatedPrepareAfterTheUpgradeWritesTheNewLayoutAndUnprepareBoth) {
  WriteOldLayout(claim);
  EXPECT_FALSE(ClaimFilesPresent(files));
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  EXPECT_TRUE(ClaimFilesPresent(files));
  for (const ClaimFile& f : files) {
    if (f.path.filename() == "metadata.json") continue;
    EXPECT_EQ(f.content.find(OldFolder(claim).string()), std::string::npos) << f.path;
  }
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, claim).ok());
  EXPECT_FALSE(fs::exists(OldFolder(claim))) << "the earlier version's folder is left";
  EXPECT_FALSE(fs::exists(ClaimMetadataDir(claim, dirs)));
  for (const auto& entry : fs::directory_iterator(dirs.cdi_dir)) {
    EXPECT_TRUE(entry.path().filename().string().starts_with(".")) << "left: " << entry.path();
  }
}

TEST_F(ClaimFileUidTest, AnOldLayoutFolderIsRemovedByItsOwnUidOnly) {
  WriteOldLayout(claim);
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, again).ok());
  EXPECT_TRUE(fs::is_regular_file(OldFolder(claim) / "gpu0/metadata.json"));
  EXPECT_TRUE(fs::is_regular_file(OldFolder(claim) / "gpu1/metadata.json"));
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, claim).ok());
  EXPECT_FALSE(fs::exists(OldFolder(claim)));
  for (const ClaimFile& f : files) EXPECT_FALSE(fs::exists(f.path)) << f.path;
}

// The earlier version's bug left a folder of two uids (the new claim wrote over gpu0, the old
// one's gpu1 stayed): each Unprepare removes its own request folder, the last one the folder.
TEST_F(ClaimFileUidTest, AnOldFolderTwoUidsWroteIsRemovedRequestByRequest) {
  WriteOldLayout(claim, {"gpu1"});
  WriteOldLayout(again);
  fs::create_directories(OldFolder(claim) / "gpu2");
  std::ofstream(OldFolder(claim) / "gpu2/metadata.json") << "{ not json";
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, claim).ok());
  EXPECT_FALSE(fs::exists(OldFolder(claim) / "gpu1"));
  EXPECT_TRUE(fs::is_regular_file(OldFolder(claim) / "gpu0/metadata.json"));
  EXPECT_TRUE(fs::is_regular_file(OldFolder(claim) / "gpu2/metadata.json")) << "no one's: kept";
  fs::remove_all(OldFolder(claim) / "gpu2");
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, again).ok());
  EXPECT_FALSE(fs::exists(OldFolder(claim)));
}

TEST_F(ClaimFileUidTest, AUidThatIsNoPlainNameIsRefusedBeforeAnythingIsWrittenOrRemoved) {
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  fs::create_directories(dirs.plugin_dir / "keep");
  const auto before = Tree();
  for (const std::string uid : {"..", ".", "../keep", "a/b", "../../run/cdi", "x/../..", ""}) {
    PreparedClaim hostile = claim;
    hostile.uid = uid;
    EXPECT_EQ(WriteClaimFiles(dirs, ClaimFiles(hostile, dirs)).code(), ErrorCode::kInvalidArgument)
        << "uid '" << uid << "'";
    EXPECT_EQ(RemoveClaimFiles(dirs, ClaimPaths(hostile, dirs)).code(), ErrorCode::kInvalidArgument)
        << "uid '" << uid << "'";
    EXPECT_EQ(RemoveClaimFilesOf(dirs, hostile).code(), ErrorCode::kInvalidArgument)
        << "uid '" << uid << "'";
    EXPECT_EQ(StagedClaimFiles::Stage(dirs, hostile).status().code(), ErrorCode::kInvalidArgument)
        << "uid '" << uid << "'";
    EXPECT_EQ(Tree(), before) << "uid '" << uid << "'";
  }
}

// Requests are checked by the callers too; one that is no plain name is never written, and its
// claim's Unprepare still removes the rest.
TEST_F(ClaimFileUidTest, ARequestThatIsNoPlainNameIsNeverWrittenAndItsClaimIsStillRemoved) {
  ASSERT_TRUE(WriteClaimFiles(dirs, files).ok());
  const auto before = Tree();
  for (const std::string request : {"..", "../../keep", "a/b", ""}) {
    PreparedClaim odd = claim;
    odd.gpus[1].request = request;
    EXPECT_EQ(WriteClaimFiles(dirs, ClaimFiles(odd, dirs)).code(), ErrorCode::kInvalidArgument)
        << "request '" << request << "'";
    EXPECT_EQ(Tree(), before) << "request '" << request << "'";
  }
  PreparedClaim odd = claim;
  odd.gpus[1].request = "";
  ASSERT_TRUE(RemoveClaimFilesOf(dirs, odd).ok());
  EXPECT_FALSE(fs::exists(ClaimMetadataDir(claim, dirs)));
  EXPECT_FALSE(fs::exists(files[0].path));
}

}  // namespace
}  // namespace gfp::plugin::dra
