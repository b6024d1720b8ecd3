"""Which runtime helpers the disk cache holds most compiles of, and how many differ only in a literal argument.

    .venv/bin/python tools/helper_census.py [CACHE_DIR] [--top 30]

reads every index (`*.nbi`) under CACHE_DIR/helpers/ (default: $TRANSPILE_CACHE_DIR, else .cache/transpile), as
runtime/numba/helper_cache.py writes them, and prints per helper its entries (one per argument types compiled) and
how many of them a compile for the arguments' non-literal types would have served (`Literal[int](2)` and
`Literal[int](3)` in the same place count once), and how many repeat argument types another entry has (the
closures of one factory, other caller flags, or a key that differed between processes).  After a test suite this
is where its helper compiles went: each entry is one compile of Numba's whole pipeline (~40 ms at NUMBA_OPT=0).
Indexes that do not load (written by an older Numba, or naming a type from a test module) are counted apart.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import sys
from collections import namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LITERAL = re.compile(r"Literal\[(\w+)\]\((?:[^()]|\([^()]*\))*\)")

Row = namedtuple("Row", "helper entries literal_only same_types")


def _signatures(index_path) -> list[str]:
    """The argument types of each entry of one Numba cache index, as text."""
    with open(index_path, "rb") as handle:
        pickle.load(handle)  # the source stamp
        _, entries = pickle.loads(handle.read())
    return [str(key[0]) for key in entries]


def census(helpers_dir):
    """Rows for every helper index under `helpers_dir`, and the number of indexes that did not load."""
    rows, unreadable = [], 0
    for folder, _, names in os.walk(helpers_dir):
        for name in names:
            if not name.endswith(".nbi"):
                continue
            try:
                signatures = _signatures(os.path.join(folder, name))
            except Exception:  # noqa: BLE001 - an index this process cannot unpickle is reported, not fatal
                unreadable += 1
                continue
            exact = set(signatures)
            unliteral = {_LITERAL.sub(r"\1", signature) for signature in exact}
            helper = os.path.relpath(os.path.join(folder, name), helpers_dir)[: -len(".nbi")]
            rows.append(Row(helper, len(signatures), len(exact) - len(unliteral), len(signatures) - len(exact)))
    return rows, unreadable


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("TRANSPILE_CACHE_DIR", os.path.join(ROOT, ".cache", "transpile"))
    parser.add_argument("cache_dir", nargs="?", default=default)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    import runtime.numba  # noqa: F401 - the types the indexes name (the symbolic zero, records)

    rows, unreadable = census(os.path.join(args.cache_dir, "helpers"))
    entries = sum(row.entries for row in rows)
    literal_only = sum(row.literal_only for row in rows)
    same_types = sum(row.same_types for row in rows)
    print(
        f"{len(rows)} helpers, {entries} compiles kept, {literal_only} of them only for another literal value, "
        f"{same_types} for argument types kept already"
    )
    if unreadable:
        print(f"{unreadable} indexes did not load")
    print(f"{'compiles':>9}{'literal':>9}{'same':>6}  helper")
    for row in sorted(rows, key=lambda row: (-row.entries, row.helper))[: args.top]:
        print(f"{row.entries:>9}{row.literal_only:>9}{row.same_types:>6}  {row.helper}")


if __name__ == "__main__":
    main()
