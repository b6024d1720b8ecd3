"""Jacobians: jacfwd (column by column, forward mode), jacrev (row by row, reverse mode) and hessian."""

from __future__ import annotations

from .. import naming
from ..transforms.forward import ForwardMode
from ..transforms.reverse import ReverseMode
from ..transforms.templates import Code, Docstring, Template, expression, literal, tuple_of
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
        zeros = [expression("rt.zeros_like_tree(PARAM)", PARAM=params[i]) for i in sorted(self.argnums)]
        if self.has_aux:
            value, aux = fresh("value"), fresh("aux")
        jac = expression("rt.jacobian_from_columns(COLUMNS, VALUE, WRT)", COLUMNS=columns, VALUE=value, WRT=wrt)
        text = _FORWARD_JACOBIAN_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params,
            DOC=Docstring(f"{self.summary(entry)} of `{entry.qualname}`."),
            ANS=ans,
            TANGENT_FN=var.name,
            ZEROS=params + zeros,
            UNPACK=_UNPACK_AUX.fill(VALUE=value, AUX=aux, ANS=ans) if self.has_aux else None,
            VALUE=value,
            QUALNAME=literal(entry.qualname),
            COLUMNS=columns,
            INDEX=k,
            WRT=wrt,
            DIRECTIONS=self._unpack(in_order),
            ANS_DOT=ans_dot,
            ARGS=params + dots,
            SPLIT=_SPLIT_AUX.fill(ANS_DOT=ans_dot) if self.has_aux else None,
            RESULT=[jac, aux] if self.has_aux else jac,
        )
        return mode, text

    def _unpack(self, names) -> Code:
        return Code(names[0] if self.single else ", ".join(names) + ("," if len(names) == 1 else ""))


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
        value, aux = ans, None
        if self.has_aux:
            value, aux = fresh("value"), fresh("aux")
        checked = [value, literal(entry.qualname), Code('"jacrev"')] + (
            [Code("complex_ok=True")] if self.holomorphic else []
        )
        seed = expression("rt.basis(VALUE, INDEX)", VALUE=value, INDEX=k)
        if self.has_aux:
            seed = expression("(SEED, 0.0)", SEED=seed)
        row = [expression("rt.materialize(BAR, PARAM)", BAR=bars[params[i]], PARAM=params[i]) for i in self.argnums]
        wrt = self.arguments_text(entry)
        jac = expression("rt.jacobian_from_rows(ROWS, VALUE, WRT)", ROWS=rows, VALUE=value, WRT=wrt)
        refresh = any(v.restores_in_place for v in mode.variants.values())
        text = _REVERSE_JACOBIAN_ENTRY.fill(
            ENTRY=self.entry_name(entry.key),
            PARAMS=params,
            DOC=Docstring(f"{self.summary(entry)} of `{entry.qualname}`."),
            ANS=ans,
            RESIDUALS=residuals,
            FWD=var.fwd,
            UNPACK=_UNPACK_AUX.fill(VALUE=value, AUX=aux, ANS=ans) if self.has_aux else None,
            VALUE=value,
            CHECKED=checked,
            ROWS=rows,
            INDEX=k,
            REFRESH=_REFRESH_RESIDUALS.fill(RESIDUALS=residuals, FWD=var.fwd, PARAMS=params) if refresh else None,
            BARS=list(bars.values()),
            BWD=var.bwd,
            SEED=seed,
            ROW=row[0] if self.single else tuple_of(row),
            RESULT=[jac, aux] if self.has_aux else jac,
        )
        return mode, text


_FORWARD_JACOBIAN_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        # the value from a forward pass along no direction, not from a call of
        # the function (under jit, a second chain of functions to compile)
        ANS, _ = TANGENT_FN(ZEROS)
        UNPACK
        VALUE = rt.check_real_output(VALUE, QUALNAME, "jacfwd", complex_ok=True)
        COLUMNS = []
        for INDEX in range(rt.tangent_count(WRT)):
            DIRECTIONS = rt.basis(WRT, INDEX)
            _, ANS_DOT = TANGENT_FN(ARGS)
            SPLIT
            COLUMNS.append(ANS_DOT)
        return RESULT
    """
)
_REVERSE_JACOBIAN_ENTRY = Template(
    """
    def ENTRY(PARAMS):
        DOC
        ANS, RESIDUALS = FWD(PARAMS)
        UNPACK
        VALUE = rt.check_real_output(CHECKED)
        ROWS = []
        for INDEX in range(rt.tangent_count(VALUE)):
            REFRESH
            (BARS,) = BWD(RESIDUALS, SEED)
            ROWS.append(ROW)
        return RESULT
    """
)
_UNPACK_AUX = Template("VALUE, AUX = ANS")
_SPLIT_AUX = Template("ANS_DOT, _ = rt.split_tangent(ANS_DOT, 2)")
_REFRESH_RESIDUALS = Template("_, RESIDUALS = FWD(PARAMS)  # the last sweep used them up")


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
