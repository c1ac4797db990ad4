"""Pytrees: nested containers of arrays, taken apart into leaves and a structure.

Transforms work on flat lists of arrays, users work on tuples, dicts and
dataclasses of them. `tree_flatten` turns any such *pytree* into its list of
leaves plus a `PyTreeDef`: an immutable, hashable record of the containers
around the leaves, which jit uses as a cache key and `tree_unflatten` uses to
rebuild the tree. Containers are recognised by a dict lookup on `type(x)` in a
registry of node types (tuple, list, dict, OrderedDict, None, and
whatever `register_pytree_node` / `register_dataclass` add); namedtuples are
recognised by their `_fields`. Everything else -- arrays, scalars, tracers --
is a leaf. None is a node with no children, so it is never a leaf.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Hashable, Iterable, Optional

from funcdiff.errors import FunctionalDiffError, TreeStructureError

__all__ = [
    "PyTreeDef", "PyTreeRegistrationError", "broadcast_prefix", "register_dataclass",
    "register_pytree_node", "tree_all", "tree_flatten", "tree_leaves", "tree_map",
    "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten", "treedef_is_leaf",
]

IsLeaf = Optional[Callable[[Any], bool]]


class PyTreeRegistrationError(FunctionalDiffError, ValueError):
    """A pytree node type was registered twice, or its registration cannot work."""


class _LeafMarker:
    """Stands for one leaf inside a structure; prints as `*`."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


# A structure node is `_LEAF` or the tuple (node_type, aux_data, child_nodes).
# Plain nested tuples make equality and hashing of whole structures run in C.
_LEAF = _LeafMarker()


def _index_labels(aux: Any, num_children: int) -> list[str]:
    return [f"[{i}]" for i in range(num_children)]


class _NodeKind:
    """How to take one node type apart, put it back together, and print it."""
    __slots__ = ("flatten", "unflatten", "describe", "child_labels")

    def __init__(self, flatten, unflatten, describe, child_labels=_index_labels):
        self.flatten = flatten            # x -> (children, aux_data)
        self.unflatten = unflatten        # (aux_data, children) -> x
        self.describe = describe          # (aux_data, child strings) -> str
        self.child_labels = child_labels  # (aux_data, n) -> path labels for errors


def _dict_str(keys: tuple, children: list[str]) -> str:
    return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(keys, children)) + "}"


def _sorted_keys(d: dict) -> tuple:
    # Sorting makes {'a': 1, 'b': 2} and {'b': 2, 'a': 1} the same structure.
    try:
        return tuple(sorted(d))
    except TypeError:
        raise TreeStructureError(
            f"tree_flatten: dict keys must be mutually sortable so that equal dicts flatten to "
            f"equal structures, but got keys {list(d)!r}. Use keys of one type (e.g. all str)."
        ) from None


def _flatten_dict(d: dict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _key_labels(keys: tuple, num_children: int) -> list[str]:
    return [f"[{k!r}]" for k in keys]


_registry: dict[type, _NodeKind] = {
    tuple: _NodeKind(lambda t: (t, None), lambda _, ch: tuple(ch),
                     lambda _, cs: "(" + ", ".join(cs) + ("," if len(cs) == 1 else "") + ")"),
    list: _NodeKind(lambda l: (l, None), lambda _, ch: list(ch),
                    lambda _, cs: "[" + ", ".join(cs) + "]"),
    dict: _NodeKind(_flatten_dict, lambda keys, ch: dict(zip(keys, ch)), _dict_str, _key_labels),
    type(None): _NodeKind(lambda _: ((), None), lambda _, ch: None, lambda _, cs: "None"),
    # An OrderedDict's order is part of its value, so it is kept, not sorted.
    collections.OrderedDict: _NodeKind(
        lambda d: (list(d.values()), tuple(d)),
        lambda keys, ch: collections.OrderedDict(zip(keys, ch)),
        lambda keys, cs: f"OrderedDict({_dict_str(keys, cs)})", _key_labels),
}

# Namedtuples are not registered one by one: aux_data is the namedtuple class.
_NAMEDTUPLE = _NodeKind(
    lambda t: (t, type(t)),
    lambda cls, ch: cls(*ch),
    lambda cls, cs: f"{cls.__name__}(" + ", ".join(f"{f}={c}" for f, c in zip(cls._fields, cs)) + ")",
    lambda cls, n: [f".{f}" for f in cls._fields])


def _kind_of(node: tuple) -> _NodeKind:
    return _registry.get(node[0], _NAMEDTUPLE)


def _flatten_into(tree: Any, leaves: list, is_leaf: IsLeaf) -> Any:
    """Appends the leaves of `tree` to `leaves`; returns its structure node."""
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    node_type = type(tree)
    kind = _registry.get(node_type)
    if kind is None:
        if not (isinstance(tree, tuple) and hasattr(node_type, "_fields")):
            leaves.append(tree)
            return _LEAF
        kind = _NAMEDTUPLE
    children, aux = kind.flatten(tree)
    return (node_type, aux, tuple([_flatten_into(c, leaves, is_leaf) for c in children]))


def _build(node: Any, leaves: Iterable) -> Any:
    """Inverse of `_flatten_into`; `leaves` is an iterator with enough items."""
    if node is _LEAF:
        return next(leaves)
    return _kind_of(node).unflatten(node[1], [_build(c, leaves) for c in node[2]])


def _count_leaves(node: Any) -> int:
    return 1 if node is _LEAF else sum(_count_leaves(c) for c in node[2])


def _node_str(node: Any) -> str:
    if node is _LEAF:
        return "*"
    return _kind_of(node).describe(node[1], [_node_str(c) for c in node[2]])


def _same_kind(a: Any, b: Any) -> bool:
    """True when two non-leaf nodes agree on everything but their children's contents."""
    return (b is not _LEAF and a[0] is b[0] and len(a[2]) == len(b[2]) and a[1] == b[1])


def _first_difference(a: Any, b: Any, prefix_ok: bool, path: str = "") -> Optional[str]:
    """Where structures `a` and `b` first differ, or None; a leaf of `a` may cover
    a whole subtree of `b` when `prefix_ok`."""
    if a is _LEAF and (prefix_ok or b is _LEAF):
        return None
    if a is _LEAF or not _same_kind(a, b):
        return f"at {path or 'the root'}: {_node_str(a)} vs {_node_str(b)}"
    labels = _kind_of(a).child_labels(a[1], len(a[2]))
    for label, child_a, child_b in zip(labels, a[2], b[2]):
        found = _first_difference(child_a, child_b, prefix_ok, path + label)
        if found:
            return found
    return None


def _mismatch(summary: str, names: tuple[str, str], defs: tuple[PyTreeDef, PyTreeDef],
              fix: str, prefix_ok: bool = False) -> TreeStructureError:
    width = max(map(len, names))
    where = _first_difference(defs[0]._node, defs[1]._node, prefix_ok)
    return TreeStructureError(
        f"{summary}\n  {names[0]:<{width}} : {defs[0]}\n  {names[1]:<{width}} : {defs[1]}\n"
        f"  first difference {where}\n{fix}")


class PyTreeDef:
    """The container structure of a pytree, with each leaf replaced by `*`.

    Immutable and hashable. Two trees have equal PyTreeDefs exactly when they
    have the same node types, the same static data (dict keys, namedtuple
    class, dataclass meta fields, custom aux_data) and the same nesting.
    Build one with `tree_structure` or `tree_flatten`.
    """
    __slots__ = ("_node", "_num_leaves", "_hash")

    def __init__(self, node: Any, num_leaves: int):
        # `_hash` stays unset until first needed: construction is on every transform call.
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_num_leaves", num_leaves)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("PyTreeDef is immutable; build a new one with tree_structure.")

    @property
    def num_leaves(self) -> int:
        """Number of leaves (`*`) in the structure."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes, counting containers, None and leaves."""
        def count(node):
            return 1 if node is _LEAF else 1 + sum(count(c) for c in node[2])
        return count(self._node)

    def children(self) -> list[PyTreeDef]:
        """Structures of the direct children (empty for a leaf)."""
        if self._node is _LEAF:
            return []
        return [PyTreeDef(c, _count_leaves(c)) for c in self._node[2]]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Same as `tree_unflatten(self, leaves)`."""
        return tree_unflatten(self, leaves)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or (self._num_leaves == other._num_leaves and self._node == other._node)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            pass
        try:
            object.__setattr__(self, "_hash", hash(self._node))
        except TypeError as e:
            raise PyTreeRegistrationError(
                f"{self} cannot be hashed (e.g. as a jit cache key) because the static data of "
                f"one of its nodes is unhashable ({e}). Make the aux_data returned by "
                "register_pytree_node's flatten_fn, or the dataclass meta fields, hashable "
                "(e.g. a tuple instead of a list).") from None
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_str(self._node)})"


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    """Split a pytree into its leaves (in a fixed order) and its structure.

    Args:
      tree: any pytree; dict children come in sorted key order.
      is_leaf: optional predicate; subtrees for which it returns True are leaves.

    Returns:
      `(leaves, treedef)` such that `tree_unflatten(treedef, leaves)` rebuilds `tree`.

    Raises:
      TreeStructureError: if a dict has keys that cannot be sorted together.

    Example:
      >>> leaves, treedef = tree_flatten((1.0, {'b': [2, 3], 'a': None}))
      >>> leaves
      [1.0, 2, 3]
      >>> treedef
      PyTreeDef((*, {'a': None, 'b': [*, *]}))
    """
    leaves: list[Any] = []
    node = _flatten_into(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of structure `treedef` from a flat sequence of leaves.

    Args:
      treedef: the structure, from `tree_flatten` or `tree_structure`.
      leaves: exactly `treedef.num_leaves` values, in flattening order.

    Returns:
      The pytree with the given leaves in place of the `*`s.

    Raises:
      TreeStructureError: if the number of leaves does not match.

    Example:
      >>> tree_unflatten(tree_structure({'x': (0, 0)}), ['a', 'b'])
      {'x': ('a', 'b')}
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise TreeStructureError(
            f"tree_unflatten: the structure has {treedef.num_leaves} leaves but "
            f"{len(leaves)} leaves were given.\n  structure : {treedef}\n"
            f"  given     : a sequence of {len(leaves)} leaves\n"
            f"Pass exactly one leaf per '*', in the order tree_flatten returned them.")
    return _build(treedef._node, iter(leaves))


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """The leaves of a pytree, in flattening order.

    Args:
      tree: any pytree.
      is_leaf: optional predicate; subtrees for which it returns True are leaves.

    Returns:
      The list of leaves (None is a node, so it never appears).

    Example:
      >>> tree_leaves([1, None, (2, {'k': 3})])
      [1, 2, 3]
    """
    leaves: list[Any] = []
    _flatten_into(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> PyTreeDef:
    """The structure of a pytree, without its leaves.

    Args:
      tree: any pytree.
      is_leaf: optional predicate; subtrees for which it returns True are leaves.

    Returns:
      The `PyTreeDef` of `tree`.

    Example:
      >>> tree_structure((1, [2, 3])) == tree_structure(('a', ['b', 'c']))
      True
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """Apply `f` leafwise to one or more pytrees of the same structure.

    Args:
      f: called as `f(leaf, *corresponding_leaves_of_rest)`.
      tree: the pytree whose structure the result has.
      *rest: further pytrees, each with exactly the structure of `tree`.
      is_leaf: optional predicate; subtrees for which it returns True are leaves.

    Returns:
      A pytree of `tree`'s structure holding the results of `f`.

    Raises:
      TreeStructureError: if a tree in `rest` has a different structure.

    Example:
      >>> tree_map(lambda x, y: x + y, {'a': 1, 'b': (2, 3)}, {'a': 10, 'b': (20, 30)})
      {'a': 11, 'b': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves = [leaves]
    for i, other in enumerate(rest):
        other_leaves, other_def = tree_flatten(other, is_leaf)
        if other_def != treedef:
            raise _mismatch(
                f"tree_map: argument {i + 2} (rest[{i}]) does not have the structure of the "
                "first tree.",
                ("first tree", f"argument {i + 2}"), (treedef, other_def),
                "Give every tree passed to tree_map the same containers: the same node types, "
                "dict keys, list lengths and namedtuple/dataclass types.")
        all_leaves.append(other_leaves)
    return _build(treedef._node, iter([f(*xs) for xs in zip(*all_leaves)]))


def tree_all(tree: Any, is_leaf: IsLeaf = None) -> bool:
    """True when every leaf of `tree` is truthy (also for a tree with no leaves).

    Args:
      tree: any pytree.
      is_leaf: optional predicate; subtrees for which it returns True are leaves.

    Returns:
      `all(tree_leaves(tree, is_leaf))`.

    Example:
      >>> tree_all((True, [1, 2])), tree_all({'a': True, 'b': 0})
      (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


_NO_INITIAL = object()


def tree_reduce(f: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIAL,
                is_leaf: IsLeaf = None) -> Any:
    """Fold the leaves of `tree` with `f`, like `functools.reduce`.

    Args:
      f: a function of two arguments, the accumulated value and the next leaf.
      tree: any pytree.
      initializer: optional start value; without it the first leaf starts the fold.
      is_leaf: optional predicate; subtrees for which it returns True are leaves.

    Returns:
      The folded value.

    Raises:
      TreeStructureError: if the tree has no leaves and no `initializer` is given.

    Example:
      >>> tree_reduce(lambda acc, x: acc + x, [1, (2, 3)], 100)
      106
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is not _NO_INITIAL:
        return functools.reduce(f, leaves, initializer)
    if not leaves:
        raise TreeStructureError(
            f"tree_reduce: {tree_structure(tree, is_leaf)} has no leaves, so there is nothing to "
            "start the fold from. Pass an initializer, e.g. tree_reduce(f, tree, 0).")
    return functools.reduce(f, leaves)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True when the structure is a single leaf (None and () are nodes, not leaves).

    Args:
      treedef: a structure from `tree_structure` or `tree_flatten`.

    Returns:
      Whether `treedef` is `PyTreeDef(*)`.

    Example:
      >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure(None))
      (True, False)
    """
    return treedef._node is _LEAF


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer-structure tree of inner-structure trees inside out.

    Args:
      outer_treedef: the structure of the outer containers.
      inner_treedef: the structure found at each leaf of `outer_treedef`.
      pytree_to_transpose: a tree of structure outer-of-inner.

    Returns:
      A tree of structure `inner_treedef` with a tree of `outer_treedef` at each leaf.

    Raises:
      TreeStructureError: if the tree is not `outer_treedef` with `inner_treedef` at each leaf.

    Example:
      >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0))
      >>> tree_transpose(outer, inner, [(1, 2), (3, 4)])
      ([1, 3], [2, 4])
    """
    def graft(node):
        return inner_treedef._node if node is _LEAF else (node[0], node[1], tuple(map(graft, node[2])))
    leaves, treedef = tree_flatten(pytree_to_transpose)
    n_outer, n_inner = outer_treedef.num_leaves, inner_treedef.num_leaves
    expected = PyTreeDef(graft(outer_treedef._node), n_outer * n_inner)
    if treedef != expected:
        raise _mismatch("tree_transpose: the tree is not the outer structure with the inner "
                        "structure at each of its leaves.", ("expected", "got"), (expected, treedef),
                        "Pass outer_treedef and inner_treedef that compose to the tree's structure.")
    groups = [leaves[i * n_inner:(i + 1) * n_inner] for i in range(n_outer)]
    per_inner_leaf = [_build(outer_treedef._node, (g[j] for g in groups)) for j in range(n_inner)]
    return _build(inner_treedef._node, iter(per_inner_leaf))


def broadcast_prefix(prefix_tree: Any, full_tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """For each leaf of `full_tree`, the leaf of `prefix_tree` that covers it.

    This is how a single `in_axes=0`, or `(0, None)`, is matched to arbitrarily
    nested arguments: a prefix leaf -- including None -- covers the whole
    subtree of `full_tree` at its position.

    Args:
      prefix_tree: a pytree whose containers repeat those of `full_tree` down to its leaves.
      full_tree: the pytree to cover.
      is_leaf: optional predicate applied to both trees.

    Returns:
      A list with one prefix leaf per leaf of `full_tree`, in flattening order.

    Raises:
      TreeStructureError: if `prefix_tree` is not a prefix of `full_tree`.

    Example:
      >>> broadcast_prefix((0, None), ([1, 2], {'a': 3, 'b': 4}))
      [0, 0, None, None]
    """
    prefix_is_leaf = (lambda x: x is None) if is_leaf is None else (lambda x: x is None or is_leaf(x))
    prefix_leaves: list[Any] = []
    prefix_node = _flatten_into(prefix_tree, prefix_leaves, prefix_is_leaf)
    if prefix_node is _LEAF:  # the common in_axes=0 case
        return prefix_leaves * len(tree_leaves(full_tree, is_leaf))
    prefix_def = PyTreeDef(prefix_node, len(prefix_leaves))
    full_def = tree_structure(full_tree, is_leaf)
    covered: list[Any] = []
    prefix_iter = iter(prefix_leaves)

    def cover(prefix_node, full_node) -> bool:
        if prefix_node is _LEAF:
            covered.extend([next(prefix_iter)] * _count_leaves(full_node))
            return True
        return _same_kind(prefix_node, full_node) and all(map(cover, prefix_node[2], full_node[2]))

    if not cover(prefix_def._node, full_def._node):
        raise _mismatch(
            "broadcast_prefix: the prefix tree is not a prefix of the full tree.",
            ("prefix", "full tree"), (prefix_def, full_def),
            "A prefix must repeat the full tree's containers down to where it stops; each prefix "
            "leaf (a value or None) then applies to the whole subtree beneath it. For arguments "
            "(x, {'a': y}), valid prefixes include 0, (0, None) and (0, {'a': 1}).",
            prefix_ok=True)
    return covered


def _add_node_kind(node_type: Any, kind: _NodeKind, caller: str) -> None:
    if not isinstance(node_type, type):
        raise PyTreeRegistrationError(f"{caller}: expected a class, got {node_type!r}.")
    if node_type in _registry:
        raise PyTreeRegistrationError(
            f"{caller}: {node_type.__qualname__} is already a pytree node type. A type can be "
            "registered only once; register it in one place (e.g. next to its class definition).")
    _registry[node_type] = kind


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
    _add_node_kind(node_type, _NodeKind(
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

    _add_node_kind(cls, _NodeKind(
        lambda x: ([getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)),
        lambda meta_values, ch: cls(**dict(zip(data, ch)), **dict(zip(meta, meta_values))),
        describe, lambda meta_values, num_children: [f".{n}" for n in data]), "register_dataclass")
    return cls
