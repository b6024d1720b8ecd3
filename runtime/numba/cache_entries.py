"""Numba's disk-cache files laid out so that two processes saving one function at once cannot mix their entries.

Numba numbers a function's data files by the length of its index, so two processes saving different signatures
of one function at once (test workers, a background compile and its caller) could both write `<name>.3.nbc`, and
the index would then point one key at the other's code: a test computed `np.mean` as `np.sum` that way.  Here a
data file is named by its key's digest and holds the key; it is written before the index names it, and what is
read is used only if the key stored with it is the key asked for.  An index entry lost to a concurrent write is a
miss (compiled again), never another signature's code.  A save drops the index's outdated entries (``outdated``)
and removes their data files; the first save into an index (a new function's, or one made stale by a change of
the sources) removes every data file of the function that the index does not name, so that the cache does not grow
with every change of the sources.  (Scanning the folder at every save took 0.8% of the test suite's time: 6,000
helper saves into folders of up to 4,000 files.)  Runtime helpers (helper_cache.py) and the functions of generated
modules (promotion.njit) keep their caches this way.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time

from numba.core import caching

_UNNAMED_GRACE = 60  # seconds: a data file younger than this may be a concurrent writer's, not named yet


class KeyedEntries(caching.IndexDataCacheFile):
    """Numba's index and data files, with a data file per key, named by the key's digest and holding the key."""

    def save(self, key, data):
        base = self._index_name[: -len(".nbi")]
        name = f"{base}.{hashlib.sha256(repr(key).encode()).hexdigest()[:20]}.nbc"
        self._save_data(name, (key, data))
        index = self._load_index()
        overloads = {k: v for k, v in index.items() if not self.outdated(k)}
        overloads[key] = name
        self._save_index(overloads)
        if index:
            self._remove(set(index.values()) - set(overloads.values()))
        else:
            self._remove_unnamed(base, set(overloads.values()))

    def _remove(self, names):
        """Remove the data files of the index's outdated entries (named by it, so no writer is still naming them)."""
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self._cache_path, name))

    def outdated(self, key) -> bool:
        """Whether an entry of the index is for code no process of this installation asks for (dropped at a save)."""
        return False

    def _remove_unnamed(self, base, named):
        """Remove this function's data files that the index does not name (entries of an index made stale by a
        change to the source file, Numba's own numbered files, an entry whose naming a concurrent save overwrote),
        once they are old enough that no writer is between writing one and naming it.  A scan of the whole folder:
        only at the first save into an index (none yet, or a stale one); later saves remove what they drop."""
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self._cache_path):
                name = entry.name
                if name.startswith(f"{base}.") and name.endswith(".nbc") and name not in named:
                    with contextlib.suppress(OSError):
                        if now - entry.stat().st_mtime > _UNNAMED_GRACE:
                            os.unlink(entry.path)

    def load(self, key):
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            stored, data = self._load_data(name)
        except (OSError, ValueError, TypeError):  # removed meanwhile, or written by Numba's own layout
            return None
        return data if stored == key else None


def keyed_entries(cache):
    """Make `cache` (a Numba disk cache, just made) keep its entries as KeyedEntries; anything else is left as is."""
    if isinstance(getattr(cache, "_cache_file", None), caching.IndexDataCacheFile):
        impl = cache._impl
        cache._cache_file = KeyedEntries(cache._cache_path, impl.filename_base, impl.locator.get_source_stamp())
    return cache
