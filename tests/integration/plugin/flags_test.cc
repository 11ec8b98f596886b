// `serve`'s flags through the real binary (SPEC §2.1, issue 8): out-of-range durations, empty
// values, the command line winning over the environment, every flag checked before anything is
// created, FIFOs refused instead of hanging, unsupported FM addresses, logs on stderr.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

namespace fs = std::filesystem;

// Everything under `root` (path -> type, size, mtime), except the logs/ folder this test writes.
std::map<std::string, std::string> TreeOf(const fs::path& root) {
  std::map<std::string, std::string> tree;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string relative = fs::relative(it->path(), root).string();
    if (relative.rfind("logs", 0) == 0) continue;
    struct stat info {};
    if (::lstat(it->path().c_str(), &info) != 0) continue;
    tree[relative] = std::to_string(info.st_mode) + " " + std::to_string(info.st_size) + " " +
                     std::to_string(info.st_mtim.tv_sec) + "." +
                     std::to_string(info.st_mtim.tv_nsec);
  }
  return tree;
}

std::string DescribeChanges(const std::map<std::string, std::string>& before,
                            const std::map<std::string, std::string>& after) {
  std::string out;
  for (const auto& [path, what] : after) {
    auto it = before.find(path);
    if (it == before.end()) out += "  created " + path + "\n";
    if (it != before.end() && it->second != what) out += "  changed " + path + "\n";
  }
  for (const auto& [path, what] : before) {
    if (!after.count(path)) out += "  removed " + path + "\n";
  }
  return out;
}

class FlagsTest : public ServeFixture {
 protected:
  void SetUp() override {
    fs::create_directories(dir() / "logs");
    fs::create_directories(dir() / "cwd");
  }

  // Runs `gpu-fabric-plugin <args>` in the empty directory cwd/ with `env` set and waits for it
  // to end. A serve that does not refuse to start is killed after `timeout` (a failure).
  CommandResult Run(const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env = {},
                    std::chrono::milliseconds timeout = 15s) {
    ProcessOptions o = ServeOptions(args, "logs/run-" + std::to_string(runs_++));
    o.binary = "/bin/sh";
    o.args = {"-c", "cd \"$1\" || exit 97; shift; exec \"$@\"", "sh", (dir() / "cwd").string(),
              PluginBinary().string()};
    o.args.insert(o.args.end(), args.begin(), args.end());
    for (const auto& [key, value] : env) o.env[key] = value;
    auto result = RunCommand(o, timeout);
    EXPECT_TRUE(result.ok()) << result.status().message();
    return result.ok() ? *result : CommandResult{};
  }

  // serve with `args` must exit 2 at once, its message containing every `needle`, and leave
  // the temp dir (node, journal folder, cwd, FM state) exactly as it was.
  void ExpectRefusedUntouched(const std::vector<std::string>& args,
                              const std::vector<std::string>& needles,
                              const std::map<std::string, std::string>& env = {}) {
    std::string joined;
    for (const auto& a : args) joined += " " + a;
    SCOPED_TRACE(joined);
    const auto before = TreeOf(dir());
    const CommandResult r = Run(args, env);
    EXPECT_TRUE(r.status.exited && r.status.code == 2) << r.status.ToString() << "\n" << r.output;
    for (const auto& needle : needles) {
      EXPECT_NE(r.output.find(needle), std::string::npos)
          << "the message does not contain \"" << needle << "\":\n"
          << r.output;
    }
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line expected:\n" << r.output;
    const auto after = TreeOf(dir());
    EXPECT_EQ(before, after) << "a refused start changed files:\n"
                             << DescribeChanges(before, after);
  }

  // ServeArgs with `name` (e.g. "--journal") replaced by the given raw arguments.
  std::vector<std::string> ArgsWith(const std::string& name, const std::vector<std::string>& raw,
                                    const std::map<std::string, std::string>& overrides = {}) {
    std::vector<std::string> args;
    for (const auto& a : ServeArgs(overrides)) {
      if (a.rfind(name + "=", 0) == 0) {
        args.insert(args.end(), raw.begin(), raw.end());
      } else {
        args.push_back(a);
      }
    }
    return args;
  }

  // Starts serve with `args` and `env` (stdout to the log, stderr to `stderr_path` when given)
  // and waits until it is registered with the kubelet.
  void StartWith(const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env, const fs::path& stderr_path = {}) {
    ProcessOptions o = ServeOptions(args, "logs/serve");
    for (const auto& [key, value] : env) o.env[key] = value;
    if (!stderr_path.empty()) {
      o.binary = "/bin/sh";
      o.args = {"-c", "err=$1; shift; exec \"$@\" 2>\"$err\"", "sh", stderr_path.string(),
                PluginBinary().string()};
      o.args.insert(o.args.end(), args.begin(), args.end());
    }
    StartServeProcess(o, [&] { return ReadFileOrEmpty(stderr_path); });
  }

  fs::path MakeFifo(const std::string& name) {
    const fs::path path = dir() / name;
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
    return path;
  }

  int runs_ = 0;
};

TEST_F(FlagsTest, DurationsBeyondTheirMaximumAreRefused) {
  Prepare({});
  struct Case {
    std::string flag, value, maximum;
  };
  const std::vector<Case> cases = {
      {"--release-grace", "9999999999999s", "720h"},
      {"--release-grace", "721h", "720h"},
      {"--release-grace", "43201m", "720h"},
      {"--release-grace", "99999999999999999999999ms", "720h"},
      {"--reconcile-interval", "9223372036854775807ms", "24h"},
      {"--reconcile-interval", "1441m", "24h"},
      {"--reconcile-interval", "153722867280912931m", "24h"},  // * 60000 overflows int64
  };
  for (const auto& c : cases) {
    ExpectRefusedUntouched(ServeArgs({{c.flag, c.value}}),
                           {c.flag + "=" + c.value, "maximum", c.maximum});
  }
  ExpectRefusedUntouched(ServeArgs({{"--reconcile-interval", "0s"}}),
                         {"--reconcile-interval", "greater than zero"});
}

TEST_F(FlagsTest, EmptyValuesAreErrorsNamingTheFlag) {
  Prepare({});
  // `--journal=` must not take the next argument (--pci-ids=...) as the journal path.
  ExpectRefusedUntouched(ServeArgs({{"--journal", ""}}), {"--journal", "empty"});
  // `--pci-ids=` must not swallow --reconcile-interval=... and fall back to the default.
  ExpectRefusedUntouched(ServeArgs({{"--pci-ids", ""}}), {"--pci-ids", "empty"});
  ExpectRefusedUntouched(ServeArgs({{"--sysfs-root", ""}}), {"--sysfs-root", "empty"});
  // Written as two arguments.
  ExpectRefusedUntouched(ArgsWith("--journal", {"--journal", ""}), {"--journal", "empty"});
  ExpectRefusedUntouched(ArgsWith("--fm-library", {"--fm-library", ""}), {"--fm-library", "empty"});
  // A bool flag: `--fabric-manager=` is not the bare flag.
  ExpectRefusedUntouched(ServeArgs({{"--fabric-manager", ""}}), {"--fabric-manager", "empty"});
  ExpectRefusedUntouched(ArgsWith("--fabric-manager", {"--fabric-manager", ""}),
                         {"--fabric-manager", "empty"});
}

TEST_F(FlagsTest, EmptyEnvironmentVariablesAreErrorsNamingTheFlag) {
  ServeSetup setup;
  setup.fabric_manager = false;
  Prepare(setup);
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "<unset>"}}),
                         {"FABRIC_MANAGER_ADDRESS", "--fm-address", "empty"},
                         {{"FABRIC_MANAGER_ADDRESS", ""}});
  ExpectRefusedUntouched(ServeArgs({{"--fm-library", "<unset>"}}),
                         {"NVFM_LIBRARY_PATH", "--fm-library", "empty"},
                         {{"NVFM_LIBRARY_PATH", ""}});
  ExpectRefusedUntouched(ServeArgs({{"--fabric-manager", "<unset>"}}),
                         {"ENABLE_FABRIC_MANAGER", "--fabric-manager", "empty"},
                         {{"ENABLE_FABRIC_MANAGER", ""}});
}

TEST_F(FlagsTest, CommandLineWinsOverEnvironment) {
  Prepare({});
  const fs::path env_journal = dir() / "env-state" / "journal.db";
  // The bare --fabric-manager means true, whatever ENABLE_FABRIC_MANAGER says; every other
  // variable points somewhere unusable, so only the flags can make this start.
  auto args = ArgsWith("--fabric-manager", {"--fabric-manager"});
  StartWith(args, {{"ENABLE_FABRIC_MANAGER", "false"},
                   {"GPU_FABRIC_JOURNAL", env_journal.string()},
                   {"FABRIC_MANAGER_ADDRESS", "not-an-address"},
                   {"NVFM_LIBRARY_PATH", (dir() / "absent.so").string()},
                   {"GPU_PCI_MODULE_MAPPING_PATH", (dir() / "absent.json").string()}});
  EXPECT_TRUE(WaitUntil([&] { return FmCalls("fmConnect") > 0; }, 10s))
      << "the bare --fabric-manager did not enable Fabric Manager";
  const ExitStatus exit = serve_->Terminate(10s);
  EXPECT_TRUE(exit.success()) << exit.ToString();
  EXPECT_TRUE(fs::exists(journal_));
  EXPECT_FALSE(fs::exists(env_journal.parent_path())) << "GPU_FABRIC_JOURNAL was used";

  // --fabric-manager=false beats ENABLE_FABRIC_MANAGER=true; an empty variable is no error
  // when the flag is given.
  const int connects = FmCalls("fmConnect");
  StartWith(ServeArgs({{"--fabric-manager", "false"}}),
            {{"ENABLE_FABRIC_MANAGER", "true"}, {"NVFM_LIBRARY_PATH", ""}});
  EXPECT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy"); }, 10s));
  EXPECT_EQ(FmCalls("fmConnect"), connects) << "ENABLE_FABRIC_MANAGER=true won over the flag";
}

TEST_F(FlagsTest, BadFlagsAreRefusedBeforeAnythingIsCreated) {
  Prepare({});
  const fs::path regular = dir() / "regular-file";
  std::ofstream(regular) << "x";
  const fs::path folder = dir() / "a-folder";
  fs::create_directories(folder);
  const std::string missing = (dir() / "missing").string();
  const std::string journal_dir = (dir() / "journal-dir").string();
  fs::create_directories(journal_dir);

  const std::vector<std::pair<std::map<std::string, std::string>, std::vector<std::string>>> cases =
      {
          {{{"--sysfs-root", missing}}, {"--sysfs-root=" + missing, "does not exist"}},
          {{{"--sysfs-root", regular.string()}}, {"--sysfs-root", "not a directory"}},
          {{{"--dev-root", missing}}, {"--dev-root=" + missing, "does not exist"}},
          {{{"--pci-ids", missing}}, {"--pci-ids=" + missing, "does not exist"}},
          {{{"--pci-ids", folder.string()}}, {"--pci-ids", "not a regular file (a directory)"}},
          {{{"--journal", journal_dir}}, {"--journal", "not a regular file (a directory)"}},
          {{{"--journal", (regular / "journal.db").string()}},
           {"--journal", regular.string(), "not a directory"}},
          {{{"--pci-module-mapping", missing}}, {"--pci-module-mapping", "does not exist"}},
          {{{"--pci-module-mapping", folder.string()}},
           {"--pci-module-mapping", "not a regular file (a directory)"}},
          {{{"--fm-library", missing + "/libnvfm.so.1"}}, {"--fm-library", "does not exist"}},
          {{{"--fm-library", folder.string()}}, {"--fm-library", "not a regular file"}},
          {{{"--fm-address", "fm.example.com"}}, {"--fm-address", "fm.example.com"}},
          {{{"--fabric-manager", "yes"}}, {"--fabric-manager=yes"}},
          {{{"--release-grace", "5 s"}}, {"--release-grace"}},
      };
  for (const auto& [overrides, needles] : cases) {
    ExpectRefusedUntouched(ServeArgs(overrides), needles);
  }
  // Without --fabric-manager, the FM files are not needed.
  setup_.fabric_manager = false;
  StartWith(ServeArgs({{"--pci-module-mapping", missing}, {"--fm-library", missing + "/x.so"}}),
            {});
}

TEST_F(FlagsTest, FifosAreRefusedInsteadOfHanging) {
  Prepare({});
  const std::string fifo = MakeFifo("a-fifo").string();
  for (const std::string flag :
       {"--pci-ids", "--pci-module-mapping", "--fm-library", "--journal"}) {
    ExpectRefusedUntouched(ServeArgs({{flag, fifo}}),
                           {flag + "=" + fifo, "is not a regular file (a FIFO)"});
  }
}

TEST_F(FlagsTest, Ipv6AndHostileFmAddressesAreRefusedClearly) {
  Prepare({});
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "[::1]:6666"}}),
                         {"--fm-address", "[::1]:6666", "IPv6", "does not support"});
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "::1"}}), {"IPv6", "does not support"});
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", ":6666"}}), {"--fm-address", "no host"});
  // A host name: the SDK takes only IPv4 or a socket path, and names no resolver.
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "fm.example"}}),
                         {"--fm-address", "\"fm.example\" is not an IPv4 address"});
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "1.2.3.4:0"}}), {"port", "1..65535"});
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "1.2.3.4:70000"}}), {"port", "1..65535"});
  // A control character is echoed escaped, not as a second line.
  ExpectRefusedUntouched(ServeArgs({{"--fm-address", "1.2.3.4\nforged line"}}),
                         {"1.2.3.4\\nforged line"});
}

// A node with nothing to serve still starts (the DaemonSet runs on every GPU node, also before
// the GPU Operator binds vfio-pci), and the log says what is missing: no device on a VFIO driver,
// and /dev/vfio not there to watch.
TEST_F(FlagsTest, NodeWithoutVfioDevicesStartsAndTheLogSaysWhatIsMissing) {
  ServeSetup setup;
  setup.fabric_manager = false;
  Prepare(setup);
  for (const auto& bdf : node_.GpuBdfs()) ASSERT_TRUE(node_.RebindDriver(bdf, "nvidia").ok());
  fs::remove_all(node_.dev_root / "vfio");
  auto bare = Spawn(ServeArgs({{"--fabric-manager", "false"}}), "logs/bare");
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->WaitForLog("no NVIDIA device to serve under " + node_.sysfs_root.string() +
                                   " (no GPU on a VFIO driver, no vGPU VF, no mdev)",
                               10s))
      << bare->Log();
  EXPECT_TRUE(bare->WaitForLog("cannot watch " + (node_.dev_root / "vfio").string() +
                                   " for VFIO group changes; relying on periodic checks",
                               10s))
      << bare->Log();
  EXPECT_TRUE(bare->Running()) << bare->Log();
  EXPECT_TRUE(bare->Terminate(10s).success()) << bare->Log();
}

TEST_F(FlagsTest, LogsGoToStderrAndNothingToStdout) {
  Prepare({});
  const fs::path stderr_path = dir() / "logs" / "serve.stderr";
  StartWith(ServeArgs(), {}, stderr_path);
  const ExitStatus exit = serve_->Terminate(10s);
  EXPECT_TRUE(exit.success()) << exit.ToString();
  const std::string err = ReadFileOrEmpty(stderr_path);
  EXPECT_NE(err.find("stopped cleanly"), std::string::npos) << err;
  EXPECT_NE(err.find("[info]"), std::string::npos) << err;
  EXPECT_NE(err.find("[debug]"), std::string::npos) << "--log-level=debug printed no debug line";
  EXPECT_EQ(serve_->Log(), "") << "serve wrote to stdout";

  // The journal verbs: their output on stdout, nothing else.
  ProcessOptions o =
      ServeOptions({"journal", "verify", "--journal=" + journal_.string()}, "logs/verify");
  o.binary = "/bin/sh";
  o.args = {"-c",     "exec \"$@\" 2>/dev/null",       "sh", PluginBinary().string(), "journal",
            "verify", "--journal=" + journal_.string()};
  auto verify = RunCommand(o);
  ASSERT_TRUE(verify.ok()) << verify.status().message();
  EXPECT_TRUE(verify->status.success()) << verify->output;
  EXPECT_NE(verify->output.find("is intact"), std::string::npos) << verify->output;
}

}  // namespace
}  // namespace gfp::testing
