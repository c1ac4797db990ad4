"""Tests of the planned paths of funcdiff.numpy's joining, splitting, tiling and rolling.

Those functions plan their primitives once per shapes, dtypes and settings
(cached) and bind fewer primitives than a one-operand-at-a-time composition.
Each row here is checked against numpy (values and dtype, float32 included),
through the general path (operands given as nested lists, or settings that
cannot key the cache), under jit, vmap and grad, and the primitives each
path binds are pinned so a regression to a costlier composition is noticed.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import AxisError, DTypeError, ShapeError
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(0)


def _primitives(f, *args):
    return [eqn.primitive.name for eqn in fd.make_jaxpr(f)(*args).eqns]


def _same(out, expected):
    out = np.asarray(out)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


# (function, operand shapes, keyword settings)
JOIN_ROWS = [
    ("concatenate", [(3,), (4,)], {}),
    ("concatenate", [(2, 3), (2, 1)], {"axis": -1}),
    ("concatenate", [(2, 3)], {"axis": 1}),
    ("stack", [(3,), (3,), (3,)], {}),
    ("stack", [(2, 3), (2, 3)], {"axis": 1}),
    ("stack", [(2, 3), (2, 3)], {"axis": -1}),
    ("stack", [(), ()], {}),
    ("stack", [(3,)], {}),
    ("hstack", [(3,), (2,)], {}),
    ("hstack", [(2, 3), (2, 1)], {}),
    ("hstack", [(), (2,)], {}),
    ("vstack", [(3,), (3,)], {}),
    ("vstack", [(3,), (2, 3)], {}),
    ("vstack", [(), ()], {}),
    ("vstack", [(3,)], {}),
]


@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.parametrize("name,shapes,kw", JOIN_ROWS)
def test_join_matches_numpy_on_both_paths(name, shapes, kw, dtype):
    args = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    expected = getattr(np, name)(args, **kw)
    _same(getattr(fnp, name)(args, **kw), expected)                       # planned
    _same(getattr(fnp, name)(tuple(args), **kw), expected)
    _same(getattr(fnp, name)([a.tolist() for a in args], **kw).astype(dtype), expected)
    _same(fd.jit(lambda *a: getattr(fnp, name)(list(a), **kw))(*args), expected)


@pytest.mark.parametrize("name,shapes,kw", JOIN_ROWS)
def test_join_transforms(name, shapes, kw):
    args = tuple(RNG.standard_normal(s) for s in shapes)
    f = lambda *a: getattr(fnp, name)(list(a), **kw)  # noqa: E731
    check_grads(lambda *a: fnp.sin(f(*a)), args, order=2)
    batched = tuple(np.stack([a, 2 * a + 1]) for a in args)
    expected = np.stack([getattr(np, name)([a[i] for a in batched], **kw) for i in range(2)])
    np.testing.assert_allclose(fd.vmap(f)(*batched), expected)
    np.testing.assert_allclose(fd.jit(fd.vmap(f))(*batched), expected)


def test_join_promotes_and_keeps_float32():
    v32, v64, vi = np.ones(3, "f4"), np.ones(3), np.arange(3)
    assert fnp.stack([v32, v32]).dtype == np.float32
    assert fnp.vstack([v32, vi]).dtype == np.float64
    assert fnp.concatenate([v32, v64]).dtype == np.float64
    assert fnp.stack([v64, v64], dtype=np.float32).dtype == np.float32
    assert fnp.hstack([vi, vi], dtype="f4").dtype == np.float32


def test_stack_and_vstack_bind_one_concatenate_and_one_reshape():
    v = np.ones(4)
    assert _primitives(lambda a, b, c: fnp.stack([a, b, c]), v, v, v) == [
        "concatenate", "reshape"]
    assert _primitives(lambda a, b: fnp.vstack([a, b]), v, v) == ["concatenate", "reshape"]
    assert _primitives(lambda a, b: fnp.stack([a, b], axis=1), v, v) == [
        "expand_dims", "expand_dims", "concatenate"]
    assert _primitives(lambda a, b: fnp.concatenate([a, b]), v, v) == ["concatenate"]


def test_join_errors_on_both_paths():
    v3, v4 = np.ones(3), np.ones(4)
    for seq in ([v3, v4], [v3.tolist(), v4.tolist()]):
        with pytest.raises(ShapeError, match=r"same shape, got \(3,\), \(4,\)"):
            fnp.stack(seq)
        with pytest.raises(ShapeError, match=r"got shapes \(1, 3\), \(1, 4\)"):
            fnp.vstack(seq)
    with pytest.raises(ShapeError, match="zero-dimensional"):
        fnp.concatenate([np.array(1.0), np.array(2.0)])
    with pytest.raises(ShapeError, match="at least one array"):
        fnp.concatenate([])
    with pytest.raises(DTypeError, match="the input of stack"):
        fnp.stack([np.array(["a"]), np.array(["b"])])
    # the complex operand is reshaped before the failing cast, as one operand at a time
    with pytest.raises(DTypeError, match=r"c128\[1,3\]"):
        fnp.stack([v3, v3 * 1j], dtype="f8")


def test_settings_that_cannot_key_the_plan_cache():
    v = np.ones(3)
    fnp.concatenate([v, v], axis=0)  # cached for axis 0 ...
    with pytest.raises(AxisError, match="must be an integer"):
        fnp.concatenate([v, v], axis=0.0)  # ... which must not answer for 0.0
    assert fnp.stack([v, v], axis=np.int64(-1)).shape == (3, 2)
    with pytest.raises(AxisError, match="out of bounds"):
        fnp.stack([v, v], axis=2)


# (function, shape, indices_or_sections, axis)
SPLIT_ROWS = [
    ("split", (8,), 2, 0),
    ("split", (4, 6), [1, 4], -1),
    ("split", (4, 6), (2,), 0),
    ("split", (4, 6), [5, 2], 1),
    ("array_split", (7,), 3, 0),
    ("array_split", (3, 5), 1, 1),
]


@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.parametrize("name,shape,ios,axis", SPLIT_ROWS)
def test_split_matches_numpy_on_both_paths(name, shape, ios, axis, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    expected = getattr(np, name)(x, ios, axis=axis)
    for ios_arg, axis_arg in [(ios, axis), (np.asarray(ios), np.int64(axis))]:  # planned, general
        pieces = getattr(fnp, name)(x, ios_arg, axis=axis_arg)
        assert len(pieces) == len(expected)
        for p, e in zip(pieces, expected):
            _same(p, e)
    jitted = fd.jit(lambda a: getattr(fnp, name)(a, ios, axis=axis))(x)
    for p, e in zip(jitted, expected):
        _same(p, e)


@pytest.mark.parametrize("name,shape,ios,axis", SPLIT_ROWS)
def test_split_transforms(name, shape, ios, axis):
    x = RNG.standard_normal(shape)

    def f(a):
        return sum(fnp.sin(p).sum() * (i + 1) for i, p in enumerate(
            getattr(fnp, name)(a, ios, axis=axis)))
    check_grads(f, (x,), order=2)
    batched = np.stack([x, 2 * x])
    out = fd.vmap(lambda a: getattr(fnp, name)(a, ios, axis=axis))(batched)
    for i in range(2):
        for p, e in zip(out, getattr(np, name)(batched[i], ios, axis=axis)):
            np.testing.assert_allclose(p[i], e)


def test_split_binds_one_slice_per_piece_and_errors():
    v = np.ones(6)
    assert _primitives(lambda a: fnp.split(a, 3), v) == ["slice"] * 3
    assert _primitives(lambda a: fnp.split(a, 1), v) == []
    with pytest.raises(ShapeError, match="equal division"):
        fnp.split(v, 4)
    fnp.split(v, 2, axis=0)
    with pytest.raises(AxisError, match="must be an integer"):
        fnp.split(v, 2, axis=0.0)


# (function, shape, positional settings); planned when the settings are Python ints
TILING_ROWS = [
    ("roll", (8,), (1,)),
    ("roll", (8,), (-3, 0)),
    ("roll", (2,), (1,)),
    ("roll", (3, 4), (5,)),
    ("roll", (3, 4), ((1, 2), (0, 1))),
    ("roll", (3, 4), (1, -1)),
    ("tile", (3,), (3,)),
    ("tile", (2, 3), ((2, 1, 2),)),
    ("tile", (3,), ((1,),)),
    ("repeat", (4,), (2,)),
    ("repeat", (2, 3), (3,)),
    ("repeat", (2, 3), (2, -1)),
    ("flip", (5,), ()),
    ("flip", (2, 3), (1,)),
    ("flip", (2, 3), ((0, -1),)),
]


def _general(settings):
    """The settings as (lists of) numpy ints, which take the uncached plan."""
    return tuple([np.int64(i) for i in s] if isinstance(s, tuple) else np.int64(s)
                 for s in settings)


@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.parametrize("name,shape,settings", TILING_ROWS)
def test_tiling_matches_numpy_on_both_paths(name, shape, settings, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    expected = getattr(np, name)(x, *settings)
    _same(getattr(fnp, name)(x, *settings), expected)
    if name != "flip":  # flip's axis must be an int or a tuple
        _same(getattr(fnp, name)(x, *_general(settings)), expected)
    _same(getattr(fnp, name)(x.tolist(), *settings).astype(dtype), expected)
    _same(fd.jit(lambda a: getattr(fnp, name)(a, *settings))(x), expected)


@pytest.mark.parametrize("name,shape,settings", TILING_ROWS)
def test_tiling_transforms(name, shape, settings):
    x = RNG.standard_normal(shape)
    f = lambda a: getattr(fnp, name)(a, *settings)  # noqa: E731
    check_grads(lambda a: fnp.sin(f(a)), (x,), order=2)
    batched = np.stack([x, 2 * x + 1])
    expected = np.stack([getattr(np, name)(b, *settings) for b in batched])
    np.testing.assert_allclose(fd.vmap(f)(batched), expected)
    np.testing.assert_allclose(fd.jit(fd.vmap(f))(batched), expected)


def test_tiling_binds_its_few_primitives():
    v = np.ones(8)
    assert _primitives(lambda a: fnp.roll(a, 3), v) == ["slice", "slice", "concatenate"]
    assert _primitives(lambda a: fnp.roll(a, 8), v) == []
    assert _primitives(lambda a: fnp.roll(a, 1), np.ones(2)) == ["rev"]
    assert _primitives(lambda a: fnp.tile(a, 3), v) == ["broadcast_in_dim", "reshape"]
    assert _primitives(lambda a: fnp.repeat(a, 2), v) == ["broadcast_in_dim", "reshape"]
    assert _primitives(lambda a: fnp.flip(a), v) == ["rev"]


def test_tiling_settings_that_cannot_key_the_plan_cache():
    v = np.arange(4.0)
    _same(fnp.flip(v, 0), v[::-1])  # cached for axis 0 ...
    with pytest.raises(AxisError, match="must be an integer"):
        fnp.flip(v, 0.0)  # ... which must not answer for 0.0
    fnp.repeat(v, 2, axis=0)
    with pytest.raises(AxisError, match="must be an integer"):
        fnp.repeat(v, 2, axis=0.0)
    with pytest.raises(ShapeError, match="negative"):
        fnp.repeat(v, -1)
    _same(fnp.roll(v, 1.5), np.roll(v, 1))  # numpy truncates a float shift
    _same(fnp.repeat(v, [1, 0, 2, 1]), np.repeat(v, [1, 0, 2, 1]))
    with pytest.raises(ShapeError, match="non-negative"):
        fnp.tile(v, (2, -1))
