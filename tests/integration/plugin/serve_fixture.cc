#include "integration/plugin/serve_fixture.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/fm/sim_tables.h"
#include "sim/world/world_parts.h"

namespace gfp::testing {
namespace {

// The serve flags/env the plugin reads from the environment: never inherited by accident.
const std::vector<std::string> kPluginEnv = {"ENABLE_FABRIC_MANAGER", "FABRIC_MANAGER_ADDRESS",
                                             "NVFM_LIBRARY_PATH",     "GPU_PCI_MODULE_MAPPING_PATH",
                                             "GPU_FABRIC_JOURNAL",    "GPU_FABRIC_NODE_LABELS_FILE",
                                             "GPU_FABRIC_LOG_FORMAT", "GPU_FABRIC_METRICS_ADDRESS"};

// The resource name and the variable KubeVirt reads that the Go plugin gives the node's first
// resource: its sanitized pci.ids GPU name, vGPU type or VF profile (written here from
// upstream-behaviour.md, not taken from the plugin's own naming code).
std::pair<std::string, std::string> ExpectedNames(const simworld::NodeKind& kind) {
  auto names = [](const std::string& prefix, const std::string& name) {
    return std::make_pair("nvidia.com/" + name, prefix + "_RESOURCE_NVIDIA_COM_" + name);
  };
  if (kind.vgpu) {
    switch (*kind.vgpu) {
      case sim::VgpuNodePreset::kMdevA100:  // upstream-behaviour.md §1.4, §1.10
        return names("MDEV_PCI", "GRID_A100-4C");
      case sim::VgpuNodePreset::kVfH100:  // upstream-behaviour.md §3.2
        return names("PCI", "NVIDIA_H100XM-80C");
      case sim::VgpuNodePreset::kGraceGh200:  // upstream-behaviour.md §1.3's example
        return names("PCI", "GH100_GH200_120GB___480GB");
    }
  }
  switch (kind.preset) {
    case sim::NodePreset::kHgxB200:
      return names("PCI", "GB100_B200");
    case sim::NodePreset::kHgxA100x16:
      return names("PCI", "GA100_A100_SXM4_80GB");
    case sim::NodePreset::kHgxH100:
      break;
  }
  return names("PCI", "GH100_H100_SXM5_80GB");
}

std::string Tail(const std::string& text, std::size_t max_lines) {
  std::size_t pos = text.size();
  for (std::size_t lines = 0; pos > 0 && lines <= max_lines; --pos) {
    if (text[pos - 1] == '\n') ++lines;
  }
  return pos == 0 ? text : "[...]\n" + text.substr(pos + 1);
}

}  // namespace

std::filesystem::path PluginBinary() { return GFP_PLUGIN_BINARY; }
std::filesystem::path FmSimLibrary() { return GFP_FM_SIM_LIBRARY; }

void ServeFixture::TearDown() {
  std::optional<ExitStatus> serve_exit;
  if (serve_ && serve_->Running()) {
    // A serve still running at the end must stop cleanly on SIGTERM (exit 0; under the
    // sanitizers this also catches reports at exit).
    serve_exit = serve_->Terminate(10s);
    EXPECT_TRUE(serve_exit->success())
        << "serve did not stop cleanly on SIGTERM: " << serve_exit->ToString();
  }
  const bool failed = HasFailure();
  if (kubelet_) kubelet_->Stop();
  if (!failed) return;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::ostringstream out;
  out << "\n==== scenario " << info->test_suite_name() << "." << info->name() << " failed\n"
      << "temp dir: " << dir().string()
      << (std::getenv("KEEP_TEST_DIRS") ? " (kept)" : " (rerun with KEEP_TEST_DIRS=1 to keep it)")
      << "\nrerun: integration_plugin_test --gtest_filter=" << info->test_suite_name() << "."
      << info->name() << "\n";
  if (serve_exit) out << "main serve ended with " << serve_exit->ToString() << "\n";
  for (const auto& [log, command] : logs_) {
    out << "---- " << command << "\n---- log " << log.string() << ":\n"
        << Tail(ReadFileOrEmpty(log), 300) << "\n";
  }
  if (fm_) {
    out << "---- Fabric Manager calls:\n";
    for (const auto& call : FmCallSequence()) out << "  " << call << "\n";
  }
  std::cerr << out.str() << std::flush;
}

void ServeFixture::Prepare(const ServeSetup& setup) {
  ASSERT_FALSE(dir().empty()) << "mkdtemp failed";
  setup_ = setup;
  const simworld::NodeKind kind{setup.preset, setup.vgpu_preset, setup.with_iommufd};
  const simworld::ServeSetup world = WorldSetup();
  auto parts = simworld::AssembleWorld(world, kind, 30s);
  ASSERT_TRUE(parts.ok()) << kind.Name() << ": " << parts.status().message();
  node_ = std::move(parts->node);
  fm_.emplace(std::move(parts->fabric));
  kubelet_ = std::move(parts->kubelet);
  fm_table_ = simworld::FmTableFor(kind);
  std::tie(resource_, env_key_) = ExpectedNames(kind);
  device_plugin_dir_ = world.device_plugin_dir();
  pod_resources_socket_ = world.pod_resources_socket();
  journal_ = world.journal();
  fm_state_ = world.fm_state();
}

simworld::ServeSetup ServeFixture::WorldSetup() const {
  simworld::ServeSetup world;
  world.dir = dir();
  world.fabric_manager = setup_.fabric_manager;
  world.fm_address = (dir() / "fmpm.sock").string();
  world.fm_library = FmSimLibrary();
  return world;
}

std::vector<std::string> ServeFixture::ServeArgs(
    const std::map<std::string, std::string>& overrides) const {
  // The setup's own spellings of the durations and the log level, the journal a test may have
  // moved (journal_), then the test's overrides.
  std::map<std::string, std::string> flags = {{"--reconcile-interval", setup_.reconcile_interval},
                                              {"--release-grace", setup_.release_grace},
                                              {"--log-level", setup_.log_level},
                                              {"--journal", journal_.string()}};
  for (const auto& [name, value] : overrides) flags[name] = value;
  return simworld::ServeArgs(WorldSetup(), node_, flags);
}

ProcessOptions ServeFixture::ServeOptions(const std::vector<std::string>& args,
                                          const std::string& log_name) const {
  ProcessOptions o;
  o.binary = PluginBinary();
  o.args = args;
  o.env["NVFM_SIM_STATE"] = fm_state_.string();
  o.unset_env = kPluginEnv;
  o.log_path = dir() / (log_name + ".log");
  return o;
}

std::unique_ptr<PluginProcess> ServeFixture::Spawn(const std::vector<std::string>& args,
                                                   const std::string& log_name) {
  ProcessOptions options = ServeOptions(args, log_name);
  auto process = PluginProcess::Start(options);
  EXPECT_TRUE(process.ok()) << process.status().message();
  if (!process.ok()) return nullptr;
  logs_.emplace_back(options.log_path, (*process)->CommandLine());
  return std::move(process).value();
}

void ServeFixture::StartServeProcess(const ProcessOptions& options,
                                     const std::function<std::string()>& more_context) {
  auto process = PluginProcess::Start(options);
  ASSERT_TRUE(process.ok()) << process.status().message();
  logs_.emplace_back(options.log_path, (*process)->CommandLine());
  serve_ = std::move(process).value();
  const bool registered = WaitUntil(
      [&] {
        auto r = kubelet_->Resource(resource_);
        return (r && r->connected && r->updates > 0) || !serve_->Running();
      },
      20s);
  const std::string more = more_context ? more_context() : "";
  ASSERT_TRUE(serve_->Running()) << "serve exited early: " << serve_->exit_status()->ToString()
                                 << "\n"
                                 << serve_->Log() << more;
  ASSERT_TRUE(registered) << resource_ << " did not register with the fake kubelet\n"
                          << serve_->Log() << more;
}

void ServeFixture::StartServe(bool expect_healthy,
                              const std::map<std::string, std::string>& overrides) {
  StartServeProcess(ServeOptions(ServeArgs(overrides), "serve"));
  if (::testing::Test::HasFatalFailure()) return;
  if (expect_healthy) {
    ASSERT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy"); }, 15s))
        << "devices of " << resource_ << " did not all become Healthy";
  }
}

CommandResult ServeFixture::Journal(const std::vector<std::string>& verb_args,
                                    const std::string& journal) {
  ProcessOptions o;
  o.binary = PluginBinary();
  o.args = {"journal"};
  o.args.insert(o.args.end(), verb_args.begin(), verb_args.end());
  o.args.push_back("--journal=" + (journal.empty() ? journal_.string() : journal));
  o.unset_env = kPluginEnv;
  o.log_path = dir() / ("journal-command-" + std::to_string(commands_++ % 4) + ".log");
  auto result = RunCommand(o, 60s);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : CommandResult{};
}

std::vector<nlohmann::json> ServeFixture::History(const std::string& journal) {
  CommandResult r = Journal({"history", "--format=json"}, journal);
  EXPECT_TRUE(r.status.success()) << r.command_line << ": " << r.status.ToString() << "\n"
                                  << r.output;
  std::vector<nlohmann::json> events;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON from " << r.command_line << ": " << line;
    if (!j.is_discarded()) events.push_back(std::move(j));
  }
  return events;
}

std::vector<std::string> ServeFixture::HistoryTypes(const std::string& journal) {
  std::vector<std::string> types;
  for (const auto& e : History(journal)) types.push_back(e.value("type", ""));
  return types;
}

nlohmann::json ServeFixture::State(const std::string& journal) {
  CommandResult r = Journal({"state", "--format=json"}, journal);
  EXPECT_TRUE(r.status.success()) << r.command_line << ": " << r.status.ToString() << "\n"
                                  << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

void ServeFixture::ExpectJournalVerifies(const std::string& journal) {
  CommandResult r = Journal({"verify", "--format=json"}, journal);
  EXPECT_TRUE(r.status.success()) << r.command_line << ": " << r.status.ToString() << "\n"
                                  << r.output;
}

bool ServeFixture::WaitForEvent(const std::string& type,
                                const std::function<bool(const nlohmann::json&)>& predicate,
                                std::chrono::milliseconds timeout) {
  return WaitUntil(
      [&] {
        for (const auto& e : History()) {
          if (e.value("type", "") == type && predicate(e)) return true;
        }
        return false;
      },
      timeout, 100ms);
}

std::vector<std::string> ServeFixture::PartitionBdfs(std::uint32_t partition_id) const {
  auto table = fmsim::FindTable(fm_table_);
  EXPECT_TRUE(table.ok()) << table.status().message();
  if (!table.ok()) return {};
  const fmsim::SimPartition* p = (*table)->Find(partition_id);
  EXPECT_NE(p, nullptr) << "no partition " << partition_id << " in table " << fm_table_;
  if (!p) return {};
  std::vector<std::string> out;
  for (const auto& gpu : node_.gpus) {  // PCI order
    if (std::find(p->physical_ids.begin(), p->physical_ids.end(), gpu.module_id) !=
        p->physical_ids.end()) {
      out.push_back(gpu.bdf);
    }
  }
  EXPECT_EQ(out.size(), p->physical_ids.size()) << "partition " << partition_id;
  return out;
}

std::vector<std::uint32_t> ServeFixture::PartitionsOfSize(std::size_t size) const {
  std::vector<std::uint32_t> out;
  auto table = fmsim::FindTable(fm_table_);
  if (!table.ok()) return out;
  for (const auto& p : (*table)->partitions) {
    if (p.physical_ids.size() == size) out.push_back(p.id);
  }
  return out;
}

std::vector<std::size_t> ServeFixture::PartitionSizes() const {
  std::set<std::size_t> sizes;
  auto table = fmsim::FindTable(fm_table_);
  if (table.ok()) {
    for (const auto& p : (*table)->partitions) sizes.insert(p.physical_ids.size());
  }
  return {sizes.begin(), sizes.end()};
}

std::uint32_t ServeFixture::ModuleOf(const std::string& bdf) const {
  const sim::FakeGpu* gpu = node_.FindGpu(bdf);
  return gpu ? gpu->module_id : 0;
}

std::string ServeFixture::GroupOf(const std::string& bdf) const {
  const sim::FakeGpu* gpu = node_.FindGpu(bdf);
  return gpu ? gpu->iommu_group : "";
}

std::vector<std::uint32_t> ServeFixture::ActivePartitions() const {
  auto active = fm_->ActivePartitions();
  EXPECT_TRUE(active.ok()) << active.status().message();
  if (!active.ok()) return {};
  std::vector<std::uint32_t> out = *active;
  std::sort(out.begin(), out.end());
  return out;
}

int ServeFixture::FmCalls(const std::string& function) const {
  auto log = fm_->CallLog();
  EXPECT_TRUE(log.ok()) << log.status().message();
  if (!log.ok()) return -1;
  return static_cast<int>(std::count_if(log->begin(), log->end(),
                                        [&](const auto& c) { return c.function == function; }));
}

std::vector<std::string> ServeFixture::FmCallSequence() const {
  std::vector<std::string> out;
  auto log = fm_->CallLog();
  if (!log.ok()) return {"(call log unreadable: " + log.status().message() + ")"};
  for (const auto& c : *log) {
    out.push_back(c.function + "(" + c.args + ")=" + std::to_string(c.code));
  }
  return out;
}

bool ServeFixture::WaitForDevices(
    const std::function<bool(const std::vector<v1beta1::Device>&)>& predicate,
    std::chrono::milliseconds timeout) const {
  return kubelet_->WaitForDevices(resource_, predicate, timeout);
}

bool ServeFixture::AllHealth(const std::vector<v1beta1::Device>& devices,
                             const std::string& health) {
  return !devices.empty() && std::all_of(devices.begin(), devices.end(),
                                         [&](const auto& d) { return d.health() == health; });
}

std::string ServeFixture::HealthOf(const std::vector<v1beta1::Device>& devices,
                                   const std::string& id) {
  for (const auto& d : devices) {
    if (d.id() == id) return d.health();
  }
  return "(absent)";
}

kubelet::RpcOutcome<v1beta1::AllocateResponse> ServeFixture::Allocate(
    const std::vector<std::vector<std::string>>& containers) {
  v1beta1::AllocateRequest request;
  for (const auto& ids : containers) {
    auto* c = request.add_container_requests();
    for (const auto& id : ids) c->add_devices_ids(id);
  }
  return kubelet_->Allocate(resource_, request);
}

kubelet::RpcOutcome<v1beta1::PreferredAllocationResponse> ServeFixture::Preferred(
    const std::vector<std::string>& available, const std::vector<std::string>& must_include,
    int size) {
  v1beta1::PreferredAllocationRequest request;
  auto* c = request.add_container_requests();
  for (const auto& id : available) c->add_available_deviceids(id);
  for (const auto& id : must_include) c->add_must_include_deviceids(id);
  c->set_allocation_size(size);
  return kubelet_->GetPreferredAllocation(resource_, request);
}

kubelet::RpcOutcome<v1beta1::PreStartContainerResponse> ServeFixture::PreStart(
    const std::vector<std::string>& devices) {
  v1beta1::PreStartContainerRequest request;
  for (const auto& id : devices) request.add_devices_ids(id);
  return kubelet_->PreStartContainer(resource_, request);
}

std::string ServeFixture::Describe(const grpc::Status& status) const {
  return "gRPC code " + std::to_string(static_cast<int>(status.error_code())) + ": " +
         status.error_message();
}

}  // namespace gfp::testing
