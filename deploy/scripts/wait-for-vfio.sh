#!/bin/bash
# Init container of the gpu-fabric-plugin DaemonSet: waits until every NVIDIA GPU of the node
# (PCI vendor 0x10de, display class 0x03xxxx; NVSwitches stay on the host driver) is bound to
# vfio-pci, so that the plugin never advertises half a node. Exits 0 once they all are. After
# WAIT_FOR_VFIO_TIMEOUT_SECONDS it exits 1 naming the GPUs still elsewhere; kubelet then restarts
# it with back-off (the pod shows Init:Error / Init:CrashLoopBackOff), so the wait goes on, visibly.
set -uo pipefail
sysfs=${SYSFS_ROOT:-/sys}
timeout=${WAIT_FOR_VFIO_TIMEOUT_SECONDS:-600}
interval=5

log() { echo "wait-for-vfio: $*"; }

# Prints "BDF driver" for every NVIDIA GPU not bound to vfio-pci; returns 2 when there is no GPU.
gpus_not_on_vfio() {
  local dev bdf driver found=0
  for dev in "$sysfs"/bus/pci/devices/*; do
    [[ -r $dev/vendor && -r $dev/class ]] || continue
    [[ $(<"$dev/vendor") == 0x10de && $(<"$dev/class") == 0x03* ]] || continue
    found=1
    bdf=${dev##*/}
    driver=none
    [[ -L $dev/driver ]] && driver=$(basename "$(readlink "$dev/driver")")
    [[ $driver == vfio-pci ]] || echo "$bdf $driver"
  done
  ((found)) || return 2
}

deadline=$((SECONDS + timeout))
next_report=0
while :; do
  pending=$(gpus_not_on_vfio)
  status=$?
  if ((status == 0)) && [[ -z $pending ]]; then
    log "every NVIDIA GPU under $sysfs/bus/pci/devices is bound to vfio-pci"
    exit 0
  fi
  if ((status == 2)); then
    pending="no NVIDIA GPU (vendor 0x10de, class 0x03xxxx) under $sysfs/bus/pci/devices"
  else
    pending="not bound to vfio-pci (BDF driver): ${pending//$'\n'/, }"
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
