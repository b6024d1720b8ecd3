"""NumPy functions without rules that write into an argument in place: a call is refused at its line, with what to
write instead, rather than run with a value or gradient that misses the write (see Primitive.writes)."""

import numpy as np

from .registry import in_place

in_place(np.copyto, "dst", "write `{dst}[...] = {src}`")
in_place(np.fill_diagonal, "a", "write by indexing: `i = np.arange(min({a}.shape))`, then `{a}[i, i] = {val}`")
in_place(np.put, "a", "write by indexing: `{a}[{ind}] = {v}` (for a 1-D array)")
in_place(np.place, "arr", "write by indexing: `{arr}[{mask}] = ...`, one value for each true entry of the mask")
in_place(np.putmask, "a", "make a new array: `{a} = np.where({mask}, {values}, {a})`")
in_place(np.put_along_axis, "arr", "write by indexing: `{arr}[index] = {values}`")
