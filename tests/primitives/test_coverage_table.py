"""docs/coverage.md and README's summary of it are what tools/coverage_table.py generates from the registry."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import transpile  # noqa: F401  (fills the registry)
from transpile.backends.numba import lowerings  # noqa: F401  (fills the Numba backend's table)
from transpile.backends.tables import lowering
from transpile.primitives import registry

ROOT = Path(__file__).resolve().parents[2]
_VERSIONS = re.compile(r"with (NumPy [\d.]+ and Numba [\d.]+)")


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("coverage_table", ROOT / "tools" / "coverage_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.fixture(scope="module")
def table(tool):
    return tool.rows_by_namespace()


def _rows(text):
    """{function: (reverse, forward, batching)} from the markdown table."""
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`np."):
            found[cells[0].strip("`")] = tuple(cells[1:4])
    return found


def test_the_committed_table_and_summary_are_current(tool):
    wanted = tool.generate()
    committed = tool.TABLE.read_text() if tool.TABLE.exists() else ""
    have = _VERSIONS.search(committed)
    run = _VERSIONS.search(wanted[tool.TABLE])
    if have is not None and have.group(1) == run.group(1):
        for path, text in wanted.items():
            assert path.read_text() == text, (
                f"{path.relative_to(ROOT)} is not what the registry gives: run `{tool.COMMAND}` and commit the result"
            )
        return
    # Generated with other versions (NumPy's names, Numba's functions): the rules of the functions both list.
    old, new = _rows(committed), _rows(wanted[tool.TABLE])
    changed = sorted(f for f in old.keys() & new.keys() if old[f] != new[f])
    assert old and not changed, (
        f"docs/coverage.md ({have and have.group(1)}) differs from the registry ({run.group(1)}) for {changed[:10]}: "
        f"run `{tool.COMMAND}` and commit the result"
    )


def test_the_rows_are_read_back_whole(tool, table):
    """What the comparison across versions above reads: every row of the table, with its cells."""
    rows = _rows(tool.render_table(table))
    assert rows == {r.function: (r.reverse, r.forward, r.batching) for rs in table.values() for r in rs}


def test_check_names_the_command_when_out_of_date(tool, tmp_path, monkeypatch, capsys):
    stale = tmp_path / "coverage.md"
    stale.write_text("# an old table\n")
    readme = tmp_path / "README.md"
    readme.write_text(f"text\n{tool.SUMMARY_BEGIN}\nold counts\n{tool.SUMMARY_END}\nmore text\n")
    monkeypatch.setattr(tool, "TABLE", stale)
    monkeypatch.setattr(tool, "README", readme)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    assert tool.main(["--check"]) == 1
    assert f"coverage.md is out of date: run `{tool.COMMAND}`" in capsys.readouterr().err
    assert stale.read_text() == "# an old table\n"  # --check writes nothing
    assert tool.main([]) == 0
    assert tool.main(["--check"]) == 0
    text = readme.read_text()
    assert text.startswith("text\n") and text.endswith("more text\n") and "old counts" not in text


def test_every_registry_entry_of_a_public_function_has_its_row(tool, table):
    """Each public function the registry has rules for shows them; nothing else claims a rule."""
    by_path = {row.function: row for rows in table.values() for row in rows}
    for prefix, module in tool.NAMESPACES:
        for key, obj in tool.public_functions(module):
            row, prim = by_path[f"{prefix}.{key}"], registry.lookup(obj)
            if prim is None:
                assert row.reverse in ("not yet", "refused") and row.forward == row.reverse, row
            elif prim.nondiff:
                assert (row.reverse, row.forward) == ("nondiff", "nondiff"), row
            else:
                assert row.reverse == ("yes" if prim.vjp else "not yet"), row
                assert row.forward == ("yes" if prim.jvp else "not yet"), row
            if prim is not None and lowering(prim, "numba"):
                assert row.jit in ("yes", "partly"), row


def test_only_functions_are_listed(tool, table):
    listed = {row.function for rows in table.values() for row in rows}
    assert {"np.tanh", "np.sum", "np.r_", "np.linalg.solve", "np.fft.fft"} <= listed
    assert not {"np.float64", "np.ndarray", "np.pi", "np.newaxis", "np.linalg", "np.linalg.LinAlgError"} & listed
    assert not any(name.split(".")[-1].startswith("_") for name in listed)
    for rows in table.values():
        names = [row.function for row in rows]
        assert names == sorted(names)


def test_what_jit_says_follows_pending(tool, table, monkeypatch):
    """A function whose own runtime helper has a Numba version (np.r_ is rt.r_) compiles; listed in pending.py it
    does not, with the reason; one whose rules reach such a helper compiles only partly, and the note gives
    pending.py's reason."""
    from runtime.numba.pending import NO_NUMBA_VERSION

    by_path = {row.function: row for rows in table.values() for row in rows}
    assert by_path["np.r_"].jit == "yes"
    monkeypatch.setitem(NO_NUMBA_VERSION, "r_", "a reason")
    listed = tool._row("np.r_", np.r_, registry, tool._Numba(), None)
    assert listed.jit == "not yet" and "a reason" in listed.notes
    monkeypatch.delitem(NO_NUMBA_VERSION, "r_")
    reasons = set(NO_NUMBA_VERSION.values())
    for row in by_path.values():
        if row.jit == "partly":
            noted = row.notes.split("jit: ", 1)[1].split("; ")
            assert noted and set(noted) <= reasons, row


def test_integer_ufuncs_are_nondifferentiable_by_their_types(tool):
    assert tool._integer_result(np.signbit) and tool._integer_result(np.gcd) and tool._integer_result(np.isnan)
    assert not tool._integer_result(np.tanh) and not tool._integer_result(np.frexp) and not tool._integer_result(np.sum)
