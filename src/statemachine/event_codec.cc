#include "statemachine/event_codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <cstdio>
#include <ctime>

namespace gfp::sm {
namespace {

using events::Event;

const google::protobuf::FieldDescriptor* BodyField(const Event& event) {
  if (event.body_case() == Event::BODY_NOT_SET) return nullptr;
  return Event::descriptor()->FindFieldByNumber(static_cast<int>(event.body_case()));
}

}  // namespace

std::string EventTypeName(const Event& event) {
  const auto* field = BodyField(event);
  return field ? field->message_type()->name() : "";
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

std::string FormatRfc3339(std::int64_t micros) {
  std::int64_t seconds = micros / 1'000'000;
  std::int64_t fraction = micros % 1'000'000;
  if (fraction < 0) {
    fraction += 1'000'000;
    seconds -= 1;
  }
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(fraction));
  return buf;
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
