// Writes the generated part of the seed corpora (docs/fuzzing.md): the demo-day journal's events
// and the states they lead to (as snapshots), the simulator's real partition tables as FM structs,
// and device-plugin requests naming the fake H100 node's GPUs. Not a fuzz target; run by hand
// when a format changes: fuzz_make_seeds <repo>/tests/fixtures/journal-v1-demo-day.db <corpus dir>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "adapters/fm/fm_abi.h"
#include "deviceplugin/v1beta1/api.pb.h"
#include "sim/fm/sim_tables.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/snapshot_codec.h"
#include "store/journal.h"

namespace {

namespace fs = std::filesystem;
namespace abi = gfp::adapters::fm::abi;

void Write(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << bytes;
}

// Trailing zero bytes are dropped: the target zero-pads its input to the struct size.
template <typename Struct>
std::string StructSeed(const Struct& s) {
  std::string bytes(1, '\0');
  bytes.append(reinterpret_cast<const char*>(&s), sizeof(Struct));
  bytes.erase(bytes.find_last_not_of('\0') + 1);
  return bytes;
}

int JournalSeeds(const fs::path& journal_file, const fs::path& out) {
  auto journal = gfp::store::Journal::Open(journal_file, gfp::store::OpenMode::kReadOnly);
  if (!journal.ok()) {
    std::fprintf(stderr, "%s\n", journal.status().message().c_str());
    return 1;
  }
  gfp::sm::State state;
  const gfp::Status scanned = (*journal)->ForEach(1, 0, [&](const gfp::store::StoredEvent& stored) {
    auto event = gfp::sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload);
    if (!event.ok()) return event.status();
    Write(out / "event_decode" / ("demo-" + std::to_string(stored.seq) + "-" + stored.type),
          stored.payload);
    gfp::sm::Apply(state, stored.seq, *event);
    if (stored.seq % 8 == 0) {
      Write(out / "snapshot_decode" / ("demo-after-" + std::to_string(stored.seq)),
            gfp::sm::EncodeSnapshot(state));
    }
    return gfp::Status::Ok();
  });
  Write(out / "snapshot_decode" / "demo-final", gfp::sm::EncodeSnapshot(state));
  Write(out / "snapshot_decode" / "empty-state", gfp::sm::EncodeSnapshot(gfp::sm::State{}));
  if (!scanned.ok()) std::fprintf(stderr, "%s\n", scanned.message().c_str());
  return scanned.ok() ? 0 : 1;
}

void PartitionListSeed(const gfp::fmsim::SimTable& table, const fs::path& out) {
  auto list = std::make_unique<abi::FabricPartitionList>();
  std::memset(list.get(), 0, sizeof(*list));
  list->version = abi::kFabricPartitionListVersion;
  list->numPartitions = static_cast<unsigned>(table.partitions.size());
  list->maxNumPartitions = list->numPartitions;
  for (std::size_t p = 0; p < table.partitions.size(); ++p) {
    const auto& partition = table.partitions[p];
    auto& info = list->partitionInfo[p];
    info.partitionId = partition.id;
    info.isActive = p % 3 == 0 ? 1 : 0;
    info.numGpus = static_cast<unsigned>(partition.physical_ids.size());
    for (std::size_t g = 0; g < partition.physical_ids.size(); ++g) {
      auto& gpu = info.gpuInfo[g];
      gpu.physicalId = partition.physical_ids[g];
      std::snprintf(gpu.uuid, sizeof(gpu.uuid), "GPU-%08u-0000-0000-0000-000000000000",
                    gpu.physicalId);
      auto bus = table.pci_bus_ids.find(gpu.physicalId);
      std::snprintf(gpu.pciBusId, sizeof(gpu.pciBusId), "%s",
                    bus == table.pci_bus_ids.end() ? "00000000:00:00.0" : bus->second.c_str());
      gpu.maxNumNvLinks = partition.max_nvlinks;
      gpu.numNvLinksAvailable = partition.nvlinks_available;
      gpu.nvlinkLineRateMBps = table.nvlink_line_rate_mbps;
    }
  }
  Write(out / "fm_decode" / ("partitions-" + table.name), StructSeed(*list));
}

void FmSeeds(const fs::path& out) {
  for (const char* name : {"h100", "b200", "a100", "hgx2"}) {
    auto table = gfp::fmsim::FindTable(name);
    if (table.ok()) PartitionListSeed(**table, out);
  }
  abi::UnsupportedFabricPartitionList unsupported{};
  unsupported.version = abi::kUnsupportedFabricPartitionListVersion;
  unsupported.numPartitions = 1;
  unsupported.partitionInfo[0] = {3, 2, {1, 2}};
  std::string bytes = StructSeed(unsupported);
  bytes[0] = 1;
  Write(out / "fm_decode" / "unsupported-one", bytes);
  auto failed = std::make_unique<abi::NvlinkFailedDevices>();
  std::memset(failed.get(), 0, sizeof(*failed));
  failed->version = abi::kNvlinkFailedDevicesVersion;
  failed->numGpus = 1;
  std::snprintf(failed->gpuInfo[0].pciBusId, sizeof(failed->gpuInfo[0].pciBusId),
                "00000000:1B:00.0");
  failed->gpuInfo[0].numPorts = 2;
  failed->gpuInfo[0].portNum[0] = 4;
  failed->gpuInfo[0].portNum[1] = 9;
  bytes = StructSeed(*failed);
  bytes[0] = 2;
  Write(out / "fm_decode" / "nvlink-failed-gpu", bytes);
}

void GrpcSeeds(const fs::path& out) {
  const std::vector<std::string> gpus = {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0",
                                         "0000:61:00.0", "0000:9d:00.0", "0000:c3:00.0",
                                         "0000:d1:00.0", "0000:df:00.0"};
  Write(out / "grpc_handlers" / "options", std::string(1, '\0'));
  for (std::size_t n : {1u, 2u, 4u, 8u}) {
    v1beta1::AllocateRequest allocate;
    auto* c = allocate.add_container_requests();
    for (std::size_t i = 0; i < n; ++i) c->add_devices_ids(gpus[(i + n) % gpus.size()]);
    Write(out / "grpc_handlers" / ("allocate-" + std::to_string(n)),
          std::string(1, '\2') + allocate.SerializeAsString());
    v1beta1::PreferredAllocationRequest preferred;
    auto* p = preferred.add_container_requests();
    for (const auto& g : gpus) p->add_available_deviceids(g);
    p->add_must_include_deviceids(gpus[n - 1]);
    p->set_allocation_size(static_cast<int>(n));
    Write(out / "grpc_handlers" / ("preferred-" + std::to_string(n)),
          std::string(1, '\1') + preferred.SerializeAsString());
    v1beta1::PreStartContainerRequest prestart;
    for (std::size_t i = 0; i < n; ++i) prestart.add_devices_ids(gpus[i]);
    Write(out / "grpc_handlers" / ("prestart-" + std::to_string(n)),
          std::string(1, '\3') + prestart.SerializeAsString());
  }
  v1beta1::AllocateRequest two;
  two.add_container_requests()->add_devices_ids(gpus[0]);
  two.add_container_requests()->add_devices_ids(gpus[0]);
  Write(out / "grpc_handlers" / "allocate-same-gpu-twice",
        std::string(1, '\2') + two.SerializeAsString());
  Write(out / "grpc_handlers" / "allocate-unknown-resource",
        std::string(1, '\x82') + two.SerializeAsString());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <demo journal.db> <corpus dir>\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[2];
  const int rc = JournalSeeds(argv[1], out);
  FmSeeds(out);
  GrpcSeeds(out);
  return rc;
}
