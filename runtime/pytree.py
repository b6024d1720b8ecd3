"""Pytrees with JAX's semantics: registered node classes, flatten and unflatten, and the field reads of transforms.

Inside transformed code a registered class travels as `Fields`, a dict of its data fields (transforms already know
dicts) that remembers how to rebuild the object; NamedTuples travel as themselves (they are tuples).
"""

from __future__ import annotations

import collections
import copy
import dataclasses

__all__ = ["field", "add_field", "field_tangent", "make_namedtuple", "make_fields"]


class _Node:
    """How one registered class is taken apart: flatten(x) -> (children, aux), unflatten(aux, children) -> x."""

    def __init__(self, cls, flatten, unflatten, data_fields=None, meta_fields=None):
        self.cls = cls
        self.flatten = flatten
        self.unflatten = unflatten
        self.data_fields = data_fields  # a dataclass's: the attributes its children are read from
        self.meta_fields = meta_fields


_NODES: dict[type, _Node] = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Make `nodetype` a pytree node: flatten_func(x) -> (children, aux_data), unflatten_func(aux_data, children)."""
    if nodetype in _NODES or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _NODES[nodetype] = _Node(nodetype, flatten_func, unflatten_func)
    return nodetype


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Make a dataclass a pytree node whose children are its `data_fields` and whose static part is its
    `meta_fields`; without either, fields marked `field(metadata=dict(static=True))` are meta, the others data.
    Usable as a decorator (`@register_dataclass`)."""
    if nodetype is None:
        return lambda cls: register_dataclass(cls, data_fields, meta_fields, drop_fields)
    if not dataclasses.is_dataclass(nodetype):
        raise TypeError(f"register_dataclass takes a dataclass, not {nodetype!r}")
    init = [f.name for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
    if data_fields is None and meta_fields is None:
        meta = [f.name for f in dataclasses.fields(nodetype) if f.init and f.metadata.get("static", False)]
        data_fields, meta_fields = [n for n in init if n not in meta], meta
    elif data_fields is None or meta_fields is None:
        raise ValueError("register_dataclass takes both data_fields and meta_fields, or neither")
    data_fields, meta_fields = list(data_fields), list(meta_fields)
    missing = set(init) - set(data_fields) - set(meta_fields) - set(drop_fields)
    if missing or set(data_fields) & set(meta_fields):
        raise ValueError(
            f"register_dataclass({nodetype.__name__}): data_fields {data_fields} and meta_fields {meta_fields} must "
            f"share no name and list every field of its __init__ (missing: {sorted(missing)})"
        )

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta_fields, aux)), **dict(zip(data_fields, children)))

    if nodetype in _NODES:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _NODES[nodetype] = _Node(nodetype, flatten, unflatten, data_fields, meta_fields)
    return nodetype


def register_pytree_node_class(cls):
    """A class decorator: `cls` is a node flattened by its method tree_flatten and rebuilt by its class method
    tree_unflatten(aux_data, children)."""
    return register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)


def node_of(x) -> _Node | None:
    """The registration of x's class, if it is a registered node."""
    return _NODES.get(type(x))


def node_of_class(cls) -> _Node | None:
    """The registration of class `cls`, if it is registered as a node."""
    return _NODES.get(cls)


def is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


# ------------------------------------------------------------------ the structure of a pytree


class PyTreeDef:
    """The structure of a pytree: a node kind, what it keeps besides its children, and its children's structures
    (None for a leaf)."""

    __slots__ = ("kind", "aux", "children")

    def __init__(self, kind, aux, children):
        self.kind, self.aux, self.children = kind, aux, tuple(children)

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"the structure {self} has {self.num_leaves} leaves, but {len(leaves)} were given")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it):
        if self.kind is None:
            return next(it)
        children = [c._build(it) for c in self.children]
        return _make(self.kind, self.aux, children)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this structure's leaves (`tree` must have this structure as a prefix)."""
        out = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree, out):
        if self.kind is None:
            out.append(tree)
            return
        kind, aux, children = _split(tree)
        if kind != self.kind or (aux != self.aux if not isinstance(aux, tuple) else not _same_aux(aux, self.aux)):
            raise ValueError(f"a pytree of structure {tree_structure(tree)} does not match the structure {self}")
        if len(children) != len(self.children):
            raise ValueError(f"a node with {len(children)} children does not match the structure {self}")
        for c, child in zip(self.children, children):
            c._up_to(child, out)

    def __eq__(self, other):
        return (
            isinstance(other, PyTreeDef)
            and self.kind == other.kind
            and _same_aux(self.aux, other.aux)
            and self.children == other.children
        )

    def __hash__(self):
        try:
            return hash((self.kind, self.aux, self.children))
        except TypeError:
            return hash((self.kind, self.children))

    def __repr__(self):
        return f"PyTreeDef({self._text()})"

    def _text(self):
        if self.kind is None:
            return "*"
        items = [c._text() for c in self.children]
        if self.kind is type(None):
            return "None"
        if self.kind is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if self.kind is list:
            return "[" + ", ".join(items) + "]"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, items)) + "}"
        if is_namedtuple_type(self.kind):
            return f"{self.kind.__name__}(" + ", ".join(f"{k}={v}" for k, v in zip(self.kind._fields, items)) + ")"
        return f"CustomNode({self.kind.__name__}[{self.aux!r}], [" + ", ".join(items) + "])"


def _same_aux(a, b):
    try:
        return bool(a == b)
    except Exception:  # e.g. arrays in aux data: compare by identity
        return a is b


def is_namedtuple_type(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields")


def _split(tree):
    """(kind, aux, children) of a node; kind None for a leaf."""
    if tree is None:
        return type(None), None, ()
    kind = type(tree)
    if kind is tuple or kind is list:
        return kind, None, list(tree)
    if kind is dict:
        keys = sorted(tree)
        return dict, tuple(keys), [tree[k] for k in keys]
    node = _NODES.get(kind)
    if node is not None:
        children, aux = node.flatten(tree)
        return kind, aux, list(children)
    if is_namedtuple(tree):
        return kind, None, list(tree)
    return None, None, ()


def _make(kind, aux, children):
    if kind is type(None):
        return None
    if kind is tuple or kind is list:
        return kind(children)
    if kind is dict:
        return dict(zip(aux, children))
    node = _NODES.get(kind)
    if node is not None:
        return node.unflatten(aux, children)
    return kind(*children)  # a NamedTuple


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef): the leaves in order (dicts by sorted key) and the structure around them."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(tree, is_leaf, leaves):
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return PyTreeDef(None, None, ())
    kind, aux, children = _split(tree)
    if kind is None:
        leaves.append(tree)
        return PyTreeDef(None, None, ())
    return PyTreeDef(kind, aux, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(treedef, leaves):
    """The pytree of structure `treedef` holding `leaves`."""
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """f applied leaf by leaf: to each leaf of `tree` and the subtrees of `rest` at the same places."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


# ------------------------------------------------------------------ registered classes inside transformed code


class _Marker:
    """Stands for child i when finding which attribute of a generic node holds which child."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class Fields(dict):
    """A registered object inside transformed code: its children by attribute name (a dict, as transforms know
    them), its other attributes as constants (`meta`), and how to rebuild one of its class (`rebuild`)."""

    def __init__(self, items, meta, rebuild, cls):
        super().__init__(items)
        self.meta, self.rebuild, self.cls = meta, rebuild, cls

    def with_items(self, items):
        """The same object's kind holding other values for its fields (adjoints, tangents, batches)."""
        return Fields(items, self.meta, self.rebuild, self.cls)

    def __repr__(self):
        return f"{self.cls.__name__}<fields>({dict.__repr__(self)})"


class PytreeError(TypeError):
    """A registered object that transpile cannot take apart by its attributes."""


def as_fields(x):
    """`x`, a registered object, as Fields; PytreeError when its attributes do not show where its children are."""
    node = _NODES[type(x)]
    name = type(x).__name__
    if node.data_fields is not None:
        items = {n: getattr(x, n) for n in node.data_fields}
        meta = {n: getattr(x, n) for n in node.meta_fields}
        aux = tuple(meta.values())
        return Fields(items, meta, lambda values: node.unflatten(aux, [values[n] for n in node.data_fields]), type(x))
    children, aux = node.flatten(x)
    children = list(children)
    try:
        probe = node.unflatten(aux, [_Marker(i) for i in range(len(children))])
        attributes = probe._asdict() if isinstance(probe, tuple) and hasattr(probe, "_asdict") else dict(vars(probe))
    except Exception as exc:  # its unflatten works on its children's values, or it keeps no __dict__
        raise PytreeError(
            f"transpile cannot see which attributes of {name} hold its pytree children ({type(exc).__name__}: "
            f"{exc}); register it with tp.tree_util.register_dataclass, or pass a NamedTuple"
        ) from None
    names = {}
    meta = {}
    for attr, value in attributes.items():
        if isinstance(value, _Marker):
            names[value.index] = attr
        elif _holds_marker(value):
            raise PytreeError(
                f"attribute `{attr}` of {name} holds a mix of its pytree children; register it with "
                "tp.tree_util.register_dataclass, or flatten it to one child per attribute"
            )
        else:
            meta[attr] = getattr(x, attr)
    if len(names) != len(children):
        raise PytreeError(
            f"{len(children) - len(names)} pytree child(ren) of {name} are not held by an attribute of their own; "
            "register it with tp.tree_util.register_dataclass, or flatten it to one child per attribute"
        )
    items = {names[i]: c for i, c in enumerate(children)}
    order = [names[i] for i in range(len(children))]
    return Fields(items, meta, lambda values: node.unflatten(aux, [values[n] for n in order]), type(x))


def _holds_marker(value):
    if isinstance(value, _Marker):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_marker(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_marker(v) for v in value.values())
    return False


def has_nodes(value) -> bool:
    """Whether `value` holds a registered object (one transformed code takes as Fields)."""
    if type(value) in _NODES:
        return True
    if isinstance(value, (tuple, list)):
        return any(has_nodes(v) for v in value)
    if isinstance(value, dict):
        return any(has_nodes(v) for v in value.values())
    return False


def to_internal(value):
    """`value` with each registered object (at any depth) as Fields; `value` itself when it holds none."""
    if not has_nodes(value):
        return value
    if type(value) in _NODES:
        fields = as_fields(value)
        return fields.with_items({k: to_internal(v) for k, v in fields.items()})
    if isinstance(value, dict):
        return same_kind(value, {k: to_internal(v) for k, v in value.items()})
    return same_kind(value, [to_internal(v) for v in value])


def from_internal(value):
    """`value` with each Fields (at any depth) rebuilt as an object of its class."""
    if isinstance(value, Fields):
        return value.rebuild({k: from_internal(v) for k, v in value.items()})
    if isinstance(value, dict):
        return {k: from_internal(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        if not any(isinstance(v, (tuple, list, dict)) for v in value):
            return value
        return same_kind(value, [from_internal(v) for v in value])
    return value


def same_kind(x, items):
    """A container of x's kind holding `items` (a list of values, or for dicts a mapping): a NamedTuple stays
    one, Fields keep their class and constants, other tuples, lists and dicts are plain."""
    if isinstance(x, Fields):
        return x.with_items(items)
    if isinstance(x, dict):
        return dict(items)
    if is_namedtuple(x):
        return type(x)._make(items)
    if isinstance(x, tuple):
        return tuple(items)
    return list(items)


# ------------------------------------------------------------------ field reads `x.name` in transformed code


def _position(x, name):
    """Where field `name` of x (Fields or a NamedTuple) is: its key or index; None for a constant.  A plain dict
    has no fields: `d.W` raises, as in Python."""
    if isinstance(x, Fields):
        if name in x:
            return name
        if name in x.meta:
            return None
    elif is_namedtuple(x) and name in type(x)._fields:
        return type(x)._fields.index(name)
    raise AttributeError(_no_field(x, name))


def _no_field(x, name):
    if isinstance(x, Fields):
        known = ", ".join(f"`{k}`" for k in [*x, *x.meta])
        return (
            f"transpile reads the pytree fields of {x.cls.__name__} ({known}); `{name}` is not one of them "
            "(a property or method): compute it in the function from the fields"
        )
    if is_namedtuple(x):
        return f"{type(x).__name__} has no field `{name}` (its fields: {', '.join(type(x)._fields)})"
    return f"a {type(x).__name__} has no attribute `{name}` that transpile can read (only pytree fields)"


def field(x, name):
    """x.name: a field of a NamedTuple or of a registered object (Fields)."""
    position = _position(x, name)
    if position is None:
        return x.meta[name]
    return x[position]


def add_field(acc, x, name, g):
    """acc + the adjoint of x.name, g, put back at its field (nothing for a constant field)."""
    from .tree import add_at, is_zero

    position = _position(x, name)
    if position is None or is_zero(g):
        return acc
    return add_at(acc, x, position, g)


def field_tangent(t, x, name):
    """The tangent of x.name, from x's tangent `t`."""
    from .tree import is_zero

    position = _position(x, name)
    if position is None or is_zero(t):
        return 0.0
    return t[position]


# ------------------------------------------------------------------ objects built in transformed code


def make_namedtuple(cls, *items):
    """`cls(*items)`: a NamedTuple built in transformed code (its fields in order)."""
    return cls(*items)


def make_fields(cls, meta, *items):
    """`cls(...)`, a registered dataclass built in transformed code, as Fields: its data fields `items` (in the
    order of its data_fields), its meta fields `meta` (in the order of its meta_fields)."""
    node = _NODES[cls]
    data = dict(zip(node.data_fields, items))
    constants = dict(zip(node.meta_fields, meta))
    aux = tuple(meta)
    return Fields(data, constants, lambda values: node.unflatten(aux, [values[n] for n in node.data_fields]), cls)


# ------------------------------------------------------------------ registered objects under jit

RECORD_CLASSES: dict = {}  # (class, data fields, meta values' fingerprint or None) -> its namedtuple class
REBUILDS: dict = {}  # namedtuple class -> how to rebuild the registered object from {data field: value}
_RECORD_NAMES: dict = {}  # a class name -> how many record classes are named after it


def object_record_class(cls, keys, meta, meta_key, rebuild):
    """The namedtuple standing under jit for registered objects of class `cls` with data fields `keys` and the
    meta values `meta` (a dict, fingerprinted as `meta_key`; None when empty): its fields are the data fields,
    the meta values (constants of compiled code) ride on the class."""
    key = (cls, tuple(keys), meta_key)
    record = RECORD_CLASSES.get(key)
    if record is None:
        # Numba names compiled functions by their argument types' names: two record classes of one name would
        # share the code compiled for either (meta values compiled in, fields at other places)
        taken = _RECORD_NAMES[cls.__name__] = _RECORD_NAMES.get(cls.__name__, 0) + 1
        record = collections.namedtuple(cls.__name__ + (f"_{taken}" if taken > 1 else ""), tuple(keys))
        record.__transpile_meta__ = copy.deepcopy(dict(meta))
        RECORD_CLASSES[key] = record
        REBUILDS[record] = rebuild
    return record


def dataclass_record_class(cls):
    """The record class of a registered dataclass without meta fields (objects built in compiled code); of one with
    meta fields, the class compiled code names it by (make_fields then builds a built_record_class)."""
    node = _NODES[cls]
    return object_record_class(
        cls, node.data_fields, {}, None, lambda values: node.unflatten((), [values[n] for n in node.data_fields])
    )


def record_source_class(record):
    """The registered class a record class stands for (None for other namedtuples)."""
    return next((key[0] for key, value in RECORD_CLASSES.items() if value is record), None)


def built_record_class(cls):
    """The record class of objects of the registered dataclass `cls` with meta fields, built in compiled code: its
    data fields, then its meta fields as fields too (their values known when the code runs, not when it compiles;
    `__transpile_meta_fields__` names them: they have no derivative), rebuilt with its class on return."""
    node = _NODES[cls]
    metas = tuple(node.meta_fields)

    def rebuild(values):
        return node.unflatten(tuple(values[n] for n in metas), [values[n] for n in node.data_fields])

    record = object_record_class(cls, tuple(node.data_fields) + metas, {}, ("built", metas), rebuild)
    record.__transpile_meta_fields__ = metas
    return record
