#include "sim/kubelet/device_selection.h"

#include <set>

namespace gfp::kubelet {

std::vector<std::string> ChooseDevices(const std::vector<std::string>& available, size_t count,
                                       const std::vector<std::string>* preferred) {
  const std::set<std::string> candidates(available.begin(), available.end());
  std::set<std::string> taken;
  std::vector<std::string> chosen;
  auto take_from = [&](const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      if (chosen.size() >= count) return;
      if (candidates.contains(id) && taken.insert(id).second) chosen.push_back(id);
    }
  };
  if (preferred != nullptr) take_from(*preferred);
  take_from(available);
  return chosen;
}

}  // namespace gfp::kubelet
