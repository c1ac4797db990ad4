"""Key paths: where each leaf sits in a pytree, as JAX's key classes name it.

A path is a tuple of keys, one per container on the way down to a leaf:

- ``SequenceKey(i)``: the ``i``-th item of a tuple or list;
- ``DictKey(k)``: the item of a dict (or OrderedDict) under key ``k``;
- ``GetAttrKey(name)``: a field of a namedtuple or a registered dataclass;
- ``FlattenedIndexKey(i)``: the ``i``-th child of a node type registered with
  ``register_pytree_node`` (whose children have no names).

``str(key)`` is the Python spelling (``[0]``, ``['w']``, ``.bias``) and
``keystr(path)`` joins them, so ``keystr(path)`` reads like the expression
that reaches the leaf.
"""

from __future__ import annotations

import collections
from typing import Any

from funcdiff.pytrees.registry import LEAF, NAMEDTUPLE, IsLeaf, flatten_into, kind_of


class PathKey:
    """One step of a key path; subclasses name their one field (``FIELD``) and spell it."""

    __slots__ = ()
    FIELD = ""

    def value(self) -> Any:
        return getattr(self, self.FIELD)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.FIELD}={self.value()!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.value() == self.value()

    def __hash__(self) -> int:
        return hash((type(self), self.value()))


class SequenceKey(PathKey):
    """The ``idx``-th item of a tuple or list."""
    __slots__ = ("idx",)
    FIELD = "idx"

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx}]"


class DictKey(PathKey):
    """The item of a dict under ``key``."""
    __slots__ = ("key",)
    FIELD = "key"

    def __init__(self, key: Any):
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class GetAttrKey(PathKey):
    """The attribute ``name`` of a namedtuple or dataclass."""
    __slots__ = ("name",)
    FIELD = "name"

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(PathKey):
    """The ``key``-th child of a custom registered node."""
    __slots__ = ("key",)
    FIELD = "key"

    def __init__(self, key: int):
        self.key = key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def child_keys(node: tuple) -> list:
    """The keys of a structure node's children."""
    node_type, aux, children = node
    if node_type in (tuple, list):
        return [SequenceKey(i) for i in range(len(children))]
    if node_type in (dict, collections.OrderedDict):
        return [DictKey(k) for k in aux]
    kind = kind_of(node)
    if kind is NAMEDTUPLE:
        return [GetAttrKey(f) for f in aux._fields]
    labels = kind.child_labels(aux, len(children))
    if all(label.startswith(".") for label in labels):  # a dataclass's fields
        return [GetAttrKey(label[1:]) for label in labels]
    return [FlattenedIndexKey(i) for i in range(len(children))]


def leaves_with_path(tree: Any, is_leaf: IsLeaf = None) -> tuple[list, Any]:
    """``[(path, leaf), ...]`` in ``tree_flatten``'s order, and the structure node."""
    leaves: list = []
    node = flatten_into(tree, leaves, is_leaf)
    paths: list = []

    def walk(n: Any, path: tuple) -> None:
        if n is LEAF:
            paths.append(path)
            return
        for key, child in zip(child_keys(n), n[2]):
            walk(child, path + (key,))
    walk(node, ())
    return list(zip(paths, leaves)), node


def keystr(path: tuple) -> str:
    """The path as Python would spell the access.

    Example:
      >>> keystr((DictKey("w"), SequenceKey(0), GetAttrKey("bias")))
      "['w'][0].bias"
    """
    return "".join(str(k) for k in path)
