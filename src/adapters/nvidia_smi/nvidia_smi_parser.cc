#include "adapters/nvidia_smi/nvidia_smi_parser.h"

#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "adapters/host/bdf.h"
#include "common/text_escape.h"

namespace gfp::adapters::nvidia_smi {
namespace {

struct Line {
  std::size_t number = 0;  // 1-based, for messages
  std::string_view text;   // without the line end
};

// The lines of a text one at a time: a list of them all would cost 24 bytes a line, 400 MB for
// 16 MiB of newlines (the input cap).
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  bool Next(Line* line) {
    if (start_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', start_);
    if (end == std::string_view::npos) end = text_.size();
    line->text = text_.substr(start_, end - start_);
    if (!line->text.empty() && line->text.back() == '\r') line->text.remove_suffix(1);
    line->number = ++number_;
    start_ = end + 1;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t start_ = 0;
  std::size_t number_ = 0;
};

std::size_t IndentOf(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsModuleIdKey(std::string_view key) {
  constexpr std::string_view kKey = "module id";
  if (key.size() != kKey.size()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c =
        (key[i] >= 'A' && key[i] <= 'Z') ? static_cast<char>(key[i] - 'A' + 'a') : key[i];
    if (c != kKey[i]) return false;
  }
  return true;
}

// A header is "GPU <bus id>" at column 0; other column-0 lines (Timestamp, Attached GPUs) are not.
std::optional<std::string_view> HeaderBusId(std::string_view line) {
  if (line.rfind("GPU ", 0) != 0) return std::nullopt;
  return Trim(line.substr(4));
}

struct Block {
  std::size_t header_line = 0;
  std::string header;  // as written, escaped
  std::string bdf;
  std::optional<std::string> module_text;  // the raw value of the Module ID line
  std::size_t module_line = 0;
};

Result<std::uint32_t> ParseModuleIdValue(const std::string& value) {
  std::uint64_t number = 0;
  bool digits = !value.empty();
  for (char c : value) {
    if (c < '0' || c > '9') digits = false;
    if (!digits) break;
    number = number * 10 + static_cast<std::uint64_t>(c - '0');
    if (number > std::numeric_limits<std::uint32_t>::max()) break;
  }
  const std::string quoted = "\"" + EscapeAndTruncate(value, 64) + "\"";
  if (!digits) {
    return InvalidArgument("Module ID is " + quoted +
                           ", not a number (this driver or GPU does not report module ids)");
  }
  if (number == 0 || number > std::numeric_limits<std::uint32_t>::max()) {
    return InvalidArgument("Module ID " + quoted + " is out of range (1..4294967295)");
  }
  return static_cast<std::uint32_t>(number);
}

// Splits the text into GPU blocks and finds each block's first-level Module ID line.
Result<std::vector<Block>> ReadBlocks(std::string_view text, const std::string& context) {
  std::vector<Block> blocks;
  std::size_t first_level_indent = 0;
  LineCursor cursor(text);
  for (Line line; cursor.Next(&line);) {
    const auto where = [&] { return context + ": line " + std::to_string(line.number); };
    if (auto bus_id = HeaderBusId(line.text)) {
      Block block;
      block.header_line = line.number;
      block.header = EscapeAndTruncate(*bus_id, 64);
      auto bdf = adapters::host::NormalizeBdf(*bus_id);
      if (!bdf.ok()) {
        return InvalidArgument(where() + ": GPU header \"" + block.header +
                               "\" does not name a PCI address");
      }
      block.bdf = *bdf;
      blocks.push_back(std::move(block));
      first_level_indent = 0;
      continue;
    }
    const std::size_t indent = IndentOf(line.text);
    if (blocks.empty() || indent == line.text.size()) continue;  // preamble or blank
    if (indent == 0) continue;  // a column-0 line that is not a GPU header
    if (first_level_indent == 0) first_level_indent = indent;
    const std::size_t colon = line.text.find(':');
    if (indent != first_level_indent || colon == std::string_view::npos) continue;
    if (!IsModuleIdKey(Trim(line.text.substr(0, colon)))) continue;
    Block& block = blocks.back();
    if (block.module_text) {
      return InvalidArgument(where() + ": GPU " + block.header +
                             " has a second Module ID line (the first is line " +
                             std::to_string(block.module_line) + ")");
    }
    block.module_text = std::string(Trim(line.text.substr(colon + 1)));
    block.module_line = line.number;
  }
  return blocks;
}

}  // namespace

Result<std::map<std::string, std::uint32_t>> ParseNvidiaSmiModuleIds(std::string_view text,
                                                                     std::string_view source) {
  const std::string context = "nvidia-smi output " + EscapeAndTruncate(source, 256);
  if (text.find('\0') != std::string_view::npos) {
    return InvalidArgument(context + ": contains a NUL byte; expected the text of `nvidia-smi -q`");
  }
  GFP_ASSIGN_OR_RETURN(std::vector<Block> blocks, ReadBlocks(text, context));
  if (blocks.empty()) {
    return InvalidArgument(context +
                           ": no \"GPU 00000000:1B:00.0\" block found; expected the text of "
                           "`nvidia-smi -q` taken while the GPUs are on the nvidia driver");
  }
  std::map<std::string, std::uint32_t> module_by_bdf;
  std::map<std::uint32_t, std::string> bdf_by_module;
  std::map<std::string, std::size_t> line_by_bdf;
  for (const Block& block : blocks) {
    const std::string gpu =
        context + ": GPU " + block.header + " (line " + std::to_string(block.header_line) + ")";
    if (auto [it, inserted] = line_by_bdf.emplace(block.bdf, block.header_line); !inserted) {
      return InvalidArgument(gpu + " appears twice (first at line " + std::to_string(it->second) +
                             ")");
    }
    if (!block.module_text) return InvalidArgument(gpu + " has no Module ID line");
    auto module_id = ParseModuleIdValue(*block.module_text);
    if (!module_id.ok()) return module_id.status().WithContext(gpu);
    if (auto [it, inserted] = bdf_by_module.emplace(*module_id, block.bdf); !inserted) {
      return InvalidArgument(gpu + " has module id " + std::to_string(*module_id) + ", which GPU " +
                             it->second + " has too");
    }
    module_by_bdf.emplace(block.bdf, *module_id);
  }
  return module_by_bdf;
}

std::string FormatModuleMappingJson(const std::map<std::string, std::uint32_t>& module_by_bdf) {
  std::string out = "{";
  bool first = true;
  for (const auto& [bdf, module_id] : module_by_bdf) {
    out += first ? "\n" : ",\n";
    out += "  \"" + bdf + "\": \"" + std::to_string(module_id) + "\"";
    first = false;
  }
  out += module_by_bdf.empty() ? "}\n" : "\n}\n";
  return out;
}

}  // namespace gfp::adapters::nvidia_smi
