// `serve --node-labels-file` through the real binary (SPEC §8.2): the NFD feature file follows
// allocations and releases, is never seen half-written, is not rewritten when nothing changed,
// and is left in place at shutdown; bad values are refused at start.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "integration/plugin/reconcile_passes.h"
#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

namespace fs = std::filesystem;

// name -> value of the feature lines; nullopt when the text is not one whole file as the plugin
// writes it (header first, every line ended, the largest-free line last).
std::optional<std::map<std::string, std::string>> ParseLabels(const std::string& text) {
  if (text.rfind("# Written by gpu-fabric-plugin", 0) != 0 || text.back() != '\n') {
    return std::nullopt;
  }
  std::map<std::string, std::string> labels;
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    labels[line.substr(0, eq)] = line.substr(eq + 1);
    last = line.substr(0, eq);
  }
  if (last != "gpu-fabric.largest-free-partition") return std::nullopt;
  return labels;
}

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class NodeLabelsTest : public ServeFixture {
 protected:
  fs::path Labels() const { return dir() / "features.d" / "gpu-fabric"; }

  // What the file must say when the GPUs in `held` are taken: per size, the partitions none of
  // whose GPUs is held.
  std::map<std::string, std::string> Expected(const std::set<std::string>& held) const {
    std::map<std::string, std::string> labels;
    std::size_t largest = 0;
    for (std::size_t size : PartitionSizes()) {
      std::size_t free = 0;
      for (std::uint32_t id : PartitionsOfSize(size)) {
        const auto bdfs = PartitionBdfs(id);
        if (std::none_of(bdfs.begin(), bdfs.end(), [&](const auto& b) { return held.count(b); }))
          ++free;
      }
      labels["gpu-fabric.free-partitions." + std::to_string(size)] = std::to_string(free);
      if (free > 0) largest = std::max(largest, size);
    }
    labels["gpu-fabric.largest-free-partition"] = std::to_string(largest);
    return labels;
  }

  // Waits until the file says `expected`; on timeout, the test fails showing the last text.
  void ExpectLabelsBecome(const std::map<std::string, std::string>& expected) {
    std::string text;
    const bool reached = WaitUntil(
        [&] {
          text = ReadWhole(Labels());
          auto labels = ParseLabels(text);
          return labels && *labels == expected;
        },
        15s);
    std::string want;
    for (const auto& [name, value] : expected) want += name + "=" + value + "\n";
    EXPECT_TRUE(reached) << "expected:\n" << want << "file:\n" << text;
  }

  std::set<std::string> HeldBy(const kubelet::AdmittedPod& pod) const {
    std::set<std::string> held;
    for (const auto& container : pod.containers) {
      held.insert(container.device_ids.begin(), container.device_ids.end());
    }
    return held;
  }
};

// Reads the file in a loop on its own thread; every read must be one whole file.
class LabelsReader {
 public:
  explicit LabelsReader(fs::path path) : path_(std::move(path)), thread_([this] { Loop(); }) {}
  ~LabelsReader() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int reads = 0;
  std::vector<std::string> bad;    // texts that were not a whole file
  std::set<std::string> distinct;  // every whole text seen

 private:
  void Loop() {
    while (!stop_) {
      const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      std::string text;
      char buffer[512];  // small reads: a torn write would show between two of them
      for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
      ::close(fd);
      ++reads;
      if (ParseLabels(text)) {
        distinct.insert(text);
      } else if (bad.size() < 5) {
        bad.push_back(text);
      }
    }
  }
  fs::path path_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(NodeLabelsTest, FollowsAllocationsAndReleasesWholeAndIsLeftAtShutdown) {
  Prepare({.release_grace = kShortReleaseGrace});
  fs::create_directories(Labels().parent_path());
  StartServe(true, {{"--node-labels-file", Labels().string()}});
  ExpectLabelsBecome(Expected({}));

  LabelsReader reader(Labels());
  auto quad = kubelet_->AdmitPod("vms", "vm-quad", {{"compute", 4}}, resource_);
  ASSERT_TRUE(quad.ok()) << Describe(quad.status);
  std::set<std::string> held = HeldBy(quad.response);
  ExpectLabelsBecome(Expected(held));
  EXPECT_EQ(Expected(held).at("gpu-fabric.free-partitions.4"),
            std::to_string(PartitionsOfSize(4).size() - 1));

  auto pair = kubelet_->AdmitPod("vms", "vm-pair", {{"compute", 2}}, resource_);
  ASSERT_TRUE(pair.ok()) << Describe(pair.status);
  const auto pair_held = HeldBy(pair.response);
  held.insert(pair_held.begin(), pair_held.end());
  ExpectLabelsBecome(Expected(held));

  // The pods go; after --release-grace the partitions are free again.
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vm-quad"));
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vm-pair"));
  ExpectLabelsBecome(Expected({}));
  reader.Stop();
  EXPECT_TRUE(reader.bad.empty()) << reader.bad.size() << " torn reads, e.g.:\n" << reader.bad[0];
  EXPECT_GE(reader.distinct.size(), 3u) << "the reader did not see the changes";
  EXPECT_GT(reader.reads, 100);

  // Nothing changes: the file is not rewritten (a rewrite is a rename: a new inode and mtime).
  struct stat before {};
  ASSERT_EQ(::stat(Labels().c_str(), &before), 0);
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 10));  // labels are updated every loop turn
  struct stat after {};
  ASSERT_EQ(::stat(Labels().c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino) << "rewritten although no count changed";
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);

  const ExitStatus exit = serve_->Terminate(10s);
  EXPECT_TRUE(exit.success()) << exit.ToString();
  auto left = ParseLabels(ReadWhole(Labels()));
  ASSERT_TRUE(left) << "the file was not left in place at shutdown";
  EXPECT_EQ(*left, Expected({}));
  // The only entries: the file and the (empty) hidden staging folder NFD skips.
  EXPECT_TRUE(fs::is_empty(Labels().parent_path() / ".gpu-fabric-plugin-staging"));
  EXPECT_EQ(std::distance(fs::directory_iterator(Labels().parent_path()), {}), 2);
}

TEST_F(NodeLabelsTest, TheEnvironmentVariableWorksAndAWriteFailureIsNotFatal) {
  Prepare({});
  // features.d missing at first: start-up refuses that; created, then taken away while running.
  fs::create_directories(Labels().parent_path());
  ProcessOptions o = ServeOptions(ServeArgs(), "serve");
  o.env["GPU_FABRIC_NODE_LABELS_FILE"] = Labels().string();
  auto process = PluginProcess::Start(o);
  ASSERT_TRUE(process.ok()) << process.status().message();
  serve_ = std::move(process).value();
  ASSERT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy"); }, 20s))
      << serve_->Log();
  ExpectLabelsBecome(Expected({}));

  fs::remove_all(Labels().parent_path());
  auto quad = kubelet_->AdmitPod("vms", "vm-quad", {{"compute", 4}}, resource_);
  ASSERT_TRUE(quad.ok()) << Describe(quad.status) << "\n" << serve_->Log();
  EXPECT_TRUE(WaitUntil(
      [&] { return serve_->Log().find("node labels are stale") != std::string::npos; }, 10s))
      << serve_->Log();
  // Retried meanwhile (every 1 s: 12 passes 100 ms apart are more), logged once.
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 12));
  const std::string log = serve_->Log();
  std::size_t warnings = 0;
  for (auto at = log.find("node labels are stale"); at != std::string::npos;
       at = log.find("node labels are stale", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << log;
  EXPECT_TRUE(serve_->Running());

  fs::create_directories(Labels().parent_path());
  ExpectLabelsBecome(Expected(HeldBy(quad.response)));
  EXPECT_TRUE(
      WaitUntil([&] { return serve_->Log().find("written again") != std::string::npos; }, 5s));
  EXPECT_TRUE(serve_->Terminate(10s).success());
}

TEST_F(NodeLabelsTest, BadValuesAreRefusedAtStart) {
  Prepare({});
  fs::create_directories(Labels().parent_path());
  const fs::path fifo = Labels().parent_path() / "a-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path link = Labels().parent_path() / "a-link";
  fs::create_symlink(dir() / "elsewhere", link);
  const std::string label = Labels().string();
  const std::string missing = (dir() / "absent" / "gpu-fabric").string();
  const std::string longest = Labels().parent_path().string() + std::string(5000, '/') + "x";
  const std::vector<std::pair<std::map<std::string, std::string>, std::vector<std::string>>> cases =
      {
          {{{"--node-labels-file", label}, {"--fabric-manager", "false"}},
           {"--node-labels-file=" + label, "needs --fabric-manager"}},
          {{{"--node-labels-file", missing}},
           {"--node-labels-file=" + missing + ": folder", "does not exist"}},
          {{{"--node-labels-file", Labels().parent_path().string()}},
           {"not a regular file (a directory)"}},
          {{{"--node-labels-file", fifo.string()}}, {"not a regular file (a FIFO)"}},
          {{{"--node-labels-file", link.string()}}, {"is a symbolic link"}},
          {{{"--node-labels-file", (Labels().parent_path() / ".hidden").string()}},
           {"NFD ignores"}},
          {{{"--node-labels-file", longest}}, {"is too long (5"}},
          {{{"--node-labels-file", journal_.string()}}, {"the journal's own file"}},
          {{{"--node-labels-file", ""}}, {"--node-labels-file", "empty"}},
      };
  for (const auto& [overrides, needles] : cases) {
    const auto args = ServeArgs(overrides);
    auto run = RunCommand(ServeOptions(args, "refused"), 15s);
    ASSERT_TRUE(run.ok()) << run.status().message();
    SCOPED_TRACE(run->command_line);
    EXPECT_TRUE(run->status.exited && run->status.code == 2) << run->status.ToString();
    for (const auto& needle : needles) {
      EXPECT_NE(run->output.find(needle), std::string::npos) << needle << "\n" << run->output;
    }
    EXPECT_EQ(run->output.find('\n'), run->output.size() - 1) << run->output;
    EXPECT_FALSE(fs::exists(Labels()));
    EXPECT_FALSE(fs::exists(journal_)) << "a refused start created the journal";
  }
  // The environment variable set but empty is an error too, naming it.
  ProcessOptions o = ServeOptions(ServeArgs(), "refused-env");
  o.env["GPU_FABRIC_NODE_LABELS_FILE"] = "";
  auto run = RunCommand(o, 15s);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status.code, 2) << run->output;
  EXPECT_NE(run->output.find("GPU_FABRIC_NODE_LABELS_FILE"), std::string::npos) << run->output;
}

}  // namespace
}  // namespace gfp::testing
