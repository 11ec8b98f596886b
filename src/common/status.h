// Errors are values. A Status says whether something worked and, when it did not, why, in a
// sentence that names the thing and the reason ("GPU 0000:1b:00.0 is not in partition 3").
// Result<T> carries either a T or a failed Status.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gfp {

// Coarse categories, chosen so that adapters can map them to gRPC codes and exit codes.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is wrong (bad device id, malformed file)
  kNotFound,            // a named thing does not exist (file, device, partition)
  kFailedPrecondition,  // the request is valid but the system is not in a state to serve it
  kAlreadyExists,       // e.g. a second writer on the journal
  kUnavailable,         // a dependency (Fabric Manager, kubelet) cannot be reached right now
  kDeadlineExceeded,    // a bounded call ran out of time
  kDataLoss,            // corruption: a bad hash, an undecodable record
  kResourceExhausted,   // disk full, message too large
  kInternal,            // a bug or an unexpected library failure
};

const char* ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with context, keeping the code: "opening journal x: <message>".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

  // Explicitly drops a status whose failure is acceptable at this call site.
  void IgnoreError() const {}

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {ErrorCode::kFailedPrecondition, std::move(m)};
}
inline Status AlreadyExists(std::string m) { return {ErrorCode::kAlreadyExists, std::move(m)}; }
inline Status Unavailable(std::string m) { return {ErrorCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) {
  return {ErrorCode::kDeadlineExceeded, std::move(m)};
}
inline Status DataLoss(std::string m) { return {ErrorCode::kDataLoss, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {ErrorCode::kResourceExhausted, std::move(m)};
}
inline Status Internal(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "a Result built from a Status must carry an error");
    if (status_.ok()) status_ = Internal("Result constructed from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace gfp

// Propagates a failed Status out of the current function.
#define GFP_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::gfp::Status gfp_status_ = (expr);        \
    if (!gfp_status_.ok()) return gfp_status_; \
  } while (false)

#define GFP_CONCAT_INNER(a, b) a##b
#define GFP_CONCAT(a, b) GFP_CONCAT_INNER(a, b)
// Declares `lhs` from a Result's value, or returns its Status.
#define GFP_ASSIGN_OR_RETURN(lhs, expr) \
  GFP_ASSIGN_OR_RETURN_IMPL(GFP_CONCAT(gfp_result_, __LINE__), lhs, expr)
// NOLINTBEGIN(bugprone-macro-parentheses): `tmp` and `lhs` are names being declared.
#define GFP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
