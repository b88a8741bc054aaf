#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

/// Errors as values for the layers below the actors (net/, registry/,
/// schema/, actions/, grpc_door/), which do not depend on CAF and so cannot
/// use caf::expected; the actors use this one too where they call them, so
/// there is one way. The shape of C++23's std::expected<T, std::string>
/// (g++ 12's libstdc++ has none at -std=c++20), so moving to it is a rename.
namespace actor_host::wire {

/// The failure side of an expected: the reason, worded for whoever reads it
/// (peers and interop tests compare these texts: they travel unchanged).
struct unexpected {
  std::string message;
};

/// A `T` or the reason there is none; what a function that can fail returns
/// instead of `bool` plus a reason in a string out-parameter. Ignoring it is
/// a warning: the reason would be lost.
template <class T>
class [[nodiscard]] expected {
public:
  using value_type = T;

  template <class U = T>
    requires(std::is_constructible_v<T, U &&>
             && !std::is_same_v<std::remove_cvref_t<U>, expected>
             && !std::is_same_v<std::remove_cvref_t<U>, unexpected>)
  expected(U&& value) : v_(std::in_place_index<0>, std::forward<U>(value)) {
  }

  expected(unexpected e) : v_(std::in_place_index<1>, std::move(e.message)) {
  }

  bool has_value() const noexcept {
    return v_.index() == 0;
  }
  explicit operator bool() const noexcept {
    return has_value();
  }

  /// The value; only when has_value() (throws std::bad_variant_access otherwise).
  T& value() & {
    return std::get<0>(v_);
  }
  const T& value() const& {
    return std::get<0>(v_);
  }
  T&& value() && {
    return std::get<0>(std::move(v_));
  }
  T& operator*() & {
    return value();
  }
  const T& operator*() const& {
    return value();
  }
  T&& operator*() && {
    return std::move(*this).value();
  }
  T* operator->() {
    return &value();
  }
  const T* operator->() const {
    return &value();
  }

  /// The reason; only when !has_value().
  const std::string& error() const& {
    return std::get<1>(v_);
  }
  std::string&& error() && {
    return std::get<1>(std::move(v_));
  }

private:
  std::variant<T, std::string> v_;
};

/// Success without a value, or the reason: what a `bool` + `why` became.
template <>
class [[nodiscard]] expected<void> {
public:
  using value_type = void;

  expected() = default;
  expected(unexpected e) : error_(std::move(e.message)), ok_(false) {
  }

  bool has_value() const noexcept {
    return ok_;
  }
  explicit operator bool() const noexcept {
    return ok_;
  }

  /// The reason; empty when has_value().
  const std::string& error() const& {
    return error_;
  }
  std::string&& error() && {
    return std::move(error_);
  }

private:
  std::string error_;
  bool ok_ = true;
};

} // namespace actor_host::wire
