// Errors travel as values: a function that can fail returns Expected<T>, and
// only main turns an error into an exit code. (std::expected is C++23.)
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace ranktest {

struct Error {
  // One line for a person: names the input, the place, and what to do.
  std::string message;
};

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}
  Expected(Error error) : state_(std::move(error)) {}

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// For operations that return nothing but can fail.
struct Done {};

}  // namespace ranktest
