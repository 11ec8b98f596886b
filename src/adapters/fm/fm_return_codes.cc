#include "adapters/fm/fm_return_codes.h"

#include "fm_codes/fm_codes.h"

namespace gfp::fm {

std::string FmReturnName(int code) { return fm_code::Name(code); }

std::string_view FmReturnDescription(int code) {
  if (const fm_code::Info* info = fm_code::Find(code)) return info->description;
  return {};
}

ErrorCode FmReturnCategory(int code) { return fm_code::Category(code); }

}  // namespace gfp::fm
