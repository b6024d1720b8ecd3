"""One description per transform, shared by the API, the frontend and the CLI: add a transform here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import described, forward, jacobians, jit, pmap, reverse, vmap


@dataclass(frozen=True)
class Kind:
    """A transform: its API entry point and how the CLI writes and describes it."""

    name: str  # as the API and transform expressions spell it
    entry: Callable  # the API function, tp.<name>
    description: str = ""  # what its CLI subcommand writes (first sentence: the one-line help); "" for none
    example: str = ""  # a command line writing it
    title: str = ""  # a written entry's title, with `{f}` (the function's expression) and `{wrt}`
    returns: Callable | None = None  # (keywords of described.differentiated_entry) -> (text, return annotation)
    describe: Callable | None = None  # (spec, transform, entry name, params, expression) -> the written entry
    written_module: Callable | None = None  # vjp, jvp: (program, fn, params, mask, fresh, has_aux, expression)
    written: bool = True  # the CLI writes it (transform expressions may name it)

    @property
    def subcommand(self) -> str:
        return self.name.replace("_", "-")

    @property
    def takes_primals(self) -> bool:
        """vjp and jvp take primals rather than returning a function: only the outermost transform."""
        return self.written_module is not None

    def written_entry(self, spec, transform, entry_name, params, inner_text):
        """How a written module's header describes the entry of `transform`."""
        if self.describe is not None:
            return self.describe(spec, transform, entry_name, params, inner_text)
        return described.differentiated_entry(spec, transform, entry_name, params, inner_text, self.title, self.returns)


KINDS = {
    kind.name: kind
    for kind in (
        Kind(
            "grad",
            reverse.grad,
            "Write the gradient of a scalar-valued function (reverse mode) as a standalone module.",
            "transpile grad model.py:loss --argnums 0 -o loss_grad.py",
            "Gradient of `{f}` with respect to {wrt}",
            reverse.grad_returns,
        ),
        Kind(
            "value_and_grad",
            reverse.value_and_grad,
            "Write a function returning (value, gradient) as a standalone module.",
            "transpile value-and-grad model.py:loss --has-aux -o loss_value_and_grad.py",
            "Value and gradient of `{f}` with respect to {wrt}",
            reverse.value_and_grad_returns,
        ),
        Kind(
            "vjp",
            reverse.vjp,
            "Write the forward and adjoint sweeps of a function (vector-Jacobian products) as a module whose "
            "entry vjp_F(*args) returns (value, vjp_fn), as tp.vjp(F, *args) does.",
            "transpile vjp model.py:predict --argnums 0 -o predict_vjp.py",
            written_module=reverse.written_vjp,
        ),
        Kind(
            "jvp",
            forward.jvp,
            "Write the tangent (forward-mode) version of a function as a module whose entry "
            "jvp_F(*args, *tangents) returns (value, Jacobian-vector product), as tp.jvp does.",
            "transpile jvp model.py:predict --argnums 1 -o predict_jvp.py",
            written_module=forward.written_jvp,
        ),
        Kind(
            "jacfwd",
            jacobians.jacfwd,
            "Write the Jacobian of a function, by forward mode, as a standalone module.",
            "transpile jacfwd model.py:f --argnums 0,1 -o f_jacobian.py",
            "Jacobian of `{f}` with respect to {wrt}, column by column in forward mode",
            described.jacobian_returns,
        ),
        Kind(
            "jacrev",
            jacobians.jacrev,
            "Write the Jacobian of a function, by reverse mode, as a standalone module.",
            "transpile jacrev model.py:f -o f_jacobian.py",
            "Jacobian of `{f}` with respect to {wrt}, row by row in reverse mode",
            described.jacobian_returns,
        ),
        Kind(
            "hessian",
            jacobians.hessian,
            "Write the Hessian of a scalar function (forward over reverse) as a standalone module.",
            "transpile hessian model.py:energy -o energy_hessian.py",
            "Hessian of `{f}` with respect to {wrt} (forward over reverse mode)",
            jacobians.hessian_returns,
        ),
        Kind("vmap", vmap.vmap, describe=vmap.written_entry),  # its subcommand has options of its own (cli.py)
        Kind("pmap", pmap.pmap, written=False),  # the CLI refuses it and suggests its vmap (cli.NOT_IMPLEMENTED)
        Kind("linearize", forward.linearize, written=False),
        Kind("jit", jit.jit, written=False),  # outermost only, in the CLI's `emit` and `jit`
    )
}


def written() -> tuple:
    """The transforms the CLI writes, by name."""
    return tuple(name for name, kind in KINDS.items() if kind.written)


def entry_points() -> frozenset:
    """The API functions that build a transformed function."""
    return frozenset(kind.entry for kind in KINDS.values())
