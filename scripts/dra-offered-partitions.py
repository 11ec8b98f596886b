#!/usr/bin/env python3
"""Which Fabric Manager partitions DRA mode offers (SPEC §11), per partition table.

A GPU's slice attribute partition<S> holds one partition id per size, so per size the supported,
non-degraded partitions are taken in id order and a partition is offered when none of its GPUs
is in a partition of that size already offered (a greedy disjoint cover). The others stay
reachable in device-plugin mode only.

  scripts/dra-offered-partitions.py TABLE.json...
prints, per table, the markdown rows that docs/dra.md lists (tests/unit/docs checks they agree).
A table is FM's partition list as in ../shared/reference/partition-tables/: {"partitions": [{"id",
"physical_ids", "max_nvlinks", "nvlinks_available"}, ...]}; a partition whose
nvlinks_available is below max_nvlinks, or with "is_supported": false, is left out as degraded or
unsupported.
"""
import json
import os
import sys


def usable(p):
    return p.get("is_supported", True) and p.get("nvlinks_available", 0) >= p.get("max_nvlinks", 0)


def not_offered(table):
    """{size: [ids of usable partitions DRA does not offer]} for every size with any."""
    by_size = {}
    for p in sorted((p for p in table["partitions"] if usable(p)), key=lambda p: p["id"]):
        by_size.setdefault(len(p["physical_ids"]), []).append(p)
    result = {}
    for size, partitions in sorted(by_size.items()):
        taken, left = set(), []
        for p in partitions:
            gpus = set(p["physical_ids"])
            if gpus & taken:
                left.append(p["id"])
            else:
                taken |= gpus
        if left:
            result[size] = left
    return result


def rows(paths):
    """The markdown rows of docs/dra.md's table, one per table file (sorted by file name)."""
    lines = []
    for path in sorted(paths, key=os.path.basename):
        with open(path) as f:
            table = json.load(f)
        name = os.path.splitext(os.path.basename(path))[0]
        left = not_offered(table)
        cells = "; ".join(f"{size} GPUs: {', '.join(str(i) for i in ids)}" for size, ids in left.items())
        lines.append(f"| `{name}` | {cells or 'none (every partition is offered)'} |")
    return lines


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print("\n".join(rows(sys.argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
