"""Every differentiable primitive has both rules: a VJP and a JVP for each differentiable argument."""

import transpile  # noqa: F401  (fills the registry)
from transpile.primitives import registry

# An in-place write `x[idx] = v` is one statement: its JVP rule for `x` receives every argument's tangent.
WHOLE_STATEMENT_JVP = {"setitem"}
# Helpers of batched (vmapped) code that have no derivative rules yet: differentiating vmapped code that
# reaches them (a per-example loop, a batched matmul) raises "no derivative rule".
NOT_YET_DIFFERENTIABLE = {
    "rt.batched_setitem",
    "rt.per_example_setitem",
    "rt.per_example",
    "rt.batched_matmul_vjp_a",
    "rt.batched_matmul_vjp_b",
    "rt.batched_dot_vjp_a",
    "rt.batched_dot_vjp_b",
    "rt.batched_tensordot",
    "rt.batched_vdot",
    "rt.batched_kron",
    "rt.dot_vjp_a_batched",
    "rt.dot_vjp_b_batched",
    "rt.batched_add_at",
    "rt.batched_get_kept",
    "rt.batched_gradient",
    "rt.to_list_batched",
    "rt.to_tuple_batched",
    "rt.item_batched",
    "rt.unbroadcast_batched_vjp",  # the adjoints of vmapped adjoints (third order)
    "rt.expand_reduced_batched_vjp",
    "rt.batched_lstsq",  # differentiated as the loop over the examples it batches (np.linalg.lstsq's rules)
}


# No rule at all: differentiating through their arguments raises (tests/primitives/test_no_silent_zero.py).
REFUSED = {
    "arange",  # its bounds set its length: JAX asks for concrete ones too
    "sorted",  # a permutation the values choose (np.sort has rules, for arrays)
    "reversed",  # an iterator (`for x in reversed(xs)` is a loop run backwards, which is differentiated)
    # tp.random's samplers but uniform: no derivative through p, logits, bounds or a pool (tests/test_random.py)
    *(f"random.{name}" for name in ("split", "fold_in", "random_bits", "normal", "bernoulli", "categorical")),
    *(f"random.{name}" for name in ("randint", "permutation", "choice", "truncated_normal")),
    "linalg.cond",  # registered for its batching rule and jit lowering; no derivative rule yet
}


def test_every_differentiable_argument_has_a_vjp_and_a_jvp():
    missing = []
    for prim in registry.all_primitives():
        if prim.nondiff or prim.name in NOT_YET_DIFFERENTIABLE | REFUSED:
            continue
        if not prim.vjp:
            missing.append(f"{prim.name}: no VJP rule")
        if prim.name in WHOLE_STATEMENT_JVP:
            assert set(prim.jvp) == {"x"}
            continue
        for param in set(prim.vjp) ^ (set(prim.jvp) - {"*"}):
            have = "VJP" if param in prim.vjp else "JVP"
            missing.append(f"{prim.name}: argument `{param}` has a {have} rule only")
    assert not missing, "\n".join(missing)


def test_rules_only_name_real_parameters():
    for prim in registry.all_primitives():
        names = set(prim.params) | ({prim.varargs} if prim.varargs else set())
        assert set(prim.vjp) <= names, prim.name
        assert set(prim.jvp) <= names | {"*"}, prim.name


def test_a_joint_jvp_rule_comes_with_a_rule_per_argument():
    """`jvp["*"]` applies only when every argument has a tangent; the others still need their own."""
    for prim in registry.all_primitives():
        if "*" in prim.jvp:
            assert set(prim.params) - prim.structural <= set(prim.jvp), prim.name
