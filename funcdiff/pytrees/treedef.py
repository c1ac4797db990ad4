"""PyTreeDef: the structure of a pytree, and flattening a tree into leaves plus one.

`tree_flatten` turns a pytree into its list of leaves plus a `PyTreeDef`: an
immutable, hashable record of the containers around the leaves, which jit uses
as a cache key and `tree_unflatten` uses to rebuild the tree. When two
structures that should agree do not, `mismatch` builds the error that shows
both and where they first differ. The node types a structure is made of are in
`funcdiff.pytrees.registry`; `funcdiff.tree_util`, the public entry point,
re-exports everything here.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from funcdiff.pytrees.registry import (IsLeaf, PyTreeRegistrationError, LEAF, build,
                                     count_leaves, flatten_into, kind_of, node_str)
from funcdiff.errors import TreeStructureError


def same_kind(a: Any, b: Any) -> bool:
    """True when two non-leaf nodes agree on everything but their children's contents."""
    return (b is not LEAF and a[0] is b[0] and len(a[2]) == len(b[2]) and a[1] == b[1])


def first_difference(a: Any, b: Any, prefix_ok: bool, path: str = "") -> Optional[str]:
    """Where structures `a` and `b` first differ, or None; a leaf of `a` may cover
    a whole subtree of `b` when `prefix_ok`."""
    if a is LEAF and (prefix_ok or b is LEAF):
        return None
    if a is LEAF or not same_kind(a, b):
        return f"at {path or 'the root'}: {node_str(a)} vs {node_str(b)}"
    labels = kind_of(a).child_labels(a[1], len(a[2]))
    for label, child_a, child_b in zip(labels, a[2], b[2]):
        found = first_difference(child_a, child_b, prefix_ok, path + label)
        if found:
            return found
    return None


def mismatch(summary: str, names: tuple[str, str], defs: tuple[PyTreeDef, PyTreeDef],
              fix: str, prefix_ok: bool = False) -> TreeStructureError:
    width = max(map(len, names))
    where = first_difference(defs[0]._node, defs[1]._node, prefix_ok)
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
            return 1 if node is LEAF else 1 + sum(count(c) for c in node[2])
        return count(self._node)

    def leaf_paths(self) -> list[str]:
        """The path of each leaf from the root, as error messages print it
        (``"[1]['w']"``; ``""`` for a tree that is a single leaf).

        >>> from funcdiff.tree_util import tree_structure
        >>> tree_structure((1.0, {"w": 2.0, "b": [3.0]})).leaf_paths()
        ['[0]', "[1]['b'][0]", "[1]['w']"]
        """
        paths: list[str] = []

        def walk(node, path):
            if node is LEAF:
                paths.append(path)
                return
            labels = kind_of(node).child_labels(node[1], len(node[2]))
            for label, child in zip(labels, node[2]):
                walk(child, path + label)
        walk(self._node, "")
        return paths

    def children(self) -> list[PyTreeDef]:
        """Structures of the direct children (empty for a leaf)."""
        if self._node is LEAF:
            return []
        return [PyTreeDef(c, count_leaves(c)) for c in self._node[2]]

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
        return f"PyTreeDef({node_str(self._node)})"


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
    node = flatten_into(tree, leaves, is_leaf)
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
    return build(treedef._node, iter(leaves))


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
    flatten_into(tree, leaves, is_leaf)
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
    return treedef._node is LEAF
