// Error handling for the whole library: a Status carries an error class, a message and a context
// chain (file -> pass -> node -> input) that callers extend as the error travels up.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qonnx {

// The library's error classes. They carry no numbers: the CLI maps each to its exit code in one
// place (tools/qonnx-cc/exit_codes.cc), and other callers map them as they need.
enum class Code {
  kOk,
  kFailed,        // invalid parameter values, internal errors
  kUsage,         // a caller's mistake: unknown option, missing input, ...
  kCannotRead,    // an input file
  kCannotWrite,   // an output file
  kInvalidModel,
  kUnsupported,   // op, type or pattern
  kMismatch,      // numeric comparison failed
};

const char* code_name(Code code);

class Status;
[[noreturn]] void value_of_error(const Status& status);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<std::string>& context() const { return context_; }

  // Prepends an outer context item, e.g. "node 'Quant_0' (qonnx.custom_op.general::Quant)".
  Status& with_context(std::string outer) & {
    if (!is_ok()) context_.insert(context_.begin(), std::move(outer));
    return *this;
  }
  Status&& with_context(std::string outer) && { return std::move(with_context(std::move(outer))); }

  // "outer: inner: message"
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::vector<std::string> context_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return status_.is_ok(); }
  const Status& status() const& { return status_; }
  Status&& status() && { return std::move(status_); }
  // Reading the value of an error is a programming error: it aborts with the status.
  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  T& operator*() { return checked(); }

 private:
  T& checked() {
    if (!value_) value_of_error(status_);
    return *value_;
  }
  std::optional<T> value_;
  Status status_;
};

#define QONNX_CONCAT_INNER(a, b) a##b
#define QONNX_CONCAT(a, b) QONNX_CONCAT_INNER(a, b)

#define QONNX_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::qonnx::Status _st = (expr);          \
    if (!_st.is_ok()) return _st;          \
  } while (0)

#define QONNX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

#define QONNX_ASSIGN_OR_RETURN(lhs, expr) \
  QONNX_ASSIGN_OR_RETURN_IMPL(QONNX_CONCAT(_res_, __LINE__), lhs, expr)

// As QONNX_ASSIGN_OR_RETURN; an error gets `context` (evaluated only then) as its outer context item.
#define QONNX_ASSIGN_OR_RETURN_CTX_IMPL(tmp, lhs, expr, context)                \
  auto tmp = (expr);                                                           \
  if (!tmp.is_ok()) return std::move(tmp).status().with_context(context);      \
  lhs = std::move(tmp).value()

#define QONNX_ASSIGN_OR_RETURN_CTX(lhs, expr, context) \
  QONNX_ASSIGN_OR_RETURN_CTX_IMPL(QONNX_CONCAT(_res_, __LINE__), lhs, expr, context)

}  // namespace qonnx
