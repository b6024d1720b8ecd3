"""TranspileError: a user-facing error that points at file:line:column with a caret."""

from __future__ import annotations

import linecache
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in the user's source: file, 1-based line, 0-based column."""

    filename: str
    lineno: int
    col: int = 0

    def text(self) -> str:
        return linecache.getline(self.filename, self.lineno).rstrip("\n")

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"


class TranspileError(Exception):
    """Raised for code transpile cannot handle, with where it is and what to do instead."""

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

    def move_to(self, location: Location):
        """Point this error at `location` instead (the user's line behind a line of generated code)."""
        self.location = location
        self.args = (self._render(),)

    def _render(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(f"{self.location}: {self.message}")
            line = self.location.text()
            if line:
                parts.append(f"    {line}")
                parts.append("    " + " " * self.location.col + "^")
        else:
            parts.append(self.message)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class TranspileTypeError(TranspileError, TypeError):
    """A value of a type its transformation cannot take (an integer output for grad), where JAX raises TypeError."""


def no_rule_hint(function: str, argument: str, rule: str) -> str:
    """What to do where `function` has no derivative rule (`rule`: "vjp" or "jvp") for its `argument`: keep
    derivatives from it, or put the call in a function with a rule of the user's own (tp.custom_vjp, tp.custom_jvp)."""
    if function == "rt.per_example":
        return (
            "vmap runs this line example by example (no batching rule, or an index that differs per example), and "
            "that loop could not be written out to be differentiated: differentiate each example and vmap that "
            "(vmap(grad(f)), summed over the examples for the gradient of a sum)"
        )
    if function == "rt.make_fields":
        return (
            "the meta fields of a registered dataclass are static, as in JAX: the value of one must not depend on "
            "the differentiated inputs; wrap it in tp.stop_gradient(...) (`scale=tp.stop_gradient(p.scale)`), or "
            "register that field as a data field"
        )
    if function.startswith("rt."):
        return (
            f"`{function}` is part of the code transpile generated (a derivative, or vmap's batched code): this "
            "derivative of a derivative, or of vmapped code, has no rule yet; give the function you differentiate "
            f"(the one you pass to vmap, or differentiate again) a rule of your own (tp.custom_{rule}, README: API)"
        )
    named = "." in function  # np.partition, math.gamma; not an operator or a builtin
    mine = "my_" + function.rpartition(".")[2] if named else "my_function"
    body = f"{function}(x, ...)" if named else "...  # what this line computes"
    then = f"{mine}.defvjp(fwd, bwd)" if rule == "vjp" else f"@{mine}.defjvp on a function jvp(primals, tangents)"
    return (
        f"{argument} must not depend on the differentiated inputs here (wrap it in tp.stop_gradient(...) if no "
        f"derivative should flow through it), or put the call in a function with a rule of your own (README: API), "
        "e.g.\n"
        f"    @tp.custom_{rule}  # then {then}\n"
        f"    def {mine}(x, ...): return {body}"
    )
