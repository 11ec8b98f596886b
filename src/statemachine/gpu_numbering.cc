#include "statemachine/gpu_numbering.h"

#include <algorithm>

namespace gfp::sm {

GpuNumbering::GpuNumbering(const State& state) : state_(state) {
  const auto& by_module = state.bdf_of_module.value();
  modules_.reserve(by_module.size());
  bdfs_.reserve(by_module.size());
  for (const auto& [module, bdf] : by_module) {  // a std::map: module order
    modules_.push_back(module);
    bdfs_.push_back(&bdf);
  }
  if (!modules_.empty() && modules_.back() < kTableBound) {
    gpu_of_module_.assign(modules_.back() + 1, kNoGpu);
    for (std::size_t gpu = 0; gpu < modules_.size(); ++gpu) {
      gpu_of_module_[modules_[gpu]] = static_cast<std::uint16_t>(gpu);
    }
  }
}

std::optional<std::size_t> GpuNumbering::OfModule(ModuleId module) const {
  if (!gpu_of_module_.empty()) {
    if (module >= gpu_of_module_.size() || gpu_of_module_[module] == kNoGpu) return std::nullopt;
    return gpu_of_module_[module];
  }
  auto it = std::lower_bound(modules_.begin(), modules_.end(), module);
  if (it == modules_.end() || *it != module) return std::nullopt;
  return static_cast<std::size_t>(it - modules_.begin());
}

std::optional<std::size_t> GpuNumbering::OfBdf(const Bdf& gpu) const {
  auto it = state_.module_of_bdf.value().find(gpu);
  if (it == state_.module_of_bdf.value().end()) return std::nullopt;
  return OfModule(it->second);
}

bool GpuSets::Overlap(std::size_t row, const GpuSets& other, std::size_t other_row) const {
  for (std::size_t w = 0; w < words_; ++w) {
    if (bits_[row * words_ + w] & other.bits_[other_row * words_ + w]) return true;
  }
  return false;
}

bool GpuSets::SubsetOf(std::size_t row, const GpuSets& other, std::size_t other_row) const {
  for (std::size_t w = 0; w < words_; ++w) {
    if (bits_[row * words_ + w] & ~other.bits_[other_row * words_ + w]) return false;
  }
  return true;
}

}  // namespace gfp::sm
