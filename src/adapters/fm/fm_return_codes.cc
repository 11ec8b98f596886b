#include "adapters/fm/fm_return_codes.h"

#include "statemachine/fm_codes.h"

namespace gfp::fm {

std::string FmReturnName(int code) { return sm::fm_code::Name(code); }

std::string_view FmReturnDescription(int code) {
  if (const sm::fm_code::Info* info = sm::fm_code::Find(code)) return info->description;
  return {};
}

ErrorCode FmReturnCategory(int code) { return sm::fm_code::Category(code); }

}  // namespace gfp::fm
