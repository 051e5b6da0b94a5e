// ApiError and Result<T>: the one error type of crmd, passed by value from every layer.
//
// Expected failures (bad input, missing permission, missing record) travel as an ApiError inside a
// Result. Exceptions are kept for faults: a storage failure or a bug becomes the spec's 500 in api/.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace crmd {

// How the body of an error response is shaped. The spec has three forms.
enum class ErrorBody {
  kCodeAndError,    // {"code":<int>,"error":"<message>"}: the record API
  kErrorOnly,       // {"error":"<message>"}: form functions, file routes, app-id and schema gates
  kCodeAndMessage,  // {"code":1,"message":"Internal server error."}: the 500 answer
};

struct ApiError {
  int http_status = 400;
  int code = 0;
  std::string message;
  ErrorBody body = ErrorBody::kCodeAndError;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(ApiError error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const ApiError& error() const& { return std::get<1>(v_); }
  ApiError&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, ApiError> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(ApiError error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  const ApiError& error() const& { return error_; }
  ApiError&& error() && { return std::move(error_); }

 private:
  ApiError error_;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace crmd

#define CRMD_CONCAT_INNER(a, b) a##b
#define CRMD_CONCAT(a, b) CRMD_CONCAT_INNER(a, b)

// Returns the error of `expr` (a Result or Status) from the enclosing function.
#define CRMD_TRY(expr)                                      \
  do {                                                      \
    auto&& crmd_try_result = (expr);                        \
    if (!crmd_try_result.ok()) return std::move(crmd_try_result).error(); \
  } while (0)

// `CRMD_ASSIGN(auto x, f());` declares x from a successful Result, or returns its error.
#define CRMD_ASSIGN(lhs, expr) CRMD_ASSIGN_IMPL(CRMD_CONCAT(crmd_assign_, __LINE__), lhs, expr)
#define CRMD_ASSIGN_IMPL(tmp, lhs, expr)              \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).error();       \
  lhs = std::move(tmp).value()
