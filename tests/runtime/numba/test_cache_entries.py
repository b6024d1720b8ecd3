"""runtime/numba/cache_entries.py: a data file per key, read only under its own key."""

import importlib
import os

import numpy as np
from numba.core import config

from runtime.numba import cache_entries, helper_cache, promotion


def test_an_entry_is_read_only_under_its_own_key(tmp_path):
    """Two processes saving different signatures at once cannot make one key read the other's code: each data file
    is named by its key and holds it; an index entry lost to a concurrent write is a miss."""
    entries = cache_entries.KeyedEntries(str(tmp_path), "helper-12.py311", "stamp")
    entries.save("key-a", "code for a")
    entries.save("key-b", "code for b")
    assert entries.load("key-a") == "code for a" and entries.load("key-b") == "code for b"

    names = entries._load_index()
    entries._save_index({"key-b": names["key-b"]})  # the other process's index won: key-a's entry is lost
    assert entries.load("key-a") is None and entries.load("key-b") == "code for b"

    entries._save_index({"key-a": names["key-b"]})  # an index naming another key's data
    assert entries.load("key-a") is None


def test_generated_functions_and_helpers_keep_their_entries_so(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))  # and put back after the test, as Numba has read it
    (tmp_path / "entries_module.py").write_text("def double(x):\n    return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    compiled = promotion.njit(importlib.import_module("entries_module").double, cache=True)
    assert isinstance(compiled._cache._cache_file, cache_entries.KeyedEntries)
    assert compiled(np.arange(3.0)).tolist() == [0.0, 2.0, 4.0]
    assert compiled.stats.cache_misses and list(tmp_path.rglob("entries_module.double-1.py*.*.nbc"))
    assert isinstance(helper_cache.HelperCache(helper_cache.root)._cache_file, cache_entries.KeyedEntries)


def _age(path, seconds):
    os.utime(path, (path.stat().st_atime - seconds, path.stat().st_mtime - seconds))


def test_a_save_drops_outdated_entries_and_removes_their_files(tmp_path):
    entries = cache_entries.KeyedEntries(str(tmp_path), "helper-12.py311", "stamp")
    entries.outdated = lambda key: key.startswith("old")
    entries.save("old-a", "code of another version")
    old_file = tmp_path / entries._load_index()["old-a"]
    assert old_file.exists()
    entries.save("kept", "code")  # the index named it: no writer is between writing it and naming it
    assert set(entries._load_index()) == {"kept"} and entries.load("kept") == "code" and not old_file.exists()


def test_the_first_save_into_a_stale_index_removes_the_files_no_index_names(tmp_path):
    entries = cache_entries.KeyedEntries(str(tmp_path), "helper-12.py311", "stamp")
    entries.save("kept", "code")
    entries.save("new", "code")
    numbered = tmp_path / "helper-12.py311.1.nbc"  # Numba's own layout
    numbered.write_bytes(b"")
    other_function = tmp_path / "helper-15.py311.1.nbc"
    other_function.write_bytes(b"")
    for path in (numbered, other_function, tmp_path / entries._load_index()["kept"]):
        _age(path, 120)
    young = tmp_path / entries._load_index()["new"]

    restamped = cache_entries.KeyedEntries(str(tmp_path), "helper-12.py311", "the source changed")
    restamped.save("fresh", "code")  # the old index is stale: its files go once old enough (a writer may be between)
    assert set(restamped._load_index()) == {"fresh"} and restamped.load("fresh") == "code"
    assert young.exists() and not numbered.exists() and other_function.exists()
    assert len(list(tmp_path.glob("helper-12.py311.*.nbc"))) == 2
