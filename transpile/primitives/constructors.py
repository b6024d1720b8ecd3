"""Array constructors: their outputs are constants, so they have no derivative."""
import numpy as np

from .registry import defprim

for _name, _params in [("zeros", ["shape", "dtype=None"]), ("ones", ["shape", "dtype=None"]),
                       ("empty", ["shape", "dtype=None"]),
                       ("zeros_like", ["a", "dtype=None"]), ("ones_like", ["a", "dtype=None"]),
                       ("full", ["shape", "fill_value", "dtype=None"]),
                       ("eye", ["N", "M=None", "k=0", "dtype=None"]), ("identity", ["n", "dtype=None"]),
                       ("arange", None), ("linspace", ["start", "stop", "num=50", "endpoint=True"]),
                       ("argmax", ["a", "axis=None"]), ("argmin", ["a", "axis=None"]),
                       ("argsort", ["a", "axis=-1"])]:
    if _params is None:
        defprim(_name, getattr(np, _name), path=f"np.{_name}", params=[], varargs="args", nondiff=True)
    else:
        defprim(_name, getattr(np, _name), path=f"np.{_name}", params=_params, nondiff=True,
                methods=[_name] if _name in ("argmax", "argmin", "argsort") else [])
