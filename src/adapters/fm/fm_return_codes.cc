#include "adapters/fm/fm_return_codes.h"

#include "fm_codes/fm_codes.h"

namespace gfp::adapters::fm {

std::string FmReturnName(int code) { return fm_codes::Name(code); }

std::string_view FmReturnDescription(int code) {
  if (const fm_codes::Info* info = fm_codes::Find(code)) return info->description;
  return {};
}

ErrorCode FmReturnCategory(int code) { return fm_codes::Category(code); }

}  // namespace gfp::adapters::fm
