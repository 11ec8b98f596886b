#!/usr/bin/env python3
"""scripts/check-layers.py must pass on the real tree and fail on each planted forbidden include
and each namespace that does not follow its folder.

  tests/unit/layers/check_layers_test.py REPO_ROOT
Each case copies src/ to a scratch folder, appends one include (or namespace) to one file and
requires exit status 1 with the file:line of what was planted and the broken rule on stderr; a
clean copy and an allowed include or namespace must pass. Exits 1 if any case does not behave.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# (file under src/, include to append, text stderr must contain besides file:line)
FORBIDDEN = [
    ("statemachine/state.h", '"store/journal.h"', "statemachine -> store is forbidden"),
    ("statemachine/apply.cc", '"engine/engine.h"', "statemachine -> engine is forbidden"),
    ("statemachine/apply.cc", '"../store/journal.h"', "statemachine -> store is forbidden"),
    ("store/journal.h", '"plugin/core/plugin_core.h"', "store -> plugin/core is forbidden"),
    ("store/journal.cc", '"adapters/host/bdf.h"', "store -> adapters/host is forbidden"),
    ("engine/engine.h", '"sim/fm/fm_sim_control.h"', "engine -> sim is forbidden"),
    ("plugin/service.cc", '"tests/common/sm_fixtures.h"', "plugin -> tests is forbidden"),
    ("adapters/fm/fm_abi.h", '"plugin/serve_config.h"', "adapters/fm -> plugin/serve_config.h"),
    ("adapters/host/bdf.cc", '<plugin/core/plugin_core.h>', "adapters/host -> plugin/core"),
    ("common/status.h", '"statemachine/state.h"', "common -> statemachine is forbidden"),
    ("fm_codes/fm_codes.h", '"statemachine/state.h"', "fm_codes -> statemachine is forbidden"),
    ("engine/engine.cc", '"brand_new_folder/thing.h"', "unknown include root"),
    ("plugin/core/saga_runner.cc", '"plugin/metrics/metrics_registry.h"',
     "plugin/core -> plugin/metrics is forbidden"),
    ("plugin/metrics/probe_state.cc", '"plugin/core/plugin_core.h"',
     "plugin/metrics -> plugin/core is forbidden"),
    ("plugin/labels/node_labels.cc", '"plugin/core/plugin_core.h"',
     "plugin/labels -> plugin/core is forbidden"),
    ("adapters/kubelet_naming/vgpu_naming.cc", '"adapters/host/file_reading.h"',
     "adapters/kubelet_naming -> adapters/host is forbidden"),
    # The DRA protos are kubelet_proto like the device-plugin ones, not an unknown root.
    ("adapters/host/bdf.cc", '"dra/v1/api.pb.h"', "adapters/host -> kubelet_proto is forbidden"),
    ("adapters/apiserver/kubeconfig.cc", '"plugin/serve_config.h"',
     "adapters/apiserver -> plugin/serve_config.h is forbidden"),
]
ALLOWED = [("engine/engine.cc", '"statemachine/apply.h"'), ("store/journal.cc", "<vector>"),
           ("adapters/kubelet/unix_channel.cc", '"dra/v1/api.grpc.pb.h"'),
           ("plugin/rpc/device_plugin_service.cc", '"pluginregistration/v1/api.grpc.pb.h"'),
           ("adapters/apiserver/in_cluster.cc", '"adapters/host/file_reading.h"')]

# (file under src/, text to append, text stderr must contain besides file:line; None: allowed)
NAMESPACES = [
    ("adapters/host/bdf.cc", "namespace gfp::adapters {\nint planted;\n}",
     "namespace gfp::adapters in adapters/host/: its namespace is gfp::adapters::host"),
    ("plugin/core/saga_runner.cc", "namespace gfp::plugin {\nint planted;\n}",
     "its namespace is gfp::plugin::core"),
    ("statemachine/apply.cc", "namespace gfp::statemachine {\nint planted;\n}",
     "its namespace is gfp::sm"),
    ("store/journal.cc", "namespace gfp::store::sqlite {\nint planted;\n}", None),
    ("cli/journal_command.cc", "namespace gfp::engine {\nclass Engine;\n}", None),
]


def run(checker, root):
    return subprocess.run([sys.executable, checker, "--root", root], capture_output=True,
                          text=True, check=False)


def plant(root, rel, text):
    """Appends `text` to src/<rel> after an empty line; returns the line number it starts at."""
    path = os.path.join(root, "src", rel)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"\n{text}\n")
    return len(lines) + 2


def main():
    repo = os.path.abspath(sys.argv[1])
    checker = os.path.join(repo, "scripts", "check-layers.py")
    failures = []
    real = run(checker, repo)
    if real.returncode != 0:
        failures.append(f"the real tree fails:\n{real.stderr}")
    with tempfile.TemporaryDirectory() as scratch:
        cases = [(r, f"#include {i}", e) for r, i, e in FORBIDDEN]
        cases += [(r, f"#include {i}", None) for r, i in ALLOWED] + NAMESPACES
        for n, (rel, text, expected) in enumerate(cases):
            root = os.path.join(scratch, str(n))
            shutil.copytree(os.path.join(repo, "src"), os.path.join(root, "src"))
            line = plant(root, rel, text)
            got = run(checker, root)
            where = f"src/{rel}:{line}:"
            if expected is None:
                ok = got.returncode == 0
            else:
                ok = (got.returncode == 1 and where in got.stderr and expected in got.stderr)
            planted = text.replace("\n", " ")
            print(f"{'ok  ' if ok else 'FAIL'} {rel} + {planted} -> exit {got.returncode}")
            if not ok:
                failures.append(f"{rel} + {planted}: want {expected or 'success'} at {where}, "
                                f"got exit {got.returncode}:\n{got.stderr}")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
