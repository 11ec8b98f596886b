// A value shared between copies of the state until one of them changes it. Copying a State is
// what Decide does for every decision that journals something; its largest parts (the partition
// table, the devices, the module mapping) change only when FM reports a new table, the inventory
// or a device's health changes, or a mapping is loaded, so copies share them.
// Reads look like the wrapped container's const interface; writes go through mutable_value(),
// which copies first when another State still shares the value. Still plain data: equality
// compares contents, and the engine's lock already orders every write.
#pragma once

#include <memory>
#include <utility>

namespace gfp::sm {

template <typename T>
class CopyOnWrite {
 public:
  CopyOnWrite() : value_(std::make_shared<T>()) {}
  CopyOnWrite(T value) : value_(std::make_shared<T>(std::move(value))) {}  // NOLINT: implicit
  CopyOnWrite& operator=(T value) {
    value_ = std::make_shared<T>(std::move(value));
    return *this;
  }

  const T& value() const { return *value_; }
  operator const T&() const { return *value_; }  // NOLINT: reads as the container
  T& mutable_value() {
    if (value_.use_count() != 1) value_ = std::make_shared<T>(*value_);
    return *value_;
  }

  // The const container interface the state machine reads with.
  auto begin() const { return value_->cbegin(); }
  auto end() const { return value_->cend(); }
  auto size() const { return value_->size(); }
  bool empty() const { return value_->empty(); }
  template <typename K>
  auto find(const K& key) const {
    return value_->find(key);
  }
  template <typename K>
  auto count(const K& key) const {
    return value_->count(key);
  }
  template <typename K>
  const auto& at(const K& key) const {
    return value_->at(key);
  }

  bool operator==(const CopyOnWrite& other) const {
    return value_ == other.value_ || *value_ == *other.value_;
  }
  bool operator==(const T& other) const { return *value_ == other; }

 private:
  std::shared_ptr<T> value_;  // never null
};

}  // namespace gfp::sm
