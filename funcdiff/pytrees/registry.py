"""Pytree node types: which values are containers, and how each kind comes apart.

Containers are recognised by a dict lookup on `type(x)` in a registry of node
types (tuple, list, dict, OrderedDict, None, and whatever `register_pytree_node`
/ `register_dataclass` add); namedtuples are recognised by their `_fields`.
Everything else -- arrays, scalars, tracers -- is a leaf. None is a node with
no children, so it is never a leaf. Each node type has a `NodeKind`: how to
take one node apart, put it back together, and print it.

The walks over whole trees that use those kinds live here too: `flatten_into`
turns a tree into its leaves and a structure node, `build` puts leaves back
into one, `node_str` prints one. `PyTreeDef` (in `funcdiff.pytrees.treedef`) wraps a
structure node; `funcdiff.tree_util`, the public entry point, re-exports the
registration functions.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Hashable, Iterable, Optional

from funcdiff.errors import FunctionalDiffError, TreeStructureError

IsLeaf = Optional[Callable[[Any], bool]]


class PyTreeRegistrationError(FunctionalDiffError, ValueError):
    """A pytree node type was registered twice, or its registration cannot work."""


class LeafMarker:
    """Stands for one leaf inside a structure; prints as `*`."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


# A structure node is `LEAF` or the tuple (node_type, aux_data, child_nodes).
# Plain nested tuples make equality and hashing of whole structures run in C.
LEAF = LeafMarker()


def index_labels(aux: Any, num_children: int) -> list[str]:
    return [f"[{i}]" for i in range(num_children)]


class NodeKind:
    """How to take one node type apart, put it back together, and print it."""
    __slots__ = ("flatten", "unflatten", "describe", "child_labels")

    def __init__(self, flatten, unflatten, describe, child_labels=index_labels):
        self.flatten = flatten            # x -> (children, aux_data)
        self.unflatten = unflatten        # (aux_data, children) -> x
        self.describe = describe          # (aux_data, child strings) -> str
        self.child_labels = child_labels  # (aux_data, n) -> path labels for errors


def dict_str(keys: tuple, children: list[str]) -> str:
    return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(keys, children)) + "}"


def sorted_keys(d: dict) -> tuple:
    # Sorting makes {'a': 1, 'b': 2} and {'b': 2, 'a': 1} the same structure.
    try:
        return tuple(sorted(d))
    except TypeError:
        raise TreeStructureError(
            f"tree_flatten: dict keys must be mutually sortable so that equal dicts flatten to "
            f"equal structures, but got keys {list(d)!r}. Use keys of one type (e.g. all str)."
        ) from None


def flatten_dict(d: dict) -> tuple[list, tuple]:
    keys = sorted_keys(d)
    return [d[k] for k in keys], keys


def key_labels(keys: tuple, num_children: int) -> list[str]:
    return [f"[{k!r}]" for k in keys]


registry: dict[type, NodeKind] = {
    tuple: NodeKind(lambda t: (t, None), lambda _, ch: tuple(ch),
                     lambda _, cs: "(" + ", ".join(cs) + ("," if len(cs) == 1 else "") + ")"),
    list: NodeKind(lambda l: (l, None), lambda _, ch: list(ch),
                    lambda _, cs: "[" + ", ".join(cs) + "]"),
    dict: NodeKind(flatten_dict, lambda keys, ch: dict(zip(keys, ch)), dict_str, key_labels),
    type(None): NodeKind(lambda _: ((), None), lambda _, ch: None, lambda _, cs: "None"),
    # An OrderedDict's order is part of its value, so it is kept, not sorted.
    collections.OrderedDict: NodeKind(
        lambda d: (list(d.values()), tuple(d)),
        lambda keys, ch: collections.OrderedDict(zip(keys, ch)),
        lambda keys, cs: f"OrderedDict({dict_str(keys, cs)})", key_labels),
}

# Namedtuples are not registered one by one: aux_data is the namedtuple class.
NAMEDTUPLE = NodeKind(
    lambda t: (t, type(t)),
    lambda cls, ch: cls(*ch),
    lambda cls, cs: f"{cls.__name__}(" + ", ".join(f"{f}={c}" for f, c in zip(cls._fields, cs)) + ")",
    lambda cls, n: [f".{f}" for f in cls._fields])


def kind_of(node: tuple) -> NodeKind:
    return registry.get(node[0], NAMEDTUPLE)


def flatten_into(tree: Any, leaves: list, is_leaf: IsLeaf) -> Any:
    """Appends the leaves of `tree` to `leaves`; returns its structure node."""
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    node_type = type(tree)
    if (node_type is tuple or node_type is list) and is_leaf is None:
        # arguments and parameters are mostly tuples and lists of arrays: no registry
        # lookup for the containers, and no call for a leaf
        children = []
        for c in tree:
            t = type(c)
            if t is not tuple and t is not list and t not in registry and not (
                    isinstance(c, tuple) and hasattr(t, "_fields")):
                leaves.append(c)
                children.append(LEAF)
            else:
                children.append(flatten_into(c, leaves, None))
        return (node_type, None, tuple(children))
    kind = registry.get(node_type)
    if kind is None:
        if not (isinstance(tree, tuple) and hasattr(node_type, "_fields")):
            leaves.append(tree)
            return LEAF
        kind = NAMEDTUPLE
    children, aux = kind.flatten(tree)
    return (node_type, aux, tuple([flatten_into(c, leaves, is_leaf) for c in children]))


def build(node: Any, leaves: Iterable) -> Any:
    """Inverse of `flatten_into`; `leaves` is an iterator with enough items."""
    if node is LEAF:
        return next(leaves)
    node_type = node[0]
    if node_type is tuple or node_type is list:
        children = []
        for c in node[2]:
            children.append(next(leaves) if c is LEAF else build(c, leaves))
        return tuple(children) if node_type is tuple else children
    return kind_of(node).unflatten(node[1], [build(c, leaves) for c in node[2]])


def count_leaves(node: Any) -> int:
    return 1 if node is LEAF else sum(count_leaves(c) for c in node[2])


def node_str(node: Any) -> str:
    if node is LEAF:
        return "*"
    return kind_of(node).describe(node[1], [node_str(c) for c in node[2]])


def add_node_kind(node_type: Any, kind: NodeKind, caller: str) -> None:
    if not isinstance(node_type, type):
        raise PyTreeRegistrationError(f"{caller}: expected a class, got {node_type!r}.")
    if node_type in registry:
        raise PyTreeRegistrationError(
            f"{caller}: {node_type.__qualname__} is already a pytree node type. A type can be "
            "registered only once; register it in one place (e.g. next to its class definition).")
    registry[node_type] = kind


def register_pytree_node(node_type: type, flatten_fn: Callable[[Any], tuple[Iterable[Any], Hashable]],
                         unflatten_fn: Callable[[Hashable, list[Any]], Any]) -> None:
    """Make values of exactly `node_type` pytree nodes for every funcdiff transform.

    Args:
      node_type: the class to register (subclasses are not included).
      flatten_fn: `flatten_fn(x) -> (children, aux_data)`; `children` is an iterable
        of subtrees and `aux_data` hashable static data that becomes part of the PyTreeDef.
      unflatten_fn: `unflatten_fn(aux_data, children) -> x`, the inverse of `flatten_fn`.

    Raises:
      PyTreeRegistrationError: if `node_type` is not a class or is already registered
        (tuple, list, dict and None always are), or a function is not callable.

    Example:
      >>> from funcdiff.tree_util import register_pytree_node, tree_leaves
      >>> class Pair:
      ...     def __init__(self, a, b): self.a, self.b = a, b
      >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, ch: Pair(*ch))
      >>> tree_leaves([Pair(1, 2), 3])
      [1, 2, 3]
    """
    if not (callable(flatten_fn) and callable(unflatten_fn)):
        raise PyTreeRegistrationError(
            f"register_pytree_node: flatten_fn and unflatten_fn must be callable, got "
            f"{flatten_fn!r} and {unflatten_fn!r}.")
    name = getattr(node_type, "__name__", repr(node_type))
    add_node_kind(node_type, NodeKind(
        flatten_fn, unflatten_fn,
        lambda aux, cs: f"CustomNode({name}[{aux!r}], [{', '.join(cs)}])"), "register_pytree_node")


def register_dataclass(cls: Optional[type] = None, *, data_fields: Optional[Iterable[str]] = None,
                       meta_fields: Optional[Iterable[str]] = None) -> Any:
    """Make a dataclass a pytree node; usable as `@register_dataclass`.

    Args:
      cls: the dataclass; if omitted, returns a decorator taking it.
      data_fields: fields that are children (subtrees). Default: all `__init__`
        fields not in `meta_fields`.
      meta_fields: fields that are static data, stored in the PyTreeDef (so different
        values give different structures, and under jit a recompile); must be hashable.

    Returns:
      `cls` itself (or a decorator, when `cls` is omitted).

    Raises:
      PyTreeRegistrationError: if `cls` is not a dataclass or already registered, or the
        fields do not name each `__init__` field exactly once.

    Example:
      >>> import dataclasses
      >>> from funcdiff.tree_util import register_dataclass, tree_map
      >>> @register_dataclass
      ... @dataclasses.dataclass
      ... class Point:
      ...     x: float
      ...     y: float
      >>> tree_map(lambda v: 2 * v, Point(1.0, 2.0))
      Point(x=2.0, y=4.0)
    """
    if cls is None:
        return functools.partial(register_dataclass, data_fields=data_fields, meta_fields=meta_fields)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise PyTreeRegistrationError(
            f"register_dataclass: {cls!r} is not a dataclass. Apply @dataclasses.dataclass first "
            "(write @register_dataclass above it), or use register_pytree_node for other classes.")
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    meta = tuple(meta_fields) if meta_fields is not None else ()
    data = tuple(data_fields) if data_fields is not None else tuple(n for n in names if n not in meta)
    if meta_fields is None:
        meta = tuple(n for n in names if n not in data)
    if sorted(data + meta) != sorted(names):
        raise PyTreeRegistrationError(
            f"register_dataclass({cls.__name__}): data_fields {list(data)} and meta_fields "
            f"{list(meta)} must together name each __init__ field of {cls.__name__} "
            f"{names} exactly once.")

    def describe(meta_values, cs):
        static = ", ".join(f"{n}={v!r}" for n, v in zip(meta, meta_values))
        return f"{cls.__name__}({', '.join(f'{n}={c}' for n, c in zip(data, cs))}" + \
            (f"; {static})" if static else ")")

    add_node_kind(cls, NodeKind(
        lambda x: ([getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)),
        lambda meta_values, ch: cls(**dict(zip(data, ch)), **dict(zip(meta, meta_values))),
        describe, lambda meta_values, num_children: [f".{n}" for n in data]), "register_dataclass")
    return cls
