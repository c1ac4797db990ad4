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

This module is the public entry point. It holds the operations on whole trees
built on flattening -- `tree_map`, `tree_all`, `tree_reduce`, `tree_transpose`
and `broadcast_prefix` -- and re-exports the rest, which lives in one
package-private module per concept: node types, their registry and
`register_pytree_node` / `register_dataclass` in `funcdiff.pytrees.registry`;
`PyTreeDef`, `tree_flatten`, `tree_unflatten`, `tree_leaves`, `tree_structure`
and `treedef_is_leaf` in `funcdiff.pytrees.treedef`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from funcdiff.pytrees.registry import (  # noqa: F401  re-exported: moved to _tree_registry
    IsLeaf, PyTreeRegistrationError, LEAF as _LEAF, build as _build,
    count_leaves as _count_leaves, flatten_into as _flatten_into, register_dataclass,
    register_pytree_node)
from funcdiff.pytrees.treedef import (  # noqa: F401  re-exported: moved to _treedef
    PyTreeDef, mismatch as _mismatch, same_kind as _same_kind, tree_flatten, tree_leaves,
    tree_structure, tree_unflatten, treedef_is_leaf)
from funcdiff.pytrees.paths import (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey,
                                    keystr, leaves_with_path)
from funcdiff.errors import TreeStructureError

__all__ = [
    "PyTreeDef", "PyTreeRegistrationError", "broadcast_prefix", "register_dataclass",
    "register_pytree_node", "tree_all", "tree_flatten", "tree_leaves", "tree_map",
    "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten", "treedef_is_leaf",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "register_pytree_node_class",
    "Partial",
]

# doctest.testmod finds only what is defined in a module; list the moved public names.
__test__ = {obj.__name__: obj for obj in (
    PyTreeDef, PyTreeRegistrationError, register_dataclass, register_pytree_node, tree_flatten,
    tree_leaves, tree_structure, tree_unflatten, treedef_is_leaf, keystr)}


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


# ---------------------------------------------------------------------------
# Key paths, classes that flatten themselves, and partial functions as pytrees


def tree_flatten_with_path(tree: Any, is_leaf: IsLeaf = None) -> tuple[list, PyTreeDef]:
    """``tree_flatten`` with each leaf's key path: ``([(path, leaf), ...], treedef)``.

    Example:
      >>> pairs, _ = tree_flatten_with_path({"w": [1.0, 2.0], "b": 0.5})
      >>> [(keystr(p), leaf) for p, leaf in pairs]
      [("['b']", 0.5), ("['w'][0]", 1.0), ("['w'][1]", 2.0)]
    """
    pairs, node = leaves_with_path(tree, is_leaf)
    return pairs, PyTreeDef(node, len(pairs))


def tree_leaves_with_path(tree: Any, is_leaf: IsLeaf = None) -> list:
    """``[(path, leaf), ...]`` in the order of ``tree_leaves``.

    Example:
      >>> tree_leaves_with_path([1.0, (2.0,)])
      [((SequenceKey(idx=0),), 1.0), ((SequenceKey(idx=1), SequenceKey(idx=0)), 2.0)]
    """
    return leaves_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: IsLeaf = None) -> Any:
    """Like ``tree_map``, with the leaf's key path as ``f``'s first argument.

    Example:
      >>> tree_map_with_path(lambda p, x: x if keystr(p) == "['b']" else 10 * x,
      ...                    {"w": 1.0, "b": 2.0})
      {'b': 2.0, 'w': 10.0}
    """
    pairs, node = leaves_with_path(tree, is_leaf)
    treedef = PyTreeDef(node, len(pairs))
    others = []
    for other in rest:
        other_leaves, other_def = tree_flatten(other, is_leaf)
        if other_def != treedef:
            raise _mismatch("tree_map_with_path: the trees have different structures.",
                            ("tree", "other"), (treedef, other_def),
                            "Pass trees with the same containers and keys.")
        others.append(other_leaves)
    return tree_unflatten(treedef, [f(path, leaf, *(o[i] for o in others))
                                    for i, (path, leaf) in enumerate(pairs)])


def register_pytree_node_class(cls: type) -> type:
    """Register a class that flattens itself: it defines ``tree_flatten(self) ->
    (children, aux_data)`` and the classmethod ``tree_unflatten(aux_data, children)``.
    Usable as a decorator; returns ``cls``.

    Example:
      >>> @register_pytree_node_class
      ... class Scaled:
      ...     def __init__(self, value, scale): self.value, self.scale = value, scale
      ...     def tree_flatten(self): return (self.value,), self.scale
      ...     @classmethod
      ...     def tree_unflatten(cls, scale, children): return cls(children[0], scale)
      >>> tree_leaves([Scaled(3.0, "static")])
      [3.0]
    """
    if not (callable(getattr(cls, "tree_flatten", None))
            and callable(getattr(cls, "tree_unflatten", None))):
        raise PyTreeRegistrationError(
            f"register_pytree_node_class({getattr(cls, '__name__', cls)!r}): the class must "
            "define tree_flatten(self) -> (children, aux_data) and a classmethod "
            "tree_unflatten(aux_data, children).")
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the bound arguments are its children, the
    function is static. So a function with bound arrays can be passed to (and
    returned from) jit, vmap and grad like any other value, as ``jax.tree_util.Partial``.

    Example:
      >>> import numpy as np
      >>> scale = Partial(np.multiply, np.array([1.0, 2.0]))
      >>> tree_leaves(scale), scale(3.0).tolist()
      ([array([1., 2.])], [3.0, 6.0])
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **kwargs: Any):
        if isinstance(func, functools.partial):  # flatten nested partials, keeping the order
            args, kwargs = func.args + args, {**func.keywords, **kwargs}
            func = func.func
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
