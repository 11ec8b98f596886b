#!/usr/bin/env python3
"""Checks that every #include under src/ goes in an allowed direction (docs/architecture.md), and
that each file's namespace follows its folder (src/adapters/fm -> gfp::adapters::fm).

Each file belongs to the longest folder (or file) of LAYERS that contains it; an include belongs
to the longest entry its path starts with. A file may include its own folder and what its
entry allows, nothing else. An include whose root is in no entry is an error too, so a new
folder must be added to the table (and its directions thought about) before it is used.

  scripts/check-layers.py [--root DIR]   exit 0: all directions allowed and namespaces follow
                                         folders; 1: violations, each
                                         printed as file:line, the include and the rule broken
  scripts/check-layers.py --help         prints this and the table of allowed directions
"""
import argparse
import os
import re
import sys

# folder (under src/, or a single header) -> (what it may include, why). Own folder is implicit.
LAYERS = {
    "common": ([], "the base: errors as values, escaping, log context; includes nothing else"),
    "fm_codes": (["common"], "FM's return-code table, shared by the state machine, the FM "
                 "adapter and the simulator"),
    "process": (["common"], "the child-process harness"),
    "statemachine": (["common", "fm_codes"], "the pure core: only common (and the FM code "
                     "table); never store, engine, adapters or plugin"),
    "journal_text": (["common", "statemachine"], "display text of events"),
    "store": (["common"], "the journal knows nothing of events, adapters or the plugin"),
    "engine": (["common", "statemachine", "store"], "decide -> journal -> apply"),
    "adapters/kubelet_naming": (["common"], "the names kubelet and KubeVirt see: pure strings"),
    "adapters/host": (["common", "adapters/kubelet_naming"],
                      "sysfs, /dev and files of the host; no plugin, no other adapter"),
    "adapters/mapping": (["common", "adapters/host"], "the BDF -> module id file (SPEC 4.2)"),
    "adapters/nvidia_smi": (["common", "adapters/host"],
                            "nvidia-smi -q text, for module-mapping generate only"),
    "adapters/fm": (["common", "fm_codes", "adapters/host"],
                    "Fabric Manager through dlopen; never the plugin or the state machine"),
    "adapters/kubelet": (["common", "kubelet_proto"], "kubelet's wire; never the plugin"),
    "adapters/apiserver": (["common", "adapters/host"],
                           "where the API server is and how to authenticate (kubeconfig, "
                           "service account), the HTTPS client (libcurl) and the list-watch "
                           "cache; files read through adapters/host; never the plugin"),
    "kubelet_proto": ([], "code generated from proto/ (deviceplugin, podresources, dra, "
                      "pluginregistration)"),
    "plugin/serve_config.h": ([], "serve's settings, a plain struct every plugin part reads"),
    "plugin/core/core_observer.h": ([], "what the core reports (an interface): metrics "
                                    "implement it, so the core never includes them"),
    "plugin/core": (["common", "fm_codes", "statemachine", "journal_text", "engine",
                     "adapters/host", "adapters/kubelet_naming", "adapters/mapping",
                     "adapters/fm", "adapters/kubelet", "plugin/serve_config.h",
                     "plugin/core/core_observer.h"],
                    "the plugin's jobs; reports through CoreObserver, never includes grpc, "
                    "labels, metrics or the wiring"),
    "plugin/rpc": (["common", "kubelet_proto", "adapters/kubelet", "adapters/kubelet_naming",
                     "plugin/core",
                     "plugin/core/core_observer.h"],
                    "kubelet's gRPC servers over the core"),
    "plugin/labels": (["common", "statemachine", "adapters/host"],
                      "the NFD feature file; never the core"),
    "plugin/dra": (["common", "statemachine", "adapters/host"],
                   "DRA mode (SPEC 11): the ResourceSlice and a claim's files from facts, the "
                   "files written through adapters/host"),
    "plugin/dra_mode": (["common", "statemachine", "engine", "adapters/host",
                         "adapters/apiserver", "adapters/kubelet_naming", "adapters/mapping",
                         "adapters/fm", "adapters/kubelet", "plugin/core", "plugin/dra",
                         "plugin/serve_config.h", "plugin/core/core_observer.h"],
                        "DRA mode's jobs (SPEC 11): Prepare/Unprepare through the core's "
                        "saga, the slice publisher and claim reconciliation, the API server "
                        "behind one interface (KubeApi)"),
    "plugin/metrics": (["common", "plugin/core/core_observer.h"],
                       "SPEC 8.1 metrics and probes: observe the core through CoreObserver only"),
    "plugin": (["common", "statemachine", "engine", "adapters/host", "adapters/mapping",
                "adapters/fm",
                "adapters/kubelet", "adapters/apiserver", "plugin/core", "plugin/rpc",
                "plugin/labels", "plugin/metrics", "plugin/dra", "plugin/dra_mode",
                "plugin/serve_config.h"],
               "the wiring: BuildCore and the serve loop connect every plugin part"),
    "cli": (["common", "statemachine", "journal_text", "store", "engine", "process",
             "adapters/host", "adapters/mapping", "adapters/nvidia_smi", "adapters/fm", "plugin",
             "plugin/labels", "plugin/metrics", "plugin/serve_config.h"],
            "the binary's verbs (`demo` runs the demo program, which lives in sim/demo)"),
    "cli/main.cc": (["common", "cli"], "main: every verb"),
    "sim": (None, "src/ never includes sim/: simulators are not part of the product"),
    "tests": (None, "src/ never includes tests/"),
}

# Include roots that are not folders of src/ with the same name.
ALIASES = {"deviceplugin": "kubelet_proto", "podresources": "kubelet_proto",
           "dra": "kubelet_proto", "pluginregistration": "kubelet_proto"}

# Folders whose namespace is not their path: the base, and the state machine's short name that
# every layer above writes (sm::State).
NAMESPACES = {"common": "gfp", "statemachine": "gfp::sm"}

NAMESPACE = re.compile(r'^namespace\s+(gfp(?:::\w+)*)\s*\{')
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def module_of(path):
    """The LAYERS entry a src-relative path belongs to (longest match), or None."""
    parts = path.split("/")
    for n in range(len(parts), 0, -1):
        key = "/".join(parts[:n])
        if key in LAYERS:
            return key
    return ALIASES.get(parts[0])


def check_file(root, rel):
    """Yields (line number, include, message) for each forbidden include in src/<rel>."""
    own = module_of(rel)
    allowed, why = LAYERS[own]
    with open(os.path.join(root, "src", rel), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            bracket, target = m.groups()
            if target.startswith("."):  # relative: resolve against the including file
                target = os.path.normpath(os.path.join(os.path.dirname(rel), target))
            elif bracket == '"' and "/" not in target:
                target = os.path.join(os.path.dirname(rel), target)
            to = module_of(target)
            if to is None:
                if bracket == '"':
                    yield number, target, (f"unknown include root: add '{target.split('/')[0]}'"
                                           " to scripts/check-layers.py's table")
                continue  # a system or third-party header
            if to == own or to in allowed:
                continue
            may = ", ".join(allowed) if allowed else "nothing else"
            rule = LAYERS[to][1] if LAYERS[to][0] is None else why
            yield number, target, f"{own} -> {to} is forbidden ({rule}); {own} may include: {may}"


def expected_namespace(rel):
    folder = os.path.dirname(rel)
    return NAMESPACES.get(folder, "gfp::" + folder.replace("/", "::"))


FORWARD_DECLARATION = re.compile(r'^\s*(class|struct)\s+\w+;\s*$')


def only_forward_declarations(lines, start):
    """True when the namespace opened at lines[start] holds only `class X;` / `struct X;`."""
    for line in lines[start + 1:]:
        if line.startswith("}"):
            return True
        if line.strip() and not FORWARD_DECLARATION.match(line):
            return False
    return False


def check_namespaces(root, rel):
    """Yields (line number, message) for each gfp namespace src/<rel> opens outside its folder's
    (a block of forward declarations of another folder's types excepted)."""
    expected = expected_namespace(rel)
    with open(os.path.join(root, "src", rel), encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for index, line in enumerate(lines):
        m = NAMESPACE.match(line)
        if not m or m.group(1) == expected or m.group(1).startswith(expected + "::"):
            continue
        if not only_forward_declarations(lines, index):
            yield index + 1, (f"namespace {m.group(1)} in {os.path.dirname(rel)}/: its "
                              f"namespace is {expected} (namespaces follow folders)")


def source_files(root):
    src = os.path.join(root, "src")
    for dirpath, _, files in os.walk(src):
        for name in sorted(files):
            if name.endswith((".h", ".cc", ".cpp", ".hpp", ".c", ".proto.h")):
                yield os.path.relpath(os.path.join(dirpath, name), src)


def check_table():
    """The table itself: every allowed entry exists and the directions form no cycle."""
    problems = []
    for own, (allowed, _) in LAYERS.items():
        for to in allowed or []:
            if to not in LAYERS:
                problems.append(f"table: {own} allows unknown entry {to}")
    state = {}

    def visit(node, stack):
        state[node] = 1
        for to in LAYERS[node][0] or []:
            if to not in LAYERS:
                continue
            if state.get(to) == 1:
                problems.append("table: cycle " + " -> ".join(stack + [node, to]))
            elif to not in state:
                visit(to, stack + [node])
        state[node] = 2

    for node in LAYERS:
        if node not in state:
            visit(node, [])
    return problems


def print_table():
    print(__doc__)
    print("Allowed include directions (own folder always allowed):")
    for own, (allowed, why) in LAYERS.items():
        may = "never included from src/" if allowed is None else (", ".join(allowed) or "-")
        print(f"  {own:24} -> {may}\n  {'':24}    ({why})")
    print("Include roots that are not src/ folders: " +
          ", ".join(f"{k}/ = {v}" for k, v in ALIASES.items()))


def main():
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("-h", "--help", action="store_true")
    args = parser.parse_args()
    if args.help:
        print_table()
        return 0
    problems = check_table()
    count = 0
    for rel in source_files(args.root):
        if module_of(rel) is None or LAYERS[module_of(rel)][0] is None:
            problems.append(f"src/{rel}: in no folder of the table: add its folder to "
                            "scripts/check-layers.py")
            continue
        for number, target, message in check_file(args.root, rel):
            problems.append(f'src/{rel}:{number}: #include "{target}": {message}')
        for number, message in check_namespaces(args.root, rel):
            problems.append(f"src/{rel}:{number}: {message}")
        count += 1
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} forbidden include(s), namespace(s) or table "
              "problem(s)",
              file=sys.stderr)
        return 1
    print(f"check-layers: {count} files under src/, every include in an allowed direction, "
          "every namespace its folder's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
