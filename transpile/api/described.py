"""How a written module's header describes the entry of a differentiating transform (the CLI's files)."""

from __future__ import annotations


def wrt_text(params, argnums) -> str:
    """`x` (argument 0) and `y` (argument 1)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    return " and ".join(f"`{params[i]}` (argument {i})" for i in nums)


def differentiated_entry(spec, transform, entry_name, params, inner_text, title, returns):
    """The entry of a grad-like module: `title` (with `{f}` and `{wrt}`) and what it returns, from `returns`
    (a function of the keywords below giving (text, how to annotate the return))."""
    from ..codegen.standalone import Entry

    argnums = transform.argnums if not transform.single else transform.argnums[0]
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    single = isinstance(argnums, int)
    structure = (
        f"with the structure, shapes and dtypes of `{params[nums[0]]}`"
        if single
        else "a tuple with one entry per argument in argnums, each with its argument's structure"
    )
    text, like = returns(
        inner_text=inner_text,
        single=single,
        has_aux=spec.has_aux,
        structure=structure,
        grad_like=("param", params[nums[0]]) if single else ("tuple", [params[i] for i in nums]),
        inner_is_leaf=spec.inner.kind is None,
    )
    aux = " The auxiliary output of the function is returned unchanged as `aux`." if spec.has_aux else ""
    return Entry(
        name=entry_name,
        title=title.format(f=inner_text, wrt=wrt_text(params, argnums)),
        returns=text + aux,
        params=params,
        call=f"the arguments of `{inner_text}`",
        annotations={p: p for p in params},
        returns_like=like,
    )


def jacobian_returns(*, single, **_):
    return (
        "the Jacobian: an array of shape (output shape + input shape), nested like the output and the "
        "differentiated argument when they are tuples, lists or dicts (JAX's layout)"
        + ("" if single else "; one Jacobian per argument in argnums")
        + ".",
        None,
    )
