#include "statemachine/event_codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

namespace gfp::sm {
namespace {

using events::Event;

const google::protobuf::FieldDescriptor* BodyField(const Event& event) {
  if (event.body_case() == Event::BODY_NOT_SET) return nullptr;
  return Event::descriptor()->FindFieldByNumber(static_cast<int>(event.body_case()));
}

}  // namespace

const std::string& EventTypeName(const Event& event) {
  // Every decoded event asks for its name: a table by body field number built once, instead of
  // a descriptor lookup and a copy (most names are too long for the small-string buffer).
  static const std::vector<const std::string*> kNames = [] {
    std::vector<const std::string*> names;
    const auto* body = Event::descriptor()->FindOneofByName("body");
    for (int i = 0; body != nullptr && i < body->field_count(); ++i) {
      const auto* field = body->field(i);
      const auto number = static_cast<std::size_t>(field->number());
      if (names.size() <= number) names.resize(number + 1, nullptr);
      names[number] = &field->message_type()->name();
    }
    return names;
  }();
  static const std::string kNone;
  const auto number = static_cast<std::size_t>(event.body_case());
  const std::string* name = number < kNames.size() ? kNames[number] : nullptr;
  return name != nullptr ? *name : kNone;
}

std::string EncodeEvent(const Event& event) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    event.SerializeToCodedStream(&coded);
  }
  return bytes;
}

Result<Event> DecodeEvent(const std::string& type, std::int64_t time_unix_micros,
                          const std::string& payload) {
  Event event;
  if (!event.ParseFromString(payload)) {
    return DataLoss("payload of " + type + " event does not decode");
  }
  if (event.body_case() == Event::BODY_NOT_SET) {
    return DataLoss("event of type \"" + type + "\" has no body this binary knows");
  }
  if (EventTypeName(event) != type) {
    return DataLoss("journal says type " + type + " but the payload is " + EventTypeName(event));
  }
  if (event.time_unix_micros() != time_unix_micros) {
    return DataLoss("journal time " + std::to_string(time_unix_micros) +
                    " differs from the event's time " + std::to_string(event.time_unix_micros()));
  }
  return event;
}

std::string EventFieldsJson(const Event& event) {
  const auto* field = BodyField(event);
  if (!field) return "{}";
  const auto& body = event.GetReflection()->GetMessage(event, field);
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(body, &json, options).ok()) return "{}";
  return json;
}

namespace {

// Writes `value` as exactly `width` decimal digits (zero-padded) at `out`.
void PutDigits(char* out, std::int64_t value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

}  // namespace

std::string FormatRfc3339(std::int64_t micros) {
  std::int64_t seconds = micros / 1'000'000;
  std::int64_t fraction = micros % 1'000'000;
  if (fraction < 0) {
    fraction += 1'000'000;
    seconds -= 1;
  }
  // Calendar arithmetic, not gmtime_r (which takes glibc's time-zone lock on every call): the
  // journal verbs format one time per printed event.
  using namespace std::chrono;
  const sys_seconds at{std::chrono::seconds{seconds}};
  const sys_days day = floor<days>(at);
  const year_month_day date{day};
  const hh_mm_ss<std::chrono::seconds> time{at - day};
  const int year = static_cast<int>(date.year());
  char buf[64];
  if (year < 0 || year > 9999) {
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", year,
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                  static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                  static_cast<int>(time.seconds().count()), static_cast<long long>(fraction));
    return buf;
  }
  std::memcpy(buf, "0000-00-00T00:00:00.000000Z", 28);
  PutDigits(buf, year, 4);
  PutDigits(buf + 5, static_cast<unsigned>(date.month()), 2);
  PutDigits(buf + 8, static_cast<unsigned>(date.day()), 2);
  PutDigits(buf + 11, time.hours().count(), 2);
  PutDigits(buf + 14, time.minutes().count(), 2);
  PutDigits(buf + 17, time.seconds().count(), 2);
  PutDigits(buf + 20, fraction, 6);
  return std::string(buf, 27);
}

Result<std::int64_t> ParseRfc3339(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6 ||
      consumed != 19) {
    return InvalidArgument("\"" + text + "\" is not an RFC 3339 time (2026-11-29T22:00:00Z)");
  }
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100'000;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  std::int64_t offset_seconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') &&
             text[pos + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(text.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) {
      return InvalidArgument("\"" + text + "\" has a malformed UTC offset");
    }
    offset_seconds = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return InvalidArgument("\"" + text + "\" needs a Z or ±hh:mm UTC offset");
  }
  if (pos != text.size()) return InvalidArgument("\"" + text + "\" has trailing characters");
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);
  return (static_cast<std::int64_t>(t) - offset_seconds) * 1'000'000 + micros;
}

}  // namespace gfp::sm
