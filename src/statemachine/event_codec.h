// Events <-> journal records, their type names, JSON fields and times. Their one-line human
// summaries are display code, in journal_text/event_summary.h (library gfp_event_text).
#pragma once

#include <string>

#include "common/status.h"
#include "statemachine/events.pb.h"

namespace gfp::sm {

// The event's type name as journaled: the oneof case in UpperCamelCase ("AllocationGranted").
// "" for an event without a body.
const std::string& EventTypeName(const events::Event& event);

// Deterministic protobuf bytes of the whole envelope (time included).
std::string EncodeEvent(const events::Event& event);

// Parses a journaled record and checks it against the journal's type and time columns, so a
// record whose columns and payload disagree is reported as corrupt.
Result<events::Event> DecodeEvent(const std::string& type, std::int64_t time_unix_micros,
                                  const std::string& payload);

// The event body's fields as a JSON object text (snake_case keys, proto3 JSON mapping).
std::string EventFieldsJson(const events::Event& event);

// RFC 3339 UTC with microseconds: 2026-11-29T22:16:13.123456Z
std::string FormatRfc3339(std::int64_t time_unix_micros);
// Parses RFC 3339 (Z or ±hh:mm offset, optional fraction) to microseconds.
Result<std::int64_t> ParseRfc3339(const std::string& text);

}  // namespace gfp::sm
