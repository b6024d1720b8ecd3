"""Jacobians: jacfwd (column by column, forward mode), jacrev (row by row, reverse mode) and hessian."""

from __future__ import annotations

from .. import naming
from ..codegen import escape
from ..transforms.forward import ForwardMode
from ..transforms.reverse import ReverseMode
from .boundary import api_boundary
from .common import Names, Transform, make_transformed


class ForwardJacobian(Transform):
    """jacfwd: one forward-mode pass per input direction; the entry assembles the columns."""

    kind = "jacfwd"

    def summary(self, entry):
        return f"Jacobian with respect to {self.with_respect_to(entry)}, column by column in forward mode"

    def build(self, program, entry, mask):
        mode = ForwardMode(program)
        var = mode.variant(program.entry, mask)
        params = list(entry.params)
        fresh = Names(params)
        ans, columns, k, ans_dot = fresh(naming.OUTPUT), fresh("columns"), fresh("k"), fresh(naming.tangent("ans"))
        wrt = self.arguments_text(entry)
        dots = [fresh(naming.tangent(params[i])) for i in sorted(self.argnums)]
        value, aux = ans, None
        by_position = dict(zip(sorted(self.argnums), dots))
        in_order = [by_position[i] for i in self.argnums]
        zeros = [f"rt.zeros_like_tree({params[i]})" for i in sorted(self.argnums)]
        lines = [
            f"def {self.entry_name(entry.key)}({', '.join(params)}):",
            escape.docstring(f"{self.summary(entry)} of `{entry.qualname}`.", "    "),
            "    # the value from a forward pass along no direction, not from a call of",
            "    # the function (under jit, a second chain of functions to compile)",
            f"    {ans}, _ = {var.name}({', '.join(params + zeros)})",
        ]
        if self.has_aux:
            value, aux = fresh("value"), fresh("aux")
            lines.append(f"    {value}, {aux} = {ans}")
        lines.append(f'    {value} = rt.check_real_output({value}, {escape.literal(entry.qualname)}, "jacfwd", True)')
        lines += [
            f"    {columns} = []",
            f"    for {k} in range(rt.tangent_count({wrt})):",
            f"        {self._unpack(in_order)} = rt.basis({wrt}, {k})",
            f"        _, {ans_dot} = {var.name}({', '.join(params + dots)})",
        ]
        if self.has_aux:
            lines.append(f"        {ans_dot}, _ = rt.split_tangent({ans_dot}, 2)")
        lines.append(f"        {columns}.append({ans_dot})")
        jac = f"rt.jacobian_from_columns({columns}, {value}, {wrt})"
        lines.append(f"    return {jac}, {aux}" if self.has_aux else f"    return {jac}")
        return mode, "\n".join(lines) + "\n"

    def _unpack(self, names):
        return names[0] if self.single else ", ".join(names) + ("," if len(names) == 1 else "")


class ReverseJacobian(Transform):
    """jacrev: one adjoint sweep per output direction over a single forward sweep."""

    kind = "jacrev"

    def summary(self, entry):
        return f"Jacobian with respect to {self.with_respect_to(entry)}, row by row in reverse mode"

    def build(self, program, entry, mask):
        mode = ReverseMode(program)
        var = mode.variant(program.entry, mask)
        params = list(entry.params)
        fresh = Names(params)
        ans, residuals, rows, k = fresh(naming.OUTPUT), fresh(naming.RESIDUALS), fresh("rows"), fresh("k")
        diff = [params[i] for i in sorted(self.argnums)]
        bars = dict(zip(diff, [fresh(naming.adjoint(p)) for p in diff]))
        forward = f"{ans}, {residuals} = {var.fwd}({', '.join(params)})"
        value, aux = ans, None
        lines = [
            f"def {self.entry_name(entry.key)}({', '.join(params)}):",
            escape.docstring(f"{self.summary(entry)} of `{entry.qualname}`.", "    "),
            f"    {forward}",
        ]
        if self.has_aux:
            value, aux = fresh("value"), fresh("aux")
            lines.append(f"    {value}, {aux} = {ans}")
        complex_ok = ", True" if self.holomorphic else ""
        lines.append(
            f'    {value} = rt.check_real_output({value}, {escape.literal(entry.qualname)}, "jacrev"{complex_ok})'
        )
        lines += [f"    {rows} = []", f"    for {k} in range(rt.tangent_count({value})):"]
        if any(v.restores_in_place for v in mode.variants.values()):
            lines.append(f"        _, {residuals} = {var.fwd}({', '.join(params)})  # the last sweep used them up")
        seed = f"rt.basis({value}, {k})"
        if self.has_aux:
            seed = f"({seed}, 0.0)"
        lines.append(f"        ({', '.join(bars.values())},) = {var.bwd}({residuals}, {seed})")
        row = [f"rt.materialize({bars[params[i]]}, {params[i]})" for i in self.argnums]
        row_text = row[0] if self.single else "(" + ", ".join(row) + ("," if len(row) == 1 else "") + ")"
        lines.append(f"        {rows}.append({row_text})")
        jac = f"rt.jacobian_from_rows({rows}, {value}, {self.arguments_text(entry)})"
        lines.append(f"    return {jac}, {aux}" if self.has_aux else f"    return {jac}")
        return mode, "\n".join(lines) + "\n"


@api_boundary
def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` by forward mode: output shape first, then input shape (JAX's convention); real
    inputs, or complex ones with holomorphic=True."""
    return make_transformed(fun, ForwardJacobian, argnums, has_aux, holomorphic)


@api_boundary
def jacrev(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of `fun` by reverse mode, in the same layout as jacfwd; real outputs, or complex ones (of
    complex inputs) with holomorphic=True."""
    return make_transformed(fun, ReverseJacobian, argnums, has_aux, holomorphic)


@api_boundary
def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """Forward-over-reverse: jacfwd(jacrev(fun))."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def hessian_returns(**_):
    """What a written hessian module's entry returns (text, how to annotate it)."""
    return (
        "the Hessian: an array of shape (output shape + input shape + input shape), nested like the "
        "arguments when they are pytrees (JAX's layout).",
        None,
    )
