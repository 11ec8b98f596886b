#!/bin/bash
# Init container of the gpu-fabric-plugin DaemonSet: waits until every NVIDIA GPU of the node
# (PCI vendor 0x10de, display class 0x03xxxx; NVSwitches stay on the host driver) is on a driver
# that `serve` hands to VMs, so that the plugin never advertises half a node:
#   vfio-pci              whole GPUs (passthrough)
#   nvgrace_gpu_vfio_pci  Grace Hopper / Blackwell GPUs (passthrough, EGM)
#   nvidia                vGPU nodes: a GPU offering mdev types (mdev_supported_types/), an SR-IOV
#                         VF (physfn), or a PF whose VFs are enabled (sriov_numvfs > 0)
# Exits 0 once they all are. After
# WAIT_FOR_VFIO_TIMEOUT_SECONDS it exits 1 naming the GPUs still elsewhere; kubelet then restarts
# it with back-off (the pod shows Init:Error / Init:CrashLoopBackOff), so the wait goes on, visibly.
set -uo pipefail
sysfs=${SYSFS_ROOT:-/sys}
timeout=${WAIT_FOR_VFIO_TIMEOUT_SECONDS:-600}
interval=5

log() { echo "wait-for-vfio: $*"; }

# Whether the GPU at sysfs folder $1, on driver $2, is ready to be handed out.
served() {
  case $2 in
    vfio-pci | nvgrace_gpu_vfio_pci) return 0 ;;
    nvidia)
      [[ -d $1/mdev_supported_types || -L $1/physfn ]] && return 0
      [[ -r $1/sriov_numvfs && $(<"$1/sriov_numvfs") =~ ^[1-9][0-9]*$ ]] && return 0
      ;;
  esac
  return 1
}

# Prints "BDF driver" for every NVIDIA GPU not ready; returns 2 when there is no GPU.
gpus_not_served() {
  local dev bdf driver found=0
  for dev in "$sysfs"/bus/pci/devices/*; do
    [[ -r $dev/vendor && -r $dev/class ]] || continue
    [[ $(<"$dev/vendor") == 0x10de && $(<"$dev/class") == 0x03* ]] || continue
    found=1
    bdf=${dev##*/}
    driver=none
    [[ -L $dev/driver ]] && driver=$(basename "$(readlink "$dev/driver")")
    served "$dev" "$driver" || echo "$bdf $driver"
  done
  ((found)) || return 2
}

deadline=$((SECONDS + timeout))
next_report=0
while :; do
  pending=$(gpus_not_served)
  status=$?
  if ((status == 0)) && [[ -z $pending ]]; then
    log "every NVIDIA GPU under $sysfs/bus/pci/devices is on a driver serve hands out"
    exit 0
  fi
  if ((status == 2)); then
    pending="no NVIDIA GPU (vendor 0x10de, class 0x03xxxx) under $sysfs/bus/pci/devices"
  else
    pending="not ready (BDF driver; vfio-pci, nvgrace_gpu_vfio_pci or nvidia with vGPU expected): ${pending//$'\n'/, }"
  fi
  if ((SECONDS >= deadline)); then
    log "gave up after ${timeout}s: $pending; exiting 1 (kubelet restarts this check)"
    exit 1
  fi
  if ((SECONDS >= next_report)); then
    log "waiting (up to ${timeout}s): $pending"
    next_report=$((SECONDS + 30))
  fi
  sleep "$interval"
done
