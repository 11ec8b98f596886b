#include "unit/kubelet/twin_message_filler.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdint>

namespace gfp::kubelet::testing {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int kMaxDepth = 6;  // the kubelet protos are not recursive; this only stops a bad one

std::string DescribeField(const FieldDescriptor* f) {
  return f->full_name() + " (#" + std::to_string(f->number()) + ", " + f->type_name() +
         (f->is_repeated() ? ", repeated" : "") + (f->is_map() ? ", map" : "") +
         (f->is_packed() ? ", packed" : "") + (f->has_presence() ? ", presence" : "") +
         (f->message_type() ? ", " + f->message_type()->full_name() : "") + ")";
}

bool SameDeclaration(const FieldDescriptor* a, const FieldDescriptor* b) {
  if (a->name() != b->name() || a->type() != b->type() || a->label() != b->label() ||
      a->is_map() != b->is_map() || a->is_packed() != b->is_packed() ||
      a->has_presence() != b->has_presence() || a->json_name() != b->json_name()) {
    return false;
  }
  if ((a->message_type() == nullptr) != (b->message_type() == nullptr)) return false;
  if (a->message_type() != nullptr &&
      a->message_type()->full_name() != b->message_type()->full_name()) {
    return false;
  }
  if ((a->enum_type() == nullptr) != (b->enum_type() == nullptr)) return false;
  return a->enum_type() == nullptr || a->enum_type()->full_name() == b->enum_type()->full_name();
}

// One value of the field's type; `k` is the element index of a repeated field. Values are chosen
// to exercise the encodings: negative and > 32-bit varints, non-ASCII bytes.
void SetScalar(Message* m, const FieldDescriptor* f, int seed, int k) {
  const Reflection* r = m->GetReflection();
  const bool rep = f->is_repeated();
  const int64_t base = int64_t{f->number()} * 1000 + seed * 10 + k + 1;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const auto v = static_cast<int32_t>(k % 2 == 0 ? base : -base);
      rep ? r->AddInt32(m, f, v) : r->SetInt32(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = k % 2 == 0 ? (int64_t{1} << 40) + base : -base;
      rep ? r->AddInt64(m, f, v) : r->SetInt64(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const auto v = static_cast<uint32_t>(base) | 0x80000000u;
      rep ? r->AddUInt32(m, f, v) : r->SetUInt32(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = (uint64_t{1} << 63) + static_cast<uint64_t>(base);
      rep ? r->AddUInt64(m, f, v) : r->SetUInt64(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double v = static_cast<double>(base) + 0.25;
      rep ? r->AddDouble(m, f, v) : r->SetDouble(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const float v = static_cast<float>(base) + 0.5f;
      rep ? r->AddFloat(m, f, v) : r->SetFloat(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      rep ? r->AddBool(m, f, true) : r->SetBool(m, f, true);
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* e = f->enum_type();
      const int v = e->value(e->value_count() - 1)->number();
      rep ? r->AddEnumValue(m, f, v) : r->SetEnumValue(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string v = f->name() + "-" + std::to_string(base);
      if (f->type() == FieldDescriptor::TYPE_BYTES) v += std::string("\x00\xff", 2);
      rep ? r->AddString(m, f, v) : r->SetString(m, f, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;  // handled by the caller
  }
}

void Fill(Message* official, Message* ours, int seed, int depth,
          std::vector<std::string>* mismatches) {
  const auto* a = official->GetDescriptor();
  const auto* b = ours->GetDescriptor();
  if (depth > kMaxDepth) {
    mismatches->push_back(a->full_name() + " nests deeper than " + std::to_string(kMaxDepth));
    return;
  }
  for (int i = 0; i < b->field_count(); ++i) {
    if (a->FindFieldByNumber(b->field(i)->number()) == nullptr) {
      mismatches->push_back("ours has " + DescribeField(b->field(i)) + ", official does not");
    }
  }
  for (int i = 0; i < a->field_count(); ++i) {
    const FieldDescriptor* fa = a->field(i);
    const FieldDescriptor* fb = b->FindFieldByNumber(fa->number());
    if (fb == nullptr) {
      mismatches->push_back("official has " + DescribeField(fa) + ", ours does not");
      continue;
    }
    if (!SameDeclaration(fa, fb)) {
      mismatches->push_back("official " + DescribeField(fa) + " vs ours " + DescribeField(fb));
      continue;
    }
    const int elements = fa->is_repeated() ? 2 : 1;
    for (int k = 0; k < elements; ++k) {
      const int child_seed = seed * 10 + k + 1;
      if (fa->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        Message* ca = fa->is_repeated() ? official->GetReflection()->AddMessage(official, fa)
                                        : official->GetReflection()->MutableMessage(official, fa);
        Message* cb = fb->is_repeated() ? ours->GetReflection()->AddMessage(ours, fb)
                                        : ours->GetReflection()->MutableMessage(ours, fb);
        Fill(ca, cb, child_seed, depth + 1, mismatches);
      } else {
        SetScalar(official, fa, seed, k);
        SetScalar(ours, fb, seed, k);
      }
    }
  }
}

}  // namespace

void FillTwins(Message* official, Message* ours, int seed, std::vector<std::string>* mismatches) {
  Fill(official, ours, seed, 0, mismatches);
}

std::string DeterministicBytes(const Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

}  // namespace gfp::kubelet::testing
