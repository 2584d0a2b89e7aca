#pragma once
// Errors of the whole library. A user mistake is an Error of kind kValue/kType/kNotImplemented/
// kRuntime and reaches Python as the matching exception; a broken internal invariant is kInternal
// and says it is a bug. Errors are built by streaming:
//   throw Error(ErrorKind::kValue) << "op 'x' (matmul): a.shape[1]=3 != b.shape[0]=4";
// Layers that catch and re-throw add context lines ("while running pass 'autograd'").

#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace oneflow {

enum class ErrorKind { kValue, kType, kNotImplemented, kRuntime, kInternal, kPeerLost };

class Error : public std::exception {
 public:
  explicit Error(ErrorKind kind) : kind_(kind) {}

  template <typename T>
  Error& operator<<(const T& value) {
    std::ostringstream stream;
    stream << value;
    message_ += stream.str();
    what_.clear();
    return *this;
  }

  // Adds an outer context line, shown after the message.
  Error& AddContext(const std::string& context) {
    context_.push_back(context);
    what_.clear();
    return *this;
  }

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const char* what() const noexcept override;

 private:
  ErrorKind kind_;
  std::string message_;
  std::vector<std::string> context_;
  mutable std::string what_;
};

// Internal invariant: failing means a bug in this library, not a user error.
#define OF_CHECK(condition)                                                                  \
  if (condition) {                                                                           \
  } else                                                                                     \
    throw ::oneflow::Error(::oneflow::ErrorKind::kInternal)                                  \
        << "internal error (a bug in oneflow) at " << __FILE__ << ":" << __LINE__            \
        << ": check failed: " #condition " "

}  // namespace oneflow
