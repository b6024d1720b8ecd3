"""A NumPy call's arguments read for a canonical rewrite: bound by name, defaults filled in, others refused."""

import gast

NO_VALUE = object()  # a parameter without a default


def constant(value):
    return gast.Constant(value=value, kind=None)


def read_arguments(name, params, args, keywords, error, positional=None):
    """{param: AST} for a call of np.<name>, with the defaults of `params` ({name: default}) where not given;
    `positional` is how many can be given by position (all of them if None)."""
    names = list(params)
    leading = names if positional is None else names[:positional]
    if len(args) > len(leading):
        error(args[len(leading)], f"np.{name} takes at most {len(leading)} positional argument(s), got {len(args)}")
    given = dict(zip(leading, args))
    for k in keywords:
        if k.arg not in params:
            error(k.value, f"np.{name} has no keyword argument {k.arg!r}", f"its parameters: {', '.join(names)}")
        if k.arg in given:
            error(k.value, f"np.{name} got argument {k.arg!r} twice")
        given[k.arg] = k.value
    for key, default in params.items():
        if key not in given:
            if default is NO_VALUE:
                error(None, f"np.{name} is missing its argument {key!r}")
            given[key] = constant(default)
    return given


def is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def refuse_given(name, bound, params, error, hint):
    """A located error for each of `params` given other than None: what the rewrite does not support."""
    for param in params:
        if not is_none(bound[param]):
            error(bound[param], f"np.{name}'s {param}= is not supported", hint.format(param=param))


OUT_HINT = "assign the result instead (`{param}` left out)"
