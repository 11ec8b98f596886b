#!/usr/bin/env bash
# The init container's script on fake sysfs trees (scripts/check-deploy.sh):
#   tests/deploy/wait-for-vfio-test.sh deploy/scripts/wait-for-vfio.sh
set -euo pipefail
script=$(realpath "$1")
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
failures=0

add_device() {  # add_device BDF VENDOR CLASS [DRIVER]
  local dev=$tree/bus/pci/devices/$1
  mkdir -p "$dev"
  echo "$2" >"$dev/vendor"
  echo "$3" >"$dev/class"
  if [[ -n ${4:-} ]]; then
    mkdir -p "$tree/bus/pci/drivers/$4"
    ln -sfn "../../drivers/$4" "$dev/driver"
  fi
}

expect() {  # expect RC TEXT: run the script on the tree with no wait
  local output rc=0
  output=$(SYSFS_ROOT=$tree WAIT_FOR_VFIO_TIMEOUT_SECONDS=0 bash "$script" 2>&1) || rc=$?
  if [[ $rc -ne $1 ]] || ! grep -qF -- "$2" <<<"$output"; then
    echo "wait-for-vfio-test: expected exit $1 and '$2', got exit $rc: $output" >&2
    failures=$((failures + 1))
  fi
}

expect 1 "no NVIDIA GPU (vendor 0x10de, class 0x03xxxx)"
add_device 0000:05:00.0 0x10de 0x068000 nvidia     # an NVSwitch: stays on the host driver
add_device 0000:00:1f.0 0x8086 0x030000 i915       # not NVIDIA
add_device 0000:1b:00.0 0x10de 0x030200 nvidia
add_device 0000:2b:00.0 0x10de 0x030200
expect 1 "(BDF driver; vfio-pci, nvgrace_gpu_vfio_pci or nvidia with vGPU expected): 0000:1b:00.0 nvidia, 0000:2b:00.0 none"
add_device 0000:1b:00.0 0x10de 0x030200 vfio-pci
add_device 0000:2b:00.0 0x10de 0x030200 vfio-pci
expect 0 "every NVIDIA GPU under $tree/bus/pci/devices is on a driver serve hands out"

# Grace: GPUs on nvgrace_gpu_vfio_pci.
add_device 0009:01:00.0 0x10de 0x030200 nvgrace_gpu_vfio_pci
expect 0 "is on a driver serve hands out"

# vGPU (SR-IOV): a PF on nvidia waits until its VFs exist; the VFs (physfn) are on nvidia.
add_device 0000:3b:00.0 0x10de 0x030200 nvidia
echo 0 >"$tree/bus/pci/devices/0000:3b:00.0/sriov_numvfs"
expect 1 "0000:3b:00.0 nvidia"
echo 16 >"$tree/bus/pci/devices/0000:3b:00.0/sriov_numvfs"
add_device 0000:3b:00.4 0x10de 0x030200 nvidia
ln -s ../0000:3b:00.0 "$tree/bus/pci/devices/0000:3b:00.4/physfn"
expect 0 "is on a driver serve hands out"

# vGPU (mdev): a GPU on nvidia offering mdev types; one on nvidia without is not ready.
add_device 0000:4b:00.0 0x10de 0x030200 nvidia
expect 1 "0000:4b:00.0 nvidia"
mkdir -p "$tree/bus/pci/devices/0000:4b:00.0/mdev_supported_types/nvidia-256"
expect 0 "is on a driver serve hands out"

# A driver serve does not hand out (nouveau) is not ready, whatever else the device offers.
add_device 0000:5b:00.0 0x10de 0x030200 nouveau
mkdir -p "$tree/bus/pci/devices/0000:5b:00.0/mdev_supported_types"
expect 1 "0000:5b:00.0 nouveau"
((failures == 0)) && echo "wait-for-vfio-test: 9 passed, 0 failed"
((failures == 0))
