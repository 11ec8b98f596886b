#!/usr/bin/env python3
"""docs/dra.md lists the partitions DRA mode does not offer on each reference partition table
(SPEC §11: per size, a greedy disjoint cover of the supported, non-degraded partitions in id
order). This recomputes that list from ../shared/reference/partition-tables/ with
scripts/dra-offered-partitions.py and fails when the doc disagrees; it also checks the cover's
defining properties on every table, apart from the script's loop, and that a degraded partition
is left out.

  dra_partitions_test.py SOURCE_DIR
exit 0 pass, 1 fail, 77 skipped (no ../shared/reference/partition-tables next to SOURCE_DIR)
"""
import copy
import glob
import importlib.util
import json
import os
import sys

BEGIN = "<!-- dra-offered-partitions: begin"
END = "<!-- dra-offered-partitions: end -->"


def load_script(source):
    path = os.path.join(source, "scripts", "dra-offered-partitions.py")
    spec = importlib.util.spec_from_file_location("dra_offered_partitions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def doc_rows(source):
    with open(os.path.join(source, "docs", "dra.md")) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        return None
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return [line for line in block.splitlines()[1:] if line.startswith("| `")]


def cover_problems(name, table, left_out):
    """The offered partitions of each size are disjoint, and each one left out overlaps an
    offered partition of its size with a smaller id (so the greedy pass had to skip it)."""
    problems = []
    usable = [p for p in table["partitions"] if p["nvlinks_available"] >= p["max_nvlinks"]]
    for size in {len(p["physical_ids"]) for p in usable}:
        of_size = [p for p in usable if len(p["physical_ids"]) == size]
        skipped = set(left_out.get(size, []))
        offered = [p for p in of_size if p["id"] not in skipped]
        for a in offered:
            for b in offered:
                if a["id"] < b["id"] and set(a["physical_ids"]) & set(b["physical_ids"]):
                    problems.append(f"{name}: offered {size}-GPU partitions {a['id']} and {b['id']} share GPUs")
        for p in of_size:
            if p["id"] in skipped and not any(
                    o["id"] < p["id"] and set(o["physical_ids"]) & set(p["physical_ids"]) for o in offered):
                problems.append(f"{name}: {size}-GPU partition {p['id']} is left out but overlaps no offered one before it")
    return problems


def main():
    source = sys.argv[1]
    tables_dir = os.path.normpath(os.path.join(source, "..", "shared", "reference", "partition-tables"))
    paths = sorted(glob.glob(os.path.join(tables_dir, "*.json")))
    if not paths:
        print(f"skipped: no partition tables in {tables_dir}")
        return 77
    script = load_script(source)
    problems = []
    want, have = script.rows(paths), doc_rows(source)
    if have is None:
        problems.append(f"docs/dra.md has no block between '{BEGIN} …' and '{END}'")
    elif have != want:
        problems.append("docs/dra.md's list of partitions DRA does not offer disagrees with the tables;\n"
                        "  docs/dra.md:\n    " + "\n    ".join(have) +
                        "\n  recomputed (scripts/dra-offered-partitions.py):\n    " + "\n    ".join(want))
    for path in paths:
        with open(path) as f:
            table = json.load(f)
        problems += cover_problems(os.path.basename(path), table, script.not_offered(table))
    # With both one-board 8-GPU partitions of the A100 16-GPU table degraded, the cross-board
    # pair 3 and 4 is offered and 5, 6 are left out; the degraded ones are not listed at all.
    a100 = os.path.join(tables_dir, "hgx-a100-16gpu.json")
    if os.path.exists(a100):
        with open(a100) as f:
            table = copy.deepcopy(json.load(f))
        for p in table["partitions"]:
            if p["id"] in (1, 2):
                p["nvlinks_available"] = p["max_nvlinks"] - 1
        got = script.not_offered(table).get(8)
        if got != [5, 6]:
            problems.append(f"hgx-a100-16gpu with partitions 1, 2 degraded: 8-GPU left out {got}, want [5, 6]")
    for p in problems:
        print(p)
    print(f"dra_partitions_test: {len(paths)} tables, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
