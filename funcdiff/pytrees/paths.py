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


class SequenceKey:
    """The ``idx``-th item of a tuple or list."""
    __slots__ = ("idx",)

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx}]"

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self.idx})"

    def __eq__(self, other: object) -> bool:
        return type(other) is SequenceKey and other.idx == self.idx

    def __hash__(self) -> int:
        return hash((SequenceKey, self.idx))


class DictKey:
    """The item of a dict under ``key``."""
    __slots__ = ("key",)

    def __init__(self, key: Any):
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def __repr__(self) -> str:
        return f"DictKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is DictKey and other.key == self.key

    def __hash__(self) -> int:
        return hash((DictKey, self.key))


class GetAttrKey:
    """The attribute ``name`` of a namedtuple or dataclass."""
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"

    def __repr__(self) -> str:
        return f"GetAttrKey(name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is GetAttrKey and other.name == self.name

    def __hash__(self) -> int:
        return hash((GetAttrKey, self.name))


class FlattenedIndexKey:
    """The ``key``-th child of a custom registered node."""
    __slots__ = ("key",)

    def __init__(self, key: int):
        self.key = key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self.key})"

    def __eq__(self, other: object) -> bool:
        return type(other) is FlattenedIndexKey and other.key == self.key

    def __hash__(self) -> int:
        return hash((FlattenedIndexKey, self.key))


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
