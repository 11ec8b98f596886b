// Outcomes of Fabric Manager operations. A failure keeps the FM return code and its name next to
// the readable message, because the plugin journals all three ("FM_ST_IN_USE", -7, why).
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "common/status.h"

namespace gfp::adapters::fm {

struct FmError {
  // The FM return code. Failures that did not come from the library use the closest FM code:
  // a call past its deadline is FM_ST_TIMEOUT, a call refused because the connection is broken
  // is FM_ST_CONNECTION_NOT_VALID, a malformed reply is FM_ST_GENERIC_ERROR, a bad argument
  // refused before calling FM is FM_ST_BADPARAM. `from_library` tells them apart.
  int code = 0;
  std::string name;     // "FM_ST_IN_USE"
  std::string message;  // "fmActivateFabricPartition(3): FM_ST_IN_USE (partition active ...)"
  ErrorCode category = ErrorCode::kInternal;
  bool from_library = true;

  Status ToStatus() const { return Status(category, message); }
};

class [[nodiscard]] FmStatus {
 public:
  FmStatus() = default;
  FmStatus(FmError error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  const FmError& error() const { return error_; }
  int fm_code() const { return ok_ ? 0 : error_.code; }
  std::string fm_name() const { return ok_ ? "FM_ST_SUCCESS" : error_.name; }
  Status status() const { return ok_ ? Status::Ok() : error_.ToStatus(); }
  operator Status() const { return status(); }  // NOLINT: lets GFP_RETURN_IF_ERROR take it

 private:
  FmError error_;
  bool ok_ = true;
};

template <typename T>
class [[nodiscard]] FmResult {
 public:
  FmResult(T value) : value_(std::move(value)) {}        // NOLINT: implicit by design
  FmResult(FmError error) : value_(std::move(error)) {}  // NOLINT: implicit by design
  FmResult(FmStatus failed) : value_(failed.error()) {}  // NOLINT: only from a failure

  bool ok() const { return std::holds_alternative<T>(value_); }
  const FmError& error() const { return std::get<FmError>(value_); }
  int fm_code() const { return ok() ? 0 : error().code; }
  std::string fm_name() const { return ok() ? "FM_ST_SUCCESS" : error().name; }
  Status status() const { return ok() ? Status::Ok() : error().ToStatus(); }
  FmStatus fm_status() const { return ok() ? FmStatus() : FmStatus(error()); }

  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, FmError> value_;
};

}  // namespace gfp::adapters::fm
