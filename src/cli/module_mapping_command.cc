#include "cli/module_mapping_command.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <memory>
#include <system_error>
#include <vector>

#include "adapters/host/file_reading.h"
#include "adapters/mapping/module_mapping.h"
#include "adapters/nvidia_smi/nvidia_smi_parser.h"
#include "cli/flag_values.h"
#include "cli/module_mapping_check.h"
#include "cli/module_mapping_fm.h"
#include "common/text_escape.h"

namespace gfp::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitProblems = 1;
constexpr int kExitUnreadable = 2;

// `nvidia-smi -q` for 16 GPUs is well under 1 MiB; anything far larger is not that text.
constexpr std::size_t kMaxNvidiaSmiBytes = 16 * 1024 * 1024;

struct GenerateFlags {
  std::string nvidia_smi;  // FILE or "-"
  bool from_fabric_manager = false;
  FmFlags fm{"/run/nvidia-fabricmanager/fmpm.sock", "libnvfm.so.1"};
};

struct CheckFlags {
  std::string mapping = "/run/nvidia-fabricmanager/gpu-pci-module-mapping.json";
  std::string sysfs_root = "/sys";
  std::string fabric_manager = "false";
  FmFlags fm{"/run/nvidia-fabricmanager/fmpm.sock", "libnvfm.so.1"};
};

int Fail(int code, const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return code;
}

Result<std::string> ReadStdin(std::size_t max_bytes) {
  std::string content;
  char buffer[8192];
  while (true) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return adapters::host::ErrnoStatus(errno);
    if (n == 0) return content;
    content.append(buffer, static_cast<std::size_t>(n));
    if (content.size() > max_bytes) {
      return ResourceExhausted("input is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
}

// A flag's environment variable set but empty is refused, unless the flag was given.
Status CheckEnvironment(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() > 0 || option->get_envname().empty()) continue;
    GFP_RETURN_IF_ERROR(
        CheckEnvironmentValueNotEmpty(option->get_single_name(), option->get_envname()));
  }
  return Status::Ok();
}

// A mapping serve and `check` would refuse is not written (exit 1, nothing on stdout).
int PrintMapping(const std::string& json) {
  constexpr std::size_t kMax = adapters::mapping::kMaxModuleMappingFileBytes;
  if (json.size() > kMax) {
    return Fail(kExitProblems, "the mapping would be " + std::to_string(json.size()) +
                                   " bytes, more than the " + std::to_string(kMax) +
                                   " that serve and check read; nothing written (is the input one "
                                   "node's nvidia-smi -q?)");
  }
  std::cout << json << std::flush;
  return kExitOk;
}

int GenerateFromNvidiaSmi(const std::string& input) {
  const std::string source = input == "-" ? "<stdin>" : input;
  auto text = input == "-" ? ReadStdin(kMaxNvidiaSmiBytes)
                           : adapters::host::ReadWholeFile(input, kMaxNvidiaSmiBytes);
  if (!text.ok()) {
    return Fail(kExitUnreadable, "cannot read nvidia-smi output " + EscapeControl(source) + ": " +
                                     text.status().message());
  }
  auto mapping = adapters::nvidia_smi::ParseNvidiaSmiModuleIds(*text, source);
  if (!mapping.ok()) return Fail(kExitProblems, mapping.status().message());
  return PrintMapping(adapters::nvidia_smi::FormatModuleMappingJson(*mapping));
}

int GenerateFromFabricManager(const FmFlags& fm_flags) {
  auto partitions = ReadFmPartitions(fm_flags);
  if (!partitions.ok()) return Fail(kExitUnreadable, partitions.status().message());
  auto mapping = MappingFromFmPartitions(*partitions);
  if (!mapping.ok()) return Fail(kExitProblems, mapping.status().message());
  return PrintMapping(adapters::nvidia_smi::FormatModuleMappingJson(*mapping));
}

int Generate(const GenerateFlags& flags, const CLI::App& command) {
  if (Status env = CheckEnvironment(command); !env.ok()) {
    return Fail(kExitUnreadable, env.message());
  }
  const bool from_smi = !flags.nvidia_smi.empty();
  if (from_smi == flags.from_fabric_manager) {
    return Fail(kExitUnreadable,
                "module-mapping generate needs exactly one of --from-nvidia-smi FILE|- and "
                "--from-fabric-manager");
  }
  return from_smi ? GenerateFromNvidiaSmi(flags.nvidia_smi) : GenerateFromFabricManager(flags.fm);
}

int Check(const CheckFlags& flags, const CLI::App& command) {
  if (Status env = CheckEnvironment(command); !env.ok()) {
    return Fail(kExitUnreadable, env.message());
  }
  auto with_fm = ParseBoolFlag("fabric-manager", flags.fabric_manager);
  if (!with_fm.ok()) return Fail(kExitUnreadable, with_fm.status().message());
  std::optional<std::vector<adapters::fm::PartitionInfo>> partitions;
  if (*with_fm) {
    auto read = ReadFmPartitions(flags.fm);
    if (!read.ok()) return Fail(kExitUnreadable, read.status().message());
    partitions = std::move(*read);
  }
  auto report = CheckModuleMappingFile(flags.mapping, flags.sysfs_root, partitions);
  if (!report.ok()) return Fail(kExitUnreadable, report.status().message());
  for (const std::string& note : report->notes) std::cerr << "note: " << note << "\n";
  for (const std::string& problem : report->problems) std::cout << problem << "\n";
  if (!report->problems.empty()) return kExitProblems;
  std::cout << report->summary << "\n";
  return kExitOk;
}

void AddFmOptions(CLI::App* command, FmFlags* fm) {
  command
      ->add_option("--fm-address", fm->address,
                   "FM SDK endpoint: /unix/socket/path or IPv4[:port] (default port 6666)")
      ->envname("FABRIC_MANAGER_ADDRESS");
  command->add_option("--fm-library", fm->library, "FM SDK shared library (dlopen)")
      ->envname("NVFM_LIBRARY_PATH");
}

void AddGenerate(CLI::App* parent, int* exit_code) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* generate =
      parent->add_subcommand("generate", "Print the BDF -> module id JSON file (SPEC §4.2)");
  generate->add_option("--from-nvidia-smi", flags->nvidia_smi,
                       "`nvidia-smi -q` text taken while the GPUs are on the nvidia driver "
                       "(FILE, or - for stdin)");
  generate->add_flag("--from-fabric-manager", flags->from_fabric_manager,
                     "from FM's partition table (HGX A100 / HGX-2 class: FM reports bus ids)");
  AddFmOptions(generate, &flags->fm);
  generate->callback([flags, generate, exit_code] { *exit_code = Generate(*flags, *generate); });
}

void AddCheck(CLI::App* parent, int* exit_code) {
  auto flags = std::make_shared<CheckFlags>();
  CLI::App* check = parent->add_subcommand(
      "check", "Check the file against the GPUs in sysfs (and Fabric Manager's partitions)");
  check->add_option("--pci-module-mapping", flags->mapping, "BDF -> GPU module id JSON")
      ->envname("GPU_PCI_MODULE_MAPPING_PATH");
  check->add_option("--sysfs-root", flags->sysfs_root, "root of the sysfs tree to scan");
  check
      ->add_option("--fabric-manager", flags->fabric_manager,
                   "also check against FM's partition table (1/0, true/false, t/f)")
      ->expected(0, 1)
      ->envname("ENABLE_FABRIC_MANAGER");
  AddFmOptions(check, &flags->fm);
  check->callback([flags, check, exit_code] { *exit_code = Check(*flags, *check); });
}

}  // namespace

void AddModuleMappingCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "module-mapping", "Make and check the BDF -> GPU module id file (docs/module-mapping.md)");
  command->require_subcommand(1);
  AddGenerate(command, exit_code);
  AddCheck(command, exit_code);
}

}  // namespace gfp::cli
