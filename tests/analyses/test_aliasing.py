"""Aliasing of views: what each name of a normal-form function may refer to, and what calls share with arguments."""

import numpy as np

from transpile.analyses.activity import walk_statements
from transpile.analyses.aliasing import Aliasing, Summary, Vague, index_kinds, summaries
from transpile.frontend.desugar import desugar_program


def _analyzed(fn):
    program = desugar_program(fn)
    found = summaries(program)
    nf = program.functions[program.entry]
    return Aliasing(nf, found), nf, found


def _at_return(fn, name):
    alias, nf, _ = _analyzed(fn)
    return alias.refs(nf.body[-1], name), alias


def _kinds(alias, refs):
    """The step kinds of each path (or the reason it is vague), as a set."""
    return {path.why if isinstance(path, Vague) else tuple(alias.steps[s].kind for s in path) for _, path in refs}


def views_of_one_array(x):
    y = x.copy()
    v = y[1:]
    w = v[::2]
    r = y[0]
    t = y.T
    z = y
    return np.sum(v) + np.sum(w) + r + np.sum(t) + np.sum(z)


def test_views_and_names_refer_to_their_base():
    (y,), alias = _at_return(views_of_one_array, "y")
    for name, kinds in [("v", ("view",)), ("w", ("view", "view")), ("r", ("elem",)), ("t", ("view",)), ("z", ())]:
        refs = alias.refs(alias.fn.body[-1], name)
        assert {obj for obj, _ in refs} == {y[0]}, name
        assert _kinds(alias, refs) == {kinds}, name
    assert y[1] == () and y[0][0] == "new"


def copies_and_numbers(x):
    y = x * 2.0
    picked = y[[0, 2]]
    masked = y[y > 0.0]
    total = np.sum(y)
    fresh = y.copy()
    return np.sum(picked) + np.sum(masked) + total + np.sum(fresh)


def test_copies_share_nothing_with_their_source():
    (y,), alias = _at_return(copies_and_numbers, "y")
    for name in ("picked", "masked", "total", "fresh"):
        refs = alias.refs(alias.fn.body[-1], name)
        assert y[0] not in {obj for obj, _ in refs}, name


def uncertain(x, k):
    y = x.copy()
    flat = y.reshape(-1)
    maybe = y[k]
    pair = (y, x)
    first = pair[0]
    if k > 0:
        branch = y[:2]
    else:
        branch = y[2:]
    return np.sum(flat) + np.sum(maybe) + np.sum(first) + np.sum(branch)


def test_what_the_analysis_cannot_follow_is_vague_with_a_reason():
    alias, nf, _ = _analyzed(uncertain)
    ret = nf.body[-1]
    assert "memory layout" in " ".join(_kinds(alias, alias.refs(ret, "flat")) - {()})
    assert any("its index may be an integer" in str(k) for k in _kinds(alias, alias.refs(ret, "maybe")))
    assert {("param", "x"), next(iter(alias.refs(ret, "y")))[0]} <= {o for o, _ in alias.refs(ret, "first")}
    assert _kinds(alias, alias.refs(ret, "first")) == {"it is held in a tuple, list or dict"}
    assert _kinds(alias, alias.refs(ret, "branch")) == {("view",)} and len(alias.refs(ret, "branch")) == 2


def loop_views(x):
    rows = np.outer(x, x)
    total = 0.0
    keep = x
    for i in range(3):
        fresh = x * i
        row = rows[i]
        total = total + np.sum(row * fresh * keep)
        keep = fresh
    return total + np.sum(row) + np.sum(fresh)


def test_loops_age_earlier_values_and_rebinding_an_index_makes_a_view_vague():
    alias, nf, _ = _analyzed(loop_views)
    ret = nf.body[-1]
    assert {obj[0] for obj, _ in alias.refs(ret, "fresh")} == {"new"}
    loop = next(s for s in nf.body if s.__class__.__name__ == "For")
    assert {obj[0] for obj, _ in alias.refs(loop.body[1], "fresh")} == {"new"}
    assert {obj[0] for obj, _ in alias.refs(loop.body[1], "keep")} == {"param", "old"}  # x, or the trip before's
    # a trip's `row = rows[i]` is vague on the next trip, which binds i again; after the loop, i and row agree
    assert _kinds(alias, alias.refs(loop.body[0], "row")) == {"`i`, which its index reads, is bound again"}
    assert _kinds(alias, alias.refs(ret, "row")) == {("elem",)}


def test_index_kinds():
    def f(x, k):
        n = len(x)
        m = x.shape[0] - 1
        total = 0.0
        for i in range(n):
            j = i + 1
            total = total + x[j % m]
        mask = x > 0
        picks = [0, 1]
        return total + k + np.sum(x[mask]) + np.sum(x[picks])

    nf = desugar_program(f).functions["f"]
    kinds = index_kinds(nf.body, nf.params)
    assert all(kinds[n] == "int" for n in ("n", "m", "i", "j"))
    assert kinds["mask"] == kinds["picks"] == "array"
    assert "k" not in kinds and "x" not in kinds and "total" not in kinds


def returns_a_row(a):
    return a[0]


def returns_new(a):
    return a * 2.0


def adds_in_place(a, b):
    a += b
    return np.sum(a)


def caller(x):
    y = np.outer(x, x)
    r = returns_a_row(y)
    s = returns_new(y)
    t = adds_in_place(s, x)
    return np.sum(r) + t


def test_summaries_say_what_calls_share_and_change():
    _, _, found = _analyzed(caller)
    assert found["returns_a_row"] == Summary(frozenset({0}))
    assert found["returns_new"] == Summary()
    assert found["adds_in_place"] == Summary(mutates=frozenset({0}))


def other_names(x):
    y = x * 2.0
    a = np.sum(np.sin(y))
    z = y
    v = y[1:]
    z[0] = 7.0
    return a + np.sum(v)


def test_sharers_and_liveness():
    alias, nf, _ = _analyzed(other_names)
    write = next(s for s in walk_statements(nf.body) if s.targets and s.targets[0].__class__.__name__ == "Subscript")
    assert {"y", "v"} <= alias.sharers(write, write.targets[0].value.id)
    assert "a" in alias.live_after[id(write)] and "x" not in alias.live_after[id(write)]
