#include "sim/fm/sim_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/fm/call_log_file.h"

namespace gfp::fmsim {
namespace {

using nlohmann::json;

std::string Errno() { return std::strerror(errno); }

json ToJson(const SimState& s) {
  json faults = json::object();
  for (const auto& [name, fault] : s.faults) {
    faults[name] = {{"code", fault.code}, {"remaining", fault.remaining}};
  }
  json degraded = json::object();
  for (const auto& [id, links] : s.degraded) degraded[std::to_string(id)] = links;
  json active_vfs = json::object();
  for (const auto& [id, vfs] : s.active_vfs) active_vfs[std::to_string(id)] = vfs;
  json lost = json::object();
  for (const auto& [name, l] : s.lost_replies) {
    lost[name] = {{"code", l.code}, {"remaining", l.remaining}};
  }
  json crashes = json::object();
  for (const auto& [name, c] : s.crashes) {
    crashes[name] = {{"after", c.point == CrashPoint::kAfter},
                     {"remaining", c.remaining},
                     {"only_pid", c.only_pid}};
  }
  json delays = json::object();
  for (const auto& [name, d] : s.delays) delays[name] = {{"ms", d.ms}, {"remaining", d.remaining}};
  return {{"table", s.table},
          {"mode", std::string(ModeName(s.mode))},
          {"fabric_mode", static_cast<int>(s.fabric_mode)},
          {"vf_parents", s.vf_parents},
          {"active_vfs", active_vfs},
          {"generation", s.generation},
          {"unreachable", s.unreachable},
          {"only_v1_connect", s.only_v1_connect},
          {"hostile", std::string(HostileReplyName(s.hostile))},
          {"active", s.active},
          {"degraded", degraded},
          {"faults", faults},
          {"latency_ms", s.latency_ms},
          {"lost_replies", lost},
          {"crashes", crashes},
          {"delays", delays},
          {"delayed_pids", s.delayed_pids},
          {"call_log_lines", s.call_log_lines}};
}

Result<SimState> FromJson(const json& j) {
  SimState s;
  s.table = j.at("table").get<std::string>();
  if (!ParseMode(j.at("mode").get<std::string>(), &s.mode)) return DataLoss("unknown mode");
  // The vGPU fields are optional so a state file written before they existed still loads.
  if (!ParseFabricModeNumber(j.value("fabric_mode", 1), &s.fabric_mode)) {
    return DataLoss("unknown fabric_mode (expected 1 or 2)");
  }
  s.vf_parents = j.value("vf_parents", std::map<std::string, std::uint32_t>{});
  if (j.contains("active_vfs")) {
    for (const auto& [id, vfs] : j.at("active_vfs").items()) {
      s.active_vfs[static_cast<std::uint32_t>(std::stoul(id))] =
          vfs.get<std::vector<std::string>>();
    }
  }
  s.generation = j.at("generation").get<std::uint64_t>();
  s.unreachable = j.at("unreachable").get<bool>();
  s.only_v1_connect = j.at("only_v1_connect").get<bool>();
  if (!ParseHostileReply(j.at("hostile").get<std::string>(), &s.hostile)) {
    return DataLoss("unknown hostile reply mode");
  }
  s.active = j.at("active").get<std::vector<std::uint32_t>>();
  for (const auto& [id, links] : j.at("degraded").items()) {
    s.degraded[static_cast<std::uint32_t>(std::stoul(id))] = links.get<std::uint32_t>();
  }
  for (const auto& [name, fault] : j.at("faults").items()) {
    s.faults[name] = Fault{fault.at("code").get<int>(), fault.at("remaining").get<int>()};
  }
  s.latency_ms = j.at("latency_ms").get<std::map<std::string, int>>();
  s.call_log_lines = j.at("call_log_lines").get<std::uint64_t>();
  // Optional, so a state file written before these faults existed still loads.
  static const json kNone = json::object();
  auto field = [&](const char* name) -> const json& {
    return j.contains(name) ? j.at(name) : kNone;
  };
  for (const auto& [name, l] : field("lost_replies").items()) {
    s.lost_replies[name] = LostReply{l.at("code").get<int>(), l.at("remaining").get<int>()};
  }
  for (const auto& [name, c] : field("crashes").items()) {
    s.crashes[name] =
        CallerCrash{c.at("after").get<bool>() ? CrashPoint::kAfter : CrashPoint::kBefore,
                    c.at("remaining").get<int>(), c.at("only_pid").get<int>()};
  }
  for (const auto& [name, d] : field("delays").items()) {
    s.delays[name] = Delay{d.at("ms").get<int>(), d.at("remaining").get<int>()};
  }
  s.delayed_pids = j.value("delayed_pids", std::vector<int>{});
  return s;
}

json RecordToJson(const CallRecord& r) {
  json j = {{"fn", r.function},
            {"args", r.args},
            {"code", r.code},
            {"time_ms", r.time_ms},
            {"pid", r.pid}};
  if (!r.vfs.empty()) j["vfs"] = r.vfs;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

// Writes via a temporary file and rename so a crash mid-write never leaves half a file.
Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << content;
    out.flush();
    if (!out) return Internal("cannot write simulator state " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Internal("cannot rename " + tmp + " to " + path + ": " + Errno());
  }
  return Status::Ok();
}

std::string CallLogPath(const std::string& path) { return path + ".calls"; }

Result<int> LockFile(const std::string& path) {
  const std::string lock_path = path + ".lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot open simulator lock " + lock_path + ": " + Errno());
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(fd);
      return Unavailable("cannot lock " + lock_path + ": " + Errno());
    }
  }
  return fd;
}

}  // namespace

Result<LockedState> LockedState::Acquire(const std::string& path) {
  GFP_ASSIGN_OR_RETURN(int fd, LockFile(path));
  LockedState locked(path, fd);
  GFP_RETURN_IF_ERROR(locked.Load());
  return locked;
}

Status LockedState::Initialise(const std::string& path, const SimState& initial) {
  GFP_ASSIGN_OR_RETURN(int fd, LockFile(path));
  LockedState locked(path, fd);
  locked.state_ = initial;
  locked.state_.call_log_lines = 0;
  GFP_RETURN_IF_ERROR(WriteFileAtomically(CallLogPath(path), ""));
  return locked.Commit();
}

LockedState::LockedState(LockedState&& other) noexcept
    : path_(std::move(other.path_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      state_(std::move(other.state_)),
      pending_calls_(std::move(other.pending_calls_)) {}

LockedState::~LockedState() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

Status LockedState::Load() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return NotFound("simulator state " + path_ + " does not exist (create it first)");
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return DataLoss("simulator state " + path_ + " is not valid JSON");
  try {
    GFP_ASSIGN_OR_RETURN(state_, FromJson(doc));
  } catch (const std::exception& e) {
    return DataLoss("simulator state " + path_ + " is malformed: " + e.what());
  }
  return Status::Ok();
}

Status LockedState::Commit() {
  if (!pending_calls_.empty()) {
    std::ofstream log(CallLogPath(path_), std::ios::app | std::ios::binary);
    for (const CallRecord& record : pending_calls_) log << RecordToJson(record).dump() << '\n';
    if (!log) return Internal("cannot append to " + CallLogPath(path_));
    state_.call_log_lines += pending_calls_.size();
    pending_calls_.clear();
  }
  // Trim only when the log is twice the limit, so the rewrite cost is amortised.
  if (state_.call_log_lines > 2 * kCallLogLimit) {
    GFP_ASSIGN_OR_RETURN(state_.call_log_lines, KeepLastLines(CallLogPath(path_), kCallLogLimit));
  }
  return WriteFileAtomically(path_, ToJson(state_).dump());
}

Result<std::vector<CallRecord>> LockedState::ReadCallLog() const {
  std::ifstream in(CallLogPath(path_), std::ios::binary);
  std::deque<CallRecord> records;
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return DataLoss("simulator call log " + CallLogPath(path_) + " has a malformed line");
    }
    CallRecord r;
    r.function = j.value("fn", "");
    r.args = j.value("args", "");
    r.code = j.value("code", 0);
    r.time_ms = j.value("time_ms", std::int64_t{0});
    r.pid = j.value("pid", 0);
    r.vfs = j.value("vfs", std::vector<std::string>{});
    r.note = j.value("note", "");
    records.push_back(std::move(r));
    if (records.size() > kCallLogLimit) records.pop_front();
  }
  return std::vector<CallRecord>(records.begin(), records.end());
}

Status LockedState::ClearCallLog() {
  pending_calls_.clear();
  state_.call_log_lines = 0;
  return WriteFileAtomically(CallLogPath(path_), "");
}

}  // namespace gfp::fmsim
