#include "engine/decoded_read.h"

#include "statemachine/event_codec.h"
#include "store/read_ahead.h"

namespace gfp::engine {
namespace {

Status Decode(const store::StoredEvent& stored, events::Event* event) {
  if (event->ParseFromString(stored.payload) && event->body_case() != events::Event::BODY_NOT_SET) {
    return Status::Ok();
  }
  // Slow path only for errors: DecodeEvent words the reason.
  return sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload)
      .status()
      .WithContext("journal seq " + std::to_string(stored.seq));
}

}  // namespace

Status ForEachDecoded(const store::Journal& journal, std::uint64_t from_seq, std::uint64_t to_seq,
                      bool verified, const DecodedEventFn& fn) {
  const std::uint64_t first = from_seq == 0 ? 1 : from_seq;
  const std::uint64_t last = to_seq == 0 ? journal.LastSeq() : to_seq;
  events::Event event;  // decoded on this thread: see store/read_ahead.cc
  const store::EventSink decode_and_call = [&](const store::StoredEvent& stored) {
    GFP_RETURN_IF_ERROR(Decode(stored, &event));
    return fn(stored, event);
  };
  const store::EventRead read = [&](const store::EventSink& sink) {
    return verified ? journal.ForEachVerified(from_seq, to_seq, sink)
                    : journal.ForEach(from_seq, to_seq, sink);
  };
  const bool long_read = last >= first && last - first >= kReadAheadAtLeast;
  return long_read ? store::ReadAhead(read, decode_and_call) : read(decode_and_call);
}

}  // namespace gfp::engine
