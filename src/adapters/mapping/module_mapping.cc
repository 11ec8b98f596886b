#include "adapters/mapping/module_mapping.h"

#include <cstddef>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>

#include "adapters/host/bdf.h"
#include "adapters/host/file_reading.h"
#include "common/text_escape.h"

namespace gfp::adapters::mapping {
namespace {

// One top-level member as written in the file. A SAX pass (instead of parsing into a json
// object) keeps members in file order and sees duplicate keys, which a DOM would merge.
struct Member {
  std::string key;
  bool value_is_string = false;
  std::string value;  // the string, or a description of the non-string value
};

class TopLevelCollector final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<Member> members;
  std::string top_level_kind;  // set when the document is not an object
  std::string error_text;

  bool null() override { return Scalar("null"); }
  bool boolean(bool value) override { return Scalar(value ? "true" : "false"); }
  bool number_integer(number_integer_t value) override {
    return Scalar("number " + std::to_string(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    return Scalar("number " + std::to_string(value));
  }
  bool number_float(number_float_t, const string_t& text) override {
    return Scalar("number " + EscapeAndTruncate(text, 64));
  }
  bool string(string_t& value) override {
    if (InMember()) {
      members.back().value_is_string = true;
      members.back().value = value;
      return true;
    }
    return Scalar("a string");
  }
  bool binary(binary_t&) override { return Scalar("binary data"); }
  bool start_object(std::size_t) override { return Open("an object"); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open("an array"); }
  bool end_array() override { return Close(); }
  bool key(string_t& value) override {
    if (depth_ == 1 && top_level_kind.empty()) members.push_back({value, false, {}});
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_text = EscapeAndTruncate(e.what(), 512);  // quotes what it read from the file
    // Drop the library's "[json.exception.parse_error.101] " tag; keep position and reason.
    if (const auto tag_end = error_text.find("] ");
        error_text.rfind("[json.", 0) == 0 && tag_end != std::string::npos) {
      error_text = error_text.substr(tag_end + 2);
    }
    return false;
  }

 private:
  int depth_ = 0;

  // Directly inside the top-level object, after a key.
  bool InMember() const { return depth_ == 1 && top_level_kind.empty() && !members.empty(); }

  // A value outside any container is a non-object document; a value at depth 1 is a member.
  bool Scalar(const std::string& kind) {
    if (depth_ == 0) top_level_kind = kind;
    if (InMember()) members.back().value = kind;
    return true;
  }
  bool Open(const std::string& kind) {
    if (depth_ == 0 && kind != "an object") top_level_kind = kind;
    if (InMember()) members.back().value = kind;
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
};

// A module id: decimal digits only (no sign, no spaces), 1..UINT32_MAX (FM's physicalId is an
// unsigned int and module ids start at 1).
Result<std::uint32_t> ParseModuleId(const std::string& text) {
  if (text.empty()) return InvalidArgument("module id \"\" is empty");
  const std::string quoted = "module id \"" + EscapeAndTruncate(text, 128) + "\"";
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return InvalidArgument(quoted + " is not a decimal number");
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > std::numeric_limits<std::uint32_t>::max()) break;
  }
  if (value == 0 || value > std::numeric_limits<std::uint32_t>::max()) {
    return InvalidArgument(quoted + " is out of range (1..4294967295)");
  }
  return static_cast<std::uint32_t>(value);
}

// Keys and values come from the file: escaped (a newline must not forge a log line) and cut.
std::string Quote(const std::string& s) { return "\"" + EscapeAndTruncate(s, 128) + "\""; }

Result<ModuleMapping> BuildMapping(const std::vector<Member>& members, const std::string& context) {
  ModuleMapping mapping;
  std::map<std::string, std::string> key_by_bdf;       // for duplicate-BDF messages
  std::map<std::uint32_t, std::string> key_by_module;  // for duplicate-id messages
  for (const Member& member : members) {
    const std::string where = context + ": key " + Quote(member.key);
    auto bdf = adapters::host::NormalizeBdf(member.key);
    if (!bdf.ok()) return bdf.status().WithContext(where);
    if (!member.value_is_string) {
      return InvalidArgument(where + ": module id must be a string of decimal digits, got " +
                             member.value);
    }
    auto module_id = ParseModuleId(member.value);
    if (!module_id.ok()) return module_id.status().WithContext(where);

    if (auto [it, inserted] = key_by_bdf.emplace(*bdf, member.key); !inserted) {
      if (it->second == member.key) return InvalidArgument(where + ": appears twice");
      return InvalidArgument(context + ": keys " + Quote(it->second) + " and " + Quote(member.key) +
                             " both name GPU " + *bdf);
    }
    if (auto [it, inserted] = key_by_module.emplace(*module_id, member.key); !inserted) {
      return InvalidArgument(context + ": module id " + std::to_string(*module_id) +
                             " is given to both " + Quote(it->second) + " and " +
                             Quote(member.key));
    }
    mapping.module_by_bdf.emplace(*bdf, *module_id);
    mapping.bdf_by_module.emplace(*module_id, *bdf);
  }
  return mapping;
}

}  // namespace

std::optional<std::uint32_t> ModuleMapping::ModuleOf(const std::string& bdf) const {
  const auto it = module_by_bdf.find(bdf);
  if (it == module_by_bdf.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ModuleMapping::BdfOf(std::uint32_t module_id) const {
  const auto it = bdf_by_module.find(module_id);
  if (it == bdf_by_module.end()) return std::nullopt;
  return it->second;
}

Result<ModuleMapping> ParseModuleMapping(std::string_view json, std::string_view source) {
  const std::string context = "module mapping " + EscapeControl(source);
  TopLevelCollector collector;
  bool parsed = false;
  try {
    parsed = nlohmann::json::sax_parse(json, &collector);
  } catch (const std::exception& e) {  // the SAX path reports via parse_error; be safe anyway
    return InvalidArgument(context + ": malformed JSON: " + e.what());
  }
  if (!parsed) {
    return InvalidArgument(context + ": malformed JSON: " + collector.error_text);
  }
  if (!collector.top_level_kind.empty()) {
    return InvalidArgument(context + ": top level is " + collector.top_level_kind +
                           ", expected a JSON object {\"<BDF>\": \"<module id>\", ...}");
  }
  auto mapping = BuildMapping(collector.members, context);
  if (!mapping.ok()) return mapping.status();
  mapping->source = std::string(source);
  return mapping;
}

Result<ModuleMapping> LoadModuleMapping(const std::filesystem::path& path) {
  auto text = adapters::host::ReadWholeFile(path, kMaxModuleMappingFileBytes);
  if (!text.ok()) {
    return text.status().WithContext("module mapping " + EscapeControl(path.string()) +
                                     ": cannot read file");
  }
  return ParseModuleMapping(*text, path.string());
}

Result<std::vector<std::string>> CheckModuleMappingCovers(
    const ModuleMapping& mapping, std::span<const std::string> discovered_bdfs) {
  const std::string context = "module mapping " + EscapeControl(mapping.source);
  std::string missing;
  std::size_t missing_count = 0;
  for (const std::string& bdf : discovered_bdfs) {
    if (mapping.module_by_bdf.count(bdf) != 0) continue;
    missing += missing.empty() ? "" : ", ";
    missing += bdf;
    ++missing_count;
  }
  if (missing_count > 0) {
    return FailedPrecondition(context + ": discovered GPU" + (missing_count > 1 ? "s " : " ") +
                              missing + (missing_count > 1 ? " have" : " has") +
                              " no entry (no module id, so no partition can include it)");
  }
  std::vector<std::string> warnings;
  for (const auto& [bdf, module_id] : mapping.module_by_bdf) {
    bool discovered = false;
    for (const std::string& d : discovered_bdfs) discovered = discovered || d == bdf;
    if (!discovered) {
      warnings.push_back(context + ": GPU " + bdf + " (module " + std::to_string(module_id) +
                         ") was not discovered; entry ignored");
    }
  }
  return warnings;
}

Result<CheckedModuleMapping> LoadModuleMappingFor(const std::filesystem::path& path,
                                                  std::span<const std::string> discovered_bdfs) {
  GFP_ASSIGN_OR_RETURN(ModuleMapping mapping, LoadModuleMapping(path));
  GFP_ASSIGN_OR_RETURN(std::vector<std::string> warnings,
                       CheckModuleMappingCovers(mapping, discovered_bdfs));
  return CheckedModuleMapping{std::move(mapping), std::move(warnings)};
}

}  // namespace gfp::adapters::mapping
