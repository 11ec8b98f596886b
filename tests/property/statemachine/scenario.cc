#include "scenario.h"

namespace gfp::testing {
namespace {

sm::Micros kStep = 1'000'000;

rc::Gen<std::vector<int>> GenFmCodes() {
  // Mostly success; sometimes the documented failures.
  return rc::gen::container<std::vector<int>>(
      3, rc::gen::weightedElement<int>({{20, 0}, {1, -4}, {1, -7}, {1, -9}, {1, -10}, {1, -2}}));
}

rc::Gen<std::vector<std::string>> GenDevices(const NodeFixture& node) {
  // Half the time a whole partition (the common, aligned case), otherwise any subset.
  auto aligned = rc::gen::map(rc::gen::elementOf(node.partitions), [node](const auto& p) {
    std::vector<std::string> ids;
    for (auto m : p.second) ids.push_back(node.bdfs_by_module[m - 1]);
    return ids;
  });
  auto any = rc::gen::map(rc::gen::container<std::vector<std::size_t>>(
                              rc::gen::inRange<std::size_t>(0, node.bdfs_by_module.size())),
                          [node](const std::vector<std::size_t>& idx) {
                            std::vector<std::string> ids;
                            for (auto i : idx) ids.push_back(node.bdfs_by_module[i]);
                            return ids;
                          });
  return rc::gen::weightedOneOf<std::vector<std::string>>({{3, aligned}, {1, any}});
}

}  // namespace

std::string FmName(int code) {
  switch (code) {
    case 0:
      return "FM_ST_SUCCESS";
    case -2:
      return "FM_ST_GENERIC_ERROR";
    case -4:
      return "FM_ST_UNINITIALIZED";
    case -7:
      return "FM_ST_IN_USE";
    case -9:
      return "FM_ST_CONNECTION_NOT_VALID";
    case -10:
      return "FM_ST_NVLINK_ERROR";
    default:
      return "FM_ST_UNKNOWN";
  }
}

rc::Gen<std::vector<Step>> GenScenario(const NodeFixture& node, bool fm_enabled) {
  const std::string resource = node.resource;
  auto request = rc::gen::map(rc::gen::pair(GenDevices(node), GenFmCodes()), [resource](auto p) {
    sm::RequestAllocation r;
    r.resource = resource;
    r.device_ids = p.first;
    return Step{r, p.second, "request"};
  });
  // The other commands refer to whatever is live when they run: they carry an index that the
  // runner resolves against the state (so shrinking keeps scenarios meaningful).
  auto release = rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 8), GenFmCodes()), [](auto p) {
    sm::ReleaseAllocation r;
    r.allocation_id = std::to_string(p.first);  // resolved by RunScenario
    return Step{r, p.second, "release"};
  });
  auto pods = rc::gen::map(rc::gen::inRange(0, 8), [](int i) {
    sm::ObservePodResources o;
    o.containers.push_back({"ns", "pod" + std::to_string(i), "c", "", {std::to_string(i)}});
    return Step{o, {}, "pods"};
  });
  auto drift = rc::gen::map(
      rc::gen::pair(rc::gen::container<std::vector<int>>(2, rc::gen::inRange(0, 40)), GenFmCodes()),
      [](auto p) {
        sm::ObserveFabricState f;
        f.held_allocations = {std::to_string(p.first[0])};
        f.pod_holders_known = p.first[1] % 2 == 0;
        // partitions filled in by the runner from the node, with these seeds choosing which
        // partition FM reports active.
        f.partitions.resize(2);
        f.partitions[0].set_id(static_cast<std::uint32_t>(p.first[0]));
        f.partitions[1].set_id(static_cast<std::uint32_t>(p.first[1]));
        return Step{f, p.second, "fabric-state"};
      });
  auto health =
      rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 16), rc::gen::arbitrary<bool>()), [](auto p) {
        sm::ObserveDeviceHealth h;
        h.bdf = std::to_string(p.first);
        h.healthy = p.second;
        h.reason = "vfio group node changed";
        return Step{h, {}, "health"};
      });
  auto ensure = rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 8), GenFmCodes()), [](auto p) {
    sm::EnsurePartitionActive e;
    e.device_ids = {std::to_string(p.first)};
    return Step{e, p.second, "prestart"};
  });
  auto orphan = rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 40), GenFmCodes()), [](auto p) {
    sm::ReleaseOrphanPartition o;
    o.partition_id = static_cast<std::uint32_t>(p.first);
    o.reason = "orphan";
    return Step{o, p.second, "orphan"};
  });
  auto resync = rc::gen::map(GenFmCodes(), [](auto codes) {
    return Step{sm::ResyncFabricManager{}, codes, "resync"};
  });
  auto connection = rc::gen::map(rc::gen::arbitrary<bool>(), [](bool up) {
    sm::ObserveFabricManagerConnection c;
    c.connected = up;
    c.address = "/run/fm.sock";
    c.reason = "lost";
    return Step{c, {}, up ? "fm-up" : "fm-down"};
  });
  auto restart = rc::gen::just(Step{sm::ObserveKubeletRestart{0, "socket removed"}, {}, "kubelet"});
  (void)fm_enabled;
  return rc::gen::container<std::vector<Step>>(rc::gen::weightedOneOf<Step>({{10, request},
                                                                             {4, release},
                                                                             {3, pods},
                                                                             {3, drift},
                                                                             {2, health},
                                                                             {2, ensure},
                                                                             {2, orphan},
                                                                             {1, resync},
                                                                             {1, connection},
                                                                             {1, restart}}));
}

std::vector<std::size_t> RunScenario(Driver& d, const NodeFixture& node, bool fm_enabled,
                                     const std::vector<Step>& steps) {
  std::vector<std::size_t> boundaries;
  d.Boot(node, fm_enabled);
  boundaries.push_back(d.journal.size());
  auto live_allocation = [&](const std::string& index) -> std::string {
    if (d.state.allocations.empty()) return "none";
    auto it = d.state.allocations.begin();
    std::advance(it, std::stoul(index) % d.state.allocations.size());
    return it->first;
  };
  for (Step step : steps) {
    d.now += kStep;
    std::visit([&](auto& c) { c.now = d.now; }, step.command);
    // Resolve the index-based references against the current state.
    if (auto* r = std::get_if<sm::ReleaseAllocation>(&step.command)) {
      r->allocation_id = live_allocation(r->allocation_id);
    } else if (auto* p = std::get_if<sm::ObservePodResources>(&step.command)) {
      const std::string id = live_allocation(p->containers[0].device_ids[0]);
      p->containers.clear();
      if (auto it = d.state.allocations.find(id); it != d.state.allocations.end()) {
        p->containers.push_back(
            {"ns", "virt-launcher-" + id, "compute", it->second.resource, it->second.devices});
      }
    } else if (auto* f = std::get_if<sm::ObserveFabricState>(&step.command)) {
      // FM reports: the journal's active set, minus one (lost), plus one non-overlapping (extra).
      std::set<std::uint32_t> active;
      for (const auto& [pid, a] : d.state.active) active.insert(pid);
      const std::uint32_t lose = f->partitions[0].id();
      const std::uint32_t extra = f->partitions[1].id();
      active.erase(lose);
      if (extra < node.partitions.size()) {
        const auto& modules = node.partitions[extra].second;
        bool overlaps = false;
        for (auto pid : active) {
          for (const auto& [id, ms] : node.partitions) {
            if (id != pid) continue;
            for (auto m : ms) overlaps |= std::count(modules.begin(), modules.end(), m) > 0;
          }
        }
        if (!overlaps) active.insert(node.partitions[extra].first);
      }
      f->held_allocations = {live_allocation(f->held_allocations[0])};
      f->partitions = PartitionsOf(node, active);
    } else if (auto* h = std::get_if<sm::ObserveDeviceHealth>(&step.command)) {
      h->bdf = node.bdfs_by_module[std::stoul(h->bdf) % node.bdfs_by_module.size()];
    } else if (auto* e = std::get_if<sm::EnsurePartitionActive>(&step.command)) {
      const std::string id = live_allocation(e->device_ids[0]);
      auto it = d.state.allocations.find(id);
      e->device_ids =
          it == d.state.allocations.end() ? std::vector<std::string>{} : it->second.devices;
    }
    std::size_t next_code = 0;
    d.RunToCompletion(step.command, [&](const sm::Effect&) {
      const int code = next_code < step.fm_codes.size() ? step.fm_codes[next_code++] : 0;
      return code == 0 ? FmOk() : FmError(code, FmName(code));
    });
    if (::testing::Test::HasFatalFailure()) return boundaries;
    boundaries.push_back(d.journal.size());
  }
  return boundaries;
}

}  // namespace gfp::testing
