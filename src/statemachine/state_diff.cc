#include "statemachine/state_diff.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <vector>

#include "statemachine/snapshot_codec.h"

namespace gfp::sm {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::util::MessageDifferencer;
using Path = std::vector<MessageDifferencer::SpecificField>;

constexpr std::size_t kMaxDifferences = 20;

// The field that identifies an entry of a repeated message, if it has one.
const FieldDescriptor* KeyOf(const Descriptor* message) {
  for (const char* name : {"bdf", "id", "partition_id"}) {
    if (const FieldDescriptor* key = message->FindFieldByName(name)) return key;
  }
  return nullptr;
}

// Tells which entries of repeated fields are the same entry: by key where there is one.
void MatchEntriesByKey(const Descriptor* message, MessageDifferencer& differencer) {
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      if (const FieldDescriptor* key = KeyOf(field->message_type())) {
        differencer.TreatAsMap(field, key);
      }
    }
    MatchEntriesByKey(field->message_type(), differencer);
  }
}

std::string ValueText(const Message& message, const FieldDescriptor* field, int index) {
  std::string out;
  google::protobuf::TextFormat::PrintFieldValueToString(message, field,
                                                        field->is_repeated() ? index : -1, &out);
  return out;
}

// A repeated entry's index in the first message or, `in_actual`, in the second.
int IndexOf(const MessageDifferencer::SpecificField& step, bool in_actual) {
  const int first = in_actual ? step.new_index : step.index;
  return first >= 0 ? first : (in_actual ? step.index : step.new_index);
}

// One step of a path: the field's name, and for a repeated field the entry's key or index.
std::string StepText(const Message& parent, const FieldDescriptor* field, int index) {
  std::string out = field->name();
  if (!field->is_repeated()) return out;
  std::string entry = std::to_string(index);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    const Message& element = parent.GetReflection()->GetRepeatedMessage(parent, field, index);
    if (const FieldDescriptor* key = KeyOf(element.GetDescriptor())) {
      entry = ValueText(element, key, -1);
    }
  }
  return out + "[" + entry + "]";
}

// Lists each difference as a path from the compared roots (the differencer hands the reporter
// the innermost messages, the path starts at the roots); `in_actual` reads the indexes of the
// second root (where an added entry is).
class PathReporter : public MessageDifferencer::Reporter {
 public:
  PathReporter(const Message& expected, const Message& actual, std::vector<std::string>& out)
      : expected_(expected), actual_(actual), out_(out) {}

  // proto3 does not store a scalar at its default, so false -> true arrives as "added".
  void ReportAdded(const Message&, const Message&, const Path& path) override {
    if (IsSingular(path)) return Changed(path);
    Add(Describe(actual_, path, true) + ": only in actual" + Value(actual_, path, true));
  }
  void ReportDeleted(const Message&, const Message&, const Path& path) override {
    if (IsSingular(path)) return Changed(path);
    Add(Describe(expected_, path, false) + ": only in expected" + Value(expected_, path, false));
  }
  void ReportModified(const Message&, const Message&, const Path& path) override {
    // Post-order: a changed leaf is reported, then each message above it; the leaf says it all.
    if (path.back().field == nullptr ||
        path.back().field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      return;
    }
    Changed(path);
  }

 private:
  static bool IsSingular(const Path& path) {
    const FieldDescriptor* field = path.back().field;
    return field != nullptr && !field->is_repeated() &&
           field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE;
  }

  // "path: old -> new" for a scalar that both sides have (one may hold the default).
  void Changed(const Path& path) {
    const Message* parent_expected = nullptr;
    const Message* parent_actual = nullptr;
    const std::string where = Describe(expected_, path, false, &parent_expected);
    Describe(actual_, path, true, &parent_actual);
    Add(where + ": " + ValueText(*parent_expected, path.back().field, IndexOf(path.back(), false)) +
        " -> " + ValueText(*parent_actual, path.back().field, IndexOf(path.back(), true)));
  }

  void Add(std::string line) {
    if (out_.size() < kMaxDifferences) out_.push_back(std::move(line));
  }

  // " (value)" of a scalar entry; nothing for a message (its key is in the path).
  static std::string Value(const Message& root, const Path& path, bool in_actual) {
    const FieldDescriptor* field = path.back().field;
    if (field == nullptr || field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) return "";
    const Message* parent = nullptr;
    Describe(root, path, in_actual, &parent);
    return " (" + ValueText(*parent, field, IndexOf(path.back(), in_actual)) + ")";
  }

  // The path's text; `parent` gets the message that holds the path's last field.
  static std::string Describe(const Message& root, const Path& path, bool in_actual,
                              const Message** parent = nullptr) {
    std::string text;
    const Message* at = &root;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const FieldDescriptor* field = path[i].field;
      if (field == nullptr) break;  // unknown fields: SnapshotOf never makes any
      const int index = IndexOf(path[i], in_actual);
      text += (text.empty() ? "" : ".") + StepText(*at, field, index);
      if (i + 1 == path.size()) break;
      at = field->is_repeated() ? &at->GetReflection()->GetRepeatedMessage(*at, field, index)
                                : &at->GetReflection()->GetMessage(*at, field);
    }
    if (parent) *parent = at;
    return text;
  }

  const Message& expected_;
  const Message& actual_;
  std::vector<std::string>& out_;
};

}  // namespace

std::string StateDiff(const State& expected, const State& actual) {
  const snapshot::State a = SnapshotOf(expected);
  const snapshot::State b = SnapshotOf(actual);
  std::vector<std::string> differences;
  PathReporter reporter(a, b, differences);
  MessageDifferencer differencer;
  MatchEntriesByKey(snapshot::State::descriptor(), differencer);
  differencer.ReportDifferencesTo(&reporter);
  differencer.Compare(a, b);
  if (differences.empty()) {
    if (expected == actual) return "";
    // Only a field the snapshot does not hold can differ here: bdf_of_module, module_of_bdf's
    // inverse (rebuilt from it on decode). A new State field missing from snapshot.proto is
    // caught by tests/unit/statemachine/state_fields_test.cc.
    differences.push_back("a field snapshot.proto does not hold (bdf_of_module?)");
  }
  std::string out = "differs in ";
  for (std::size_t i = 0; i < differences.size(); ++i) out += (i ? "; " : "") + differences[i];
  if (differences.size() == kMaxDifferences) out += "; …";
  return out + " (at seq " + std::to_string(expected.last_seq) + " vs " +
         std::to_string(actual.last_seq) + ")";
}

}  // namespace gfp::sm
