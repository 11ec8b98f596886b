// Reading fields of JSON from the API server, which is outside input: a missing member or one of
// another type reads as absent, never as an exception (nlohmann's value() throws on a type
// mismatch).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace gfp::plugin::dra {

// The member at the end of `path` below `object`, or null when a step is missing or no object.
inline const nlohmann::json* FieldAt(const nlohmann::json& object,
                                     std::initializer_list<const char*> path) {
  const nlohmann::json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

inline std::string StringAt(const nlohmann::json& object, std::initializer_list<const char*> path) {
  const nlohmann::json* at = FieldAt(object, path);
  return at && at->is_string() ? at->get<std::string>() : std::string();
}

inline std::int64_t IntAt(const nlohmann::json& object, std::initializer_list<const char*> path) {
  const nlohmann::json* at = FieldAt(object, path);
  return at && at->is_number_integer() ? at->get<std::int64_t>() : 0;
}

}  // namespace gfp::plugin::dra
