"""Tests of funcdiff.tree_util: flattening, structures, mapping, registration, prefixes."""
import collections
import dataclasses
import doctest

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcdiff.tree_util as tree_util
from funcdiff.errors import FunctionalDiffError, TreeStructureError
from funcdiff.tree_util import (
    PyTreeDef, PyTreeRegistrationError, broadcast_prefix, register_dataclass, register_pytree_node,
    tree_all, tree_flatten, tree_leaves, tree_map, tree_reduce, tree_structure, tree_transpose,
    tree_unflatten, treedef_is_leaf)

Point = collections.namedtuple("Point", ["x", "y"])


@register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


@register_dataclass(meta_fields=["activation"])
@dataclasses.dataclass
class Layer:
    weights: object
    activation: str


@dataclasses.dataclass
class Scaled:
    value: object
    scale: float


register_dataclass(Scaled, data_fields=["value"], meta_fields=["scale"])


class Box:
    """A custom node: holds children in a list plus a hashable label."""

    def __init__(self, items, label):
        self.items, self.label = list(items), label

    def __eq__(self, other):
        return type(other) is Box and self.items == other.items and self.label == other.label


register_pytree_node(Box, lambda b: (b.items, b.label), lambda label, items: Box(items, label))


def same_tree(a, b):
    """Equality that also checks container types (Point(1, 2) == (1, 2) in Python)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):  # a plain dict comes back in sorted key order
        keys_match = sorted(a) == sorted(b) if type(a) is dict else list(a) == list(b)
        return keys_match and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(same_tree, a, b))
    if isinstance(a, (Params, Layer, Scaled, Box)):
        return same_tree(vars(a), vars(b))
    return a is b or a == b


leaf_values = st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False)


def containers(children):
    return (st.tuples(children, children) | st.lists(children, max_size=3)
            | st.dictionaries(st.text("abc", min_size=1, max_size=2), children, max_size=3)
            | st.builds(Point, children, children) | st.builds(Params, children, children)
            | st.builds(Layer, children, st.sampled_from(["relu", "tanh"]))
            | st.builds(Box, st.lists(children, max_size=2), st.sampled_from(["p", "q"]))
            | st.builds(collections.OrderedDict, st.lists(st.tuples(st.sampled_from("zyx"), children),
                                                          max_size=3)))


trees = st.recursive(leaf_values | st.none(), containers, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(trees)
def test_flatten_unflatten_round_trip(tree):
    leaves, treedef = tree_flatten(tree)
    rebuilt = tree_unflatten(treedef, leaves)
    assert same_tree(rebuilt, tree)
    assert treedef.num_leaves == len(leaves) == len(tree_leaves(tree))
    assert tree_structure(rebuilt) == treedef
    assert hash(tree_structure(rebuilt)) == hash(treedef)
    assert all(x is not None for x in leaves)
    # Leaves are passed through untouched and in order, whatever they are.
    markers = [object() for _ in leaves]
    assert tree_leaves(tree_unflatten(treedef, markers)) == markers


@settings(max_examples=200, deadline=None)
@given(trees)
def test_structure_ignores_leaf_values(tree):
    shifted = tree_map(lambda x: x + 1, tree)
    assert tree_structure(shifted) == tree_structure(tree)
    assert tree_leaves(shifted) == [x + 1 for x in tree_leaves(tree)]


def test_dict_children_in_sorted_key_order_and_repr():
    leaves, treedef = tree_flatten({"b": [2, 3], "a": 1})
    assert leaves == [1, 2, 3]
    assert str(tree_structure((0, {"a": 0, "b": [0, 0]}))) == "PyTreeDef((*, {'a': *, 'b': [*, *]}))"
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert str(tree_structure(Point(1, None))) == "PyTreeDef(Point(x=*, y=None))"
    assert str(tree_structure(Scaled(1.0, 2.0))) == "PyTreeDef(Scaled(value=*; scale=2.0))"
    assert str(tree_structure(Box([1], "p"))) == "PyTreeDef(CustomNode(Box['p'], [*]))"


def test_none_is_a_node_not_a_leaf():
    assert tree_leaves([None, 1, (None,)]) == [1]
    assert tree_structure(None).num_leaves == 0
    assert tree_structure(None) != tree_structure(0)
    assert tree_unflatten(tree_structure((None, 0)), [5]) == (None, 5)


def test_arrays_and_unregistered_objects_are_leaves():
    a, b = np.ones(3), np.zeros((2, 2))
    leaves = tree_leaves((a, {"k": b}, "text", 3 + 1j))
    assert leaves[0] is a and leaves[1] is b and leaves[2:] == ["text", 3 + 1j]

    class MyTuple(tuple):  # a tuple subclass without _fields is not a node
        pass
    assert tree_leaves(MyTuple((1, 2))) == [MyTuple((1, 2))]


def test_namedtuple_and_ordered_dict_keep_their_types():
    assert tree_map(lambda v: v * 10, Point(1, 2)) == Point(10, 20)
    assert type(tree_map(lambda v: v, Point(1, 2))) is Point
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    mapped = tree_map(lambda v: -v, od)
    assert type(mapped) is collections.OrderedDict and list(mapped.items()) == [("z", -1), ("a", -2)]
    assert tree_leaves(od) == [1, 2]  # insertion order, not sorted


@pytest.mark.parametrize("a, b, equal", [
    ((1, [2, 3]), (4.0, [np.ones(2), "x"]), True),
    ({"a": 1, "b": 2}, {"b": 0, "a": 0}, True),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}, False),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ((1, 2), [1, 2], False),
    ((1, 2), Point(1, 2), False),
    ((1, (2, 3)), (1, 2, 3), False),
    ((1, None), (1, 2), False),
    ([], (), False),
    (Params(1, 2), Params(3, 4), True),
    (Params(1, 2), Point(1, 2), False),
    (Layer(1, "relu"), Layer(2, "relu"), True),
    (Layer(1, "relu"), Layer(1, "tanh"), False),
    (Scaled(1, 2.0), Scaled(1, 3.0), False),
    (Box([1], "p"), Box([1], "q"), False),
    (Box([1], "p"), Box([5], "p"), True),
])
def test_treedef_equality_and_hashing(a, b, equal):
    ta, tb = tree_structure(a), tree_structure(b)
    assert (ta == tb) is equal and (ta != tb) is (not equal)
    if equal:
        assert hash(ta) == hash(tb)
        assert {ta: "cached"}[tb] == "cached"
    else:
        assert len({ta, tb}) == 2


def test_treedef_is_immutable_and_reports_sizes():
    treedef = tree_structure((1, [2, None]))
    with pytest.raises(AttributeError):
        treedef.num_leaves = 5
    with pytest.raises(AttributeError):
        treedef._node = None
    assert treedef.num_leaves == 2
    assert treedef.num_nodes == 5  # tuple, 1, list, 2, None
    assert treedef.children() == [tree_structure(0), tree_structure([0, None])]
    assert tree_structure(0).children() == []
    assert treedef.unflatten("ab") == ("a", ["b", None])
    assert treedef == tree_structure((1, [2, None])) and treedef != (1, [2, None])


def test_tree_map_over_multiple_trees():
    x = {"w": np.arange(3.0), "b": (1.0, 2.0)}
    y = {"w": np.ones(3), "b": (10.0, 20.0)}
    z = {"w": 2.0, "b": (0.5, 0.5)}
    out = tree_map(lambda a, b, c: (a + b) * c, x, y, z)
    np.testing.assert_allclose(out["w"], [2.0, 4.0, 6.0])
    assert out["b"] == (5.5, 11.0)


def test_tree_map_mismatch_error_shows_both_structures_and_where():
    with pytest.raises(TreeStructureError) as info:
        tree_map(lambda a, b: a + b, (1, {"a": 2}), (1, {"b": 2}))
    msg = str(info.value)
    assert "PyTreeDef((*, {'a': *}))" in msg and "PyTreeDef((*, {'b': *}))" in msg
    assert "at [1]" in msg and "tree_map" in msg
    assert isinstance(info.value, FunctionalDiffError) and isinstance(info.value, ValueError)
    with pytest.raises(TreeStructureError, match=r"at \[1\]\[0\]: \* vs \(\*, \*\)"):
        tree_map(lambda a, b: a, [0, [1]], [0, [(1, 2)]])


def test_tree_unflatten_wrong_leaf_count():
    treedef = tree_structure((0, [0, 0]))
    with pytest.raises(TreeStructureError) as info:
        tree_unflatten(treedef, [1, 2])
    msg = str(info.value)
    assert "PyTreeDef((*, [*, *]))" in msg and "3 leaves" in msg and "2 leaves" in msg


def test_is_leaf_stops_flattening():
    tree = [(1, 2), (3, (4, 5))]
    pairs = lambda x: isinstance(x, tuple) and len(x) == 2 and not isinstance(x[1], tuple)
    leaves, treedef = tree_flatten(tree, is_leaf=pairs)
    assert leaves == [(1, 2), 3, (4, 5)]
    assert tree_unflatten(treedef, leaves) == tree
    summed = tree_map(lambda v: sum(v) if isinstance(v, tuple) else -v, tree, is_leaf=pairs)
    assert summed == [3, (-3, 9)]
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_custom_node_registration():
    box = Box([1, (2, 3)], "p")
    leaves, treedef = tree_flatten(box)
    assert leaves == [1, 2, 3]
    assert tree_unflatten(treedef, [7, 8, 9]) == Box([7, (8, 9)], "p")

    class Generated:
        def __init__(self, a, b):
            self.a, self.b = a, b
    # flatten_fn may return any iterable of children.
    register_pytree_node(Generated, lambda g: (iter([g.a, g.b]), None), lambda _, ch: Generated(*ch))
    assert tree_leaves(Generated(1, [2])) == [1, 2]


@pytest.mark.parametrize("node_type", [tuple, list, dict, type(None), Box, Params])
def test_registering_twice_is_an_error(node_type):
    with pytest.raises(PyTreeRegistrationError, match="already a pytree node type"):
        register_pytree_node(node_type, lambda x: ((), None), lambda aux, ch: None)
    assert issubclass(PyTreeRegistrationError, FunctionalDiffError)


def test_registration_argument_errors():
    with pytest.raises(PyTreeRegistrationError, match="expected a class"):
        register_pytree_node("Box", lambda x: ((), None), lambda aux, ch: None)
    with pytest.raises(PyTreeRegistrationError, match="callable"):
        register_pytree_node(type("T", (), {}), None, lambda aux, ch: None)

    class NotADataclass:
        pass
    with pytest.raises(PyTreeRegistrationError, match="not a dataclass"):
        register_dataclass(NotADataclass)

    @dataclasses.dataclass
    class Two:
        a: int
        b: int
    with pytest.raises(PyTreeRegistrationError, match="exactly once"):
        register_dataclass(Two, data_fields=["a"], meta_fields=["a", "b"])
    with pytest.raises(PyTreeRegistrationError, match="exactly once"):
        register_dataclass(Two, data_fields=["a", "c"])


def test_unhashable_aux_data_error_teaches():
    class Listy:
        def __init__(self, x, tags):
            self.x, self.tags = x, tags
    register_pytree_node(Listy, lambda v: ([v.x], v.tags), lambda tags, ch: Listy(ch[0], tags))
    treedef = tree_structure(Listy(1, ["unhashable"]))
    with pytest.raises(PyTreeRegistrationError, match="hashable"):
        hash(treedef)


def test_register_dataclass_meta_fields_are_static():
    layer = Layer(weights=(np.ones(2), 3.0), activation="relu")
    leaves, treedef = tree_flatten(layer)
    assert len(leaves) == 2 and leaves[0] is layer.weights[0] and leaves[1] == 3.0
    rebuilt = tree_unflatten(treedef, [10, 20])
    assert rebuilt == Layer(weights=(10, 20), activation="relu")
    assert treedef != tree_structure(Layer(weights=(1, 2), activation="tanh"))
    assert "activation='relu'" in str(treedef)
    scaled = tree_map(lambda v: v + 1, Scaled(value=[1, 2], scale=0.5))
    assert scaled == Scaled(value=[2, 3], scale=0.5)


@pytest.mark.parametrize("prefix, full, expected", [
    (0, (1, [2, 3], {"a": 4}), [0, 0, 0, 0]),
    (None, (1, 2), [None, None]),
    ((0, None), ([1, 2], {"a": 3, "b": 4}), [0, 0, None, None]),
    ((0, {"a": 1, "b": None}), (9, {"a": [9, 9], "b": 9}), [0, 1, 1, None]),
    ((None, 1), (None, 5), [1]),          # a None in the full tree holds no leaves
    (Point(0, 1), Point((5, 5), 5), [0, 0, 1]),
    (Params(w=1, b=None), Params(w=[1, 2], b=3), [1, 1, None]),
    ([0, 1], [[], 5], [1]),
])
def test_broadcast_prefix(prefix, full, expected):
    assert broadcast_prefix(prefix, full) == expected
    assert len(broadcast_prefix(prefix, full)) == len(tree_leaves(full))


def test_broadcast_prefix_with_is_leaf():
    tagged = lambda x: isinstance(x, tuple) and x[:1] == ("tag",)
    assert broadcast_prefix(("tag", 1), [1, 2], is_leaf=tagged) == [("tag", 1)] * 2
    assert broadcast_prefix(0, [("tag", 1), 2], is_leaf=tagged) == [0, 0]


@pytest.mark.parametrize("prefix, full, where", [
    ((0, 0), (1, 2, 3), "at the root"),
    ((0, (0, 0)), (1, (2, 3, 4)), "at [1]"),
    ({"a": 0}, {"b": 1}, "at the root"),
    ((0, [0]), (1, 2), "at [1]: [*] vs *"),
    ((0, (0,)), (1, None), "at [1]"),
])
def test_broadcast_prefix_mismatch_error(prefix, full, where):
    with pytest.raises(TreeStructureError) as info:
        broadcast_prefix(prefix, full)
    msg = str(info.value)
    prefix_def = tree_structure(prefix, is_leaf=lambda x: x is None)
    assert str(prefix_def) in msg and str(tree_structure(full)) in msg
    assert where in msg and "prefix" in msg


def test_tree_all_reduce_transpose_and_is_leaf():
    assert tree_all([True, (1, {"a": 2.0})]) and not tree_all([True, (0,)]) and tree_all(())
    assert tree_reduce(max, {"a": 3, "b": [7, 1]}) == 7
    assert tree_reduce(lambda acc, x: acc + [x], (1, 2), []) == [1, 2]
    with pytest.raises(TreeStructureError, match=r"PyTreeDef\(\{\}\) has no leaves"):
        tree_reduce(max, {})
    assert treedef_is_leaf(tree_structure(np.ones(2)))
    assert not treedef_is_leaf(tree_structure(None)) and not treedef_is_leaf(tree_structure(()))
    outer, inner = tree_structure({"a": 0, "b": 0}), tree_structure(Point(0, 0))
    transposed = tree_transpose(outer, inner, {"a": Point(1, 2), "b": Point(3, 4)})
    assert transposed == Point({"a": 1, "b": 3}, {"a": 2, "b": 4})
    with pytest.raises(TreeStructureError, match="tree_transpose"):
        tree_transpose(outer, inner, {"a": Point(1, 2), "b": (3, 4)})


def test_unsortable_dict_keys_error():
    with pytest.raises(TreeStructureError, match="sortable"):
        tree_flatten({1: "a", "b": 2})


def test_docstring_examples():
    results = doctest.testmod(tree_util, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 10
    assert results.failed == 0
    public = [getattr(tree_util, name) for name in tree_util.__all__]
    assert all(obj.__doc__ for obj in public)
    assert all(">>>" in obj.__doc__ for obj in public if callable(obj) and not isinstance(obj, type))


def test_leaf_paths_name_each_leaf_as_errors_print_it():
    Point = collections.namedtuple("Point", "x y")
    tree = (np.ones(2), {"w": 1.0, "b": [2.0, Point(3.0, 4.0)]}, None)
    paths = tree_util.tree_structure(tree).leaf_paths()
    assert paths == ["[0]", "[1]['b'][0]", "[1]['b'][1].x", "[1]['b'][1].y", "[1]['w']"]
    assert tree_util.tree_structure(1.0).leaf_paths() == [""]
