// `serve --log-format json` through the real binary (SPEC §2.1, issue 9): every line the process
// writes is one JSON object, gRPC's and protobuf's own lines included; the lines about an
// allocation carry its id and partition, the release lines its pod; GPU_FABRIC_LOG_FORMAT is
// read from the environment; start-up errors are JSON once the format is known.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

using Json = nlohmann::json;

// Every line of `log` as JSON; a line that is not one JSON object fails the test.
std::vector<Json> JsonLines(const std::string& log) {
  std::vector<Json> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    Json json = Json::parse(line, nullptr, false);
    EXPECT_TRUE(!json.is_discarded() && json.is_object()) << "not a JSON object: " << line;
    if (json.is_discarded() || !json.is_object()) continue;
    EXPECT_TRUE(json["time"].is_string() && json["level"].is_string() && json["msg"].is_string())
        << line;
    lines.push_back(std::move(json));
  }
  return lines;
}

// The lines whose message starts with `prefix`.
std::vector<Json> Starting(const std::vector<Json>& lines, const std::string& prefix) {
  std::vector<Json> out;
  std::copy_if(lines.begin(), lines.end(), std::back_inserter(out),
               [&](const Json& j) { return j.value("msg", "").rfind(prefix, 0) == 0; });
  return out;
}

class LogFormatTest : public ServeFixture {
 protected:
  // Starts serve with `overrides` and `env` and waits until it is registered with the kubelet.
  void StartWithEnv(const std::map<std::string, std::string>& overrides,
                    const std::map<std::string, std::string>& env) {
    ProcessOptions o = ServeOptions(ServeArgs(overrides), "serve");
    for (const auto& [key, value] : env) o.env[key] = value;
    StartServeProcess(o);
  }

  CommandResult RunServe(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {}) {
    ProcessOptions o = ServeOptions(args, "refused-" + std::to_string(runs_++));
    for (const auto& [key, value] : env) o.env[key] = value;
    auto result = RunCommand(o, 15s);
    EXPECT_TRUE(result.ok()) << result.status().message();
    return result.ok() ? *result : CommandResult{};
  }

  int runs_ = 0;
};

TEST_F(LogFormatTest, JsonLinesCarryTheAllocationPartitionAndPod) {
  Prepare(
      {.release_grace = kShortReleaseGrace});  // --log-level=debug, reconcile 100ms, grace 300ms
  // GRPC_VERBOSITY=debug: gRPC's own lines must be JSON too.
  StartWithEnv({{"--log-format", "json"}}, {{"GRPC_VERBOSITY", "debug"}});
  auto admitted = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  ASSERT_EQ(ActivePartitions().size(), 1u);
  const std::uint32_t pid = ActivePartitions()[0];
  ASSERT_TRUE(WaitForEvent(
      "AllocationBound", [](const auto& e) { return e.dump().find("vm-a") != std::string::npos; },
      10s));
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vm-a"));
  ASSERT_TRUE(WaitUntil([&] { return ActivePartitions().empty(); }, 10s));
  ASSERT_TRUE(WaitForEvent(
      "PartitionDeactivated", [](const auto&) { return true; }, 10s));
  // An id that is not UTF-8: protobuf refuses to parse the request and says so in the log.
  auto refused = Allocate({{"0000:1b:00.0\xff\xfe"}});
  EXPECT_FALSE(refused.ok());
  const ExitStatus exit = serve_->Terminate(10s);
  EXPECT_TRUE(exit.success()) << exit.ToString();

  const std::vector<Json> lines = JsonLines(serve_->Log());
  ASSERT_FALSE(lines.empty());
  EXPECT_FALSE(Starting(lines, "stopped cleanly").empty());

  const auto allocated = Starting(lines, "allocated ");
  ASSERT_EQ(allocated.size(), 1u) << serve_->Log();
  const std::string allocation_id = allocated[0].value("allocation_id", "");
  EXPECT_EQ(allocation_id.rfind("alloc-", 0), 0u) << allocated[0].dump();
  EXPECT_EQ(allocated[0].value("partition_id", -1), static_cast<int>(pid)) << allocated[0].dump();

  const auto activated = Starting(lines, "Fabric Manager activate partition");
  ASSERT_FALSE(activated.empty()) << serve_->Log();
  for (const auto& line : activated) {
    EXPECT_EQ(line.value("allocation_id", ""), allocation_id) << line.dump();
    EXPECT_EQ(line.value("partition_id", -1), static_cast<int>(pid)) << line.dump();
    EXPECT_EQ(line.value("fm_code", ""), "FM_ST_SUCCESS") << line.dump();
  }

  const auto released = Starting(lines, "releasing " + allocation_id);
  ASSERT_EQ(released.size(), 1u) << serve_->Log();
  EXPECT_EQ(released[0].value("pod", ""), "vms/vm-a") << released[0].dump();
  EXPECT_EQ(released[0].value("allocation_id", ""), allocation_id) << released[0].dump();
  EXPECT_EQ(released[0].value("partition_id", -1), static_cast<int>(pid)) << released[0].dump();
  const auto deactivated = Starting(lines, "Fabric Manager deactivate partition");
  ASSERT_FALSE(deactivated.empty()) << serve_->Log();
  EXPECT_EQ(deactivated[0].value("pod", ""), "vms/vm-a") << deactivated[0].dump();
  EXPECT_EQ(deactivated[0].value("partition_id", -1), static_cast<int>(pid));

  // Lines about nothing in particular carry no allocation.
  for (const auto& line : Starting(lines, "serving ")) {
    EXPECT_FALSE(line.contains("allocation_id")) << line.dump();
  }
  const auto from = [&](const std::string& logger) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const Json& j) { return j.value("logger", "") == logger; });
  };
  EXPECT_GT(from("grpc"), 0) << "no line of gRPC's own";
  EXPECT_GT(from("protobuf"), 0) << "protobuf did not log the id that is not UTF-8";
}

TEST_F(LogFormatTest, EnvironmentSelectsJsonAndTheCommandLineWins) {
  Prepare({});
  StartWithEnv({}, {{"GPU_FABRIC_LOG_FORMAT", "json"}});
  EXPECT_TRUE(serve_->Terminate(10s).success());
  const auto lines = JsonLines(serve_->Log());
  EXPECT_FALSE(Starting(lines, "stopped cleanly").empty()) << serve_->Log();

  StartWithEnv({{"--log-format", "text"}}, {{"GPU_FABRIC_LOG_FORMAT", "json"}});
  EXPECT_TRUE(serve_->Terminate(10s).success());
  EXPECT_NE(serve_->Log().find("] [info] stopped cleanly"), std::string::npos) << serve_->Log();
}

TEST_F(LogFormatTest, StartupErrorsAreJsonOnceTheFormatIsKnown) {
  Prepare({});
  CommandResult r = RunServe(ServeArgs({{"--log-format", "json"}, {"--fm-address", "fm.example"}}));
  EXPECT_TRUE(r.status.exited && r.status.code == 2) << r.status.ToString();
  auto lines = JsonLines(r.output);
  ASSERT_EQ(lines.size(), 1u) << r.output;
  EXPECT_EQ(lines[0]["level"], "error");
  EXPECT_NE(lines[0].value("msg", "").find("--fm-address"), std::string::npos) << r.output;

  r = RunServe(ServeArgs({{"--fm-address", "fm.example"}}), {{"GPU_FABRIC_LOG_FORMAT", "json"}});
  EXPECT_TRUE(r.status.exited && r.status.code == 2) << r.status.ToString();
  EXPECT_EQ(JsonLines(r.output).size(), 1u) << r.output;

  // Command-line errors found before the flags are parsed, or by the parser itself.
  const std::map<std::string, std::string> json_env = {{"GPU_FABRIC_LOG_FORMAT", "json"}};
  for (const auto& [args, env] :
       std::vector<std::pair<std::vector<std::string>, std::map<std::string, std::string>>>{
           {ServeArgs({{"--log-format", "json"}, {"--no-such-flag", "1"}}), {}},
           {ServeArgs({{"--journal", ""}}), json_env},
           {ServeArgs({{"--log-level", "loud"}}), json_env}}) {
    r = RunServe(args, env);
    EXPECT_TRUE(r.status.exited && r.status.code != 0) << r.status.ToString();
    lines = JsonLines(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_EQ(lines[0]["level"], "error") << r.output;
  }
  EXPECT_NE(
      JsonLines(RunServe(ServeArgs({{"--log-format", "json"}, {"--no-such-flag", "1"}})).output)[0]
          .value("msg", "")
          .find("--no-such-flag"),
      std::string::npos);
  r = RunServe(ServeArgs({{"--log-format", "text"}, {"--no-such-flag", "1"}}), json_env);
  EXPECT_NE(r.output.find("--no-such-flag"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('{'), std::string::npos) << "the command line wins: " << r.output;

  // An unknown format: said in text, naming the allowed values.
  r = RunServe(ServeArgs({{"--log-format", "xml"}}));
  EXPECT_TRUE(r.status.exited && r.status.code == 2) << r.status.ToString();
  EXPECT_EQ(r.output, "error: --log-format=xml: expected text or json\n");
  r = RunServe(ServeArgs(), {{"GPU_FABRIC_LOG_FORMAT", "yaml"}});
  EXPECT_EQ(r.output, "error: --log-format=yaml: expected text or json\n");
}

}  // namespace
}  // namespace gfp::testing
