// The GPUs of the module mapping numbered 0..n-1 (in module-id order), and sets of them as bits.
// GetPreferredAllocation is on kubelet's path (SPEC §7: p99 <= 20 us in-process); with numbers,
// "is this partition free" and "does it overlap that one" cost a few word operations instead of
// string comparisons. Built per call from the state: nothing here is journaled or cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "statemachine/state.h"

namespace gfp::sm {

class GpuNumbering {
 public:
  // Relies on the invariant that module_of_bdf and bdf_of_module are inverses (invariants.cc).
  explicit GpuNumbering(const State& state);

  std::size_t size() const { return modules_.size(); }
  const Bdf& bdf(std::size_t gpu) const { return *bdfs_[gpu]; }
  std::optional<std::size_t> OfModule(ModuleId module) const;
  std::optional<std::size_t> OfBdf(const Bdf& gpu) const;  // a GPU's BDF, not a VF's

  // Module ids are FM's physical ids, small numbers on every HGX board: below this bound OfModule
  // is one load from a table by module id (a call asks it about a hundred times); at or above
  // it, a binary search.
  static constexpr ModuleId kTableBound = 1024;

 private:
  static constexpr std::uint16_t kNoGpu = 0xffff;

  const State& state_;
  std::vector<ModuleId> modules_;             // sorted
  std::vector<const Bdf*> bdfs_;              // by number
  std::vector<std::uint16_t> gpu_of_module_;  // by module id; empty: some id >= kTableBound
};

// `rows` sets of numbered GPUs, in one allocation.
class GpuSets {
 public:
  GpuSets(std::size_t rows, std::size_t gpus) : words_((gpus + 63) / 64), bits_(rows * words_) {}

  void Add(std::size_t row, std::size_t gpu) { bits_[row * words_ + gpu / 64] |= Bit(gpu); }
  bool Has(std::size_t row, std::size_t gpu) const {
    return (bits_[row * words_ + gpu / 64] & Bit(gpu)) != 0;
  }
  bool Overlap(std::size_t row, const GpuSets& other, std::size_t other_row) const;
  bool SubsetOf(std::size_t row, const GpuSets& other, std::size_t other_row) const;

 private:
  static std::uint64_t Bit(std::size_t gpu) { return std::uint64_t{1} << (gpu % 64); }

  std::size_t words_;
  std::vector<std::uint64_t> bits_;
};

}  // namespace gfp::sm
