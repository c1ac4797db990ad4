"""Argument handling shared by the user-facing transforms.

What every transform in ``funcdiff.api``, ``funcdiff.jacobians`` and
``funcdiff.compiler.jit`` does to a call before any tracing: flatten the user's
pytree arguments to a list of array leaves (checking each one, with errors
that name the transform, the argument and how to fix it), normalise
``argnums``, check that differentiated arguments are floating, wrap the
function as one of flat leaves (recording the output tree and a ``has_aux``
value), and build zero cotangents.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import backends, dtypes
from funcdiff.bridge import wrap_leaf
from funcdiff.core import ShapedArray, Tracer, Zero, get_aval, is_array_like, lock_arguments
from funcdiff.errors import (ConcretizationError, DifferentiationError, InvalidArgumentError,
                             TracerConversionError)
from funcdiff.tree_util import PyTreeDef, tree_flatten, tree_unflatten

# functools.wraps without copying the wrapped object's __dict__: a transform of a
# jitted function must not inherit its cache.
wraps = functools.partial(functools.wraps, updated=())


def as_leaf(x: Any, transform: str, where: str) -> Any:
    """A pytree leaf as an array-like funcdiff can trace, or a clear error.

    float0 arrays (the tangents of integer values) are accepted as they are.
    """
    if isinstance(x, (Tracer, np.ndarray, np.generic)):
        if not isinstance(x, Tracer) and x.dtype != dtypes.float0:
            dtypes.check_dtype(x.dtype, f"{transform} input {where}", allow_complex=True)
        return x
    if type(x) in (float, int, bool, complex):
        return np.asarray(x)
    if backends.backend_of(x) is not None:  # a dask, cupy, torch ... array
        dtypes.check_dtype(get_aval(x).dtype, f"{transform} input {where}", allow_complex=True)
        return wrap_leaf(x)  # torch and array_api_strict arrays compute through their namespace
    raise InvalidArgumentError(
        f"{transform} expected arrays or Python scalars as inputs, but {where} is "
        f"{type(x).__name__}: {x!r:.60}. Pass numpy arrays (numpy.asarray(...)), or "
        "mark non-array arguments static (jit's static_argnums) or close over them.")


def flatten_args(args: Sequence[Any], transform: str, name: str = "argument"):
    leaves, tree = tree_flatten(tuple(args))
    return checked_leaves(leaves, transform, name), tree


def checked_leaves(leaves: Sequence[Any], transform: str, name: str = "argument") -> list:
    """Flat leaves as values funcdiff can trace (``as_leaf``), or its clear error."""
    out = []
    for i, x in enumerate(leaves):
        if type(x) is np.ndarray and x.dtype.kind in dtypes.SUPPORTED_KINDS:
            out.append(x)  # the common case, checked without building the error text
        else:
            out.append(as_leaf(x, transform, f"{name} leaf {i}"))
    return out


def normalize_argnums(argnums: int | Sequence[int], nargs: int, transform: str) -> tuple[int, ...]:
    if type(argnums) is int and 0 <= argnums < nargs:
        return (argnums,)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise InvalidArgumentError(
                f"{transform} got argnums={argnums!r}, but the function was called with "
                f"{nargs} positional argument(s); argnums must be integers in "
                f"[{-nargs}, {nargs}).")
    nums = tuple(a % nargs for a in nums)
    if len(set(nums)) != len(nums):
        twice = next(a for a in nums if nums.count(a) > 1)
        raise InvalidArgumentError(
            f"{transform} got argnums={argnums!r}, which names argument {twice} more than "
            "once (negative numbers count from the end); give each argument once.")
    return nums


def partial_on(f: Callable, args: Sequence[Any], argnums: tuple[int, ...]) -> Callable:
    """``f`` as a function of ``args[argnums]`` only, the rest fixed."""
    def f_partial(*dyn):
        full = list(args)
        for i, v in zip(argnums, dyn):
            full[i] = v
        return f(*full)
    return f_partial


def raise_conversion_cause(error: ValueError) -> None:
    """Raise the funcdiff error behind numpy's "setting an array element with a sequence".

    Storing a tracer into a numpy array (``a[i] = x``, ``numpy.fromiter``) asks the
    tracer for a number; when it refuses (its value carries a derivative, or is
    abstract), numpy replaces the refusal by that ValueError and keeps it as the
    cause. The cause is the error that names the line and the fix.
    """
    cause = error.__cause__
    if isinstance(cause, (TracerConversionError, ConcretizationError)):
        raise cause from None


class OutInfo:
    """What a function wrapped by ``flat_fun`` returned, known once it has run.

    ``tree``: the tree of its output (the aux value split off); ``aux_tree``:
    the ``AuxTree`` of the aux value (None without has_aux); ``n``: the number
    of output leaves, which come before the aux value's array leaves.
    """

    __slots__ = ("tree", "aux_tree", "n")

    def __init__(self):
        self.tree: PyTreeDef | None = None
        self.aux_tree: AuxTree | None = None
        self.n = 0


def flat_fun(f: Callable, in_tree: PyTreeDef, out_info: OutInfo, has_aux: bool = False,
              transform: str = "transform") -> Callable:
    """Wrap ``f`` (pytrees in and out) as a function of flat leaves.

    What it returned (output tree, aux value, number of output leaves) is
    written into ``out_info`` once ``f`` has run.
    """
    # the common case costs no tree work: arguments that are one array each, and a
    # single array (or scalar) as the output
    plain_args = _leaf_tuples.get(in_tree.num_leaves) is in_tree

    def f_flat(*leaves):
        lock_arguments(leaves, transform)
        try:
            out = f(*leaves) if plain_args else f(*tree_unflatten(in_tree, leaves))
        except ValueError as e:
            raise_conversion_cause(e)
            raise
        if not has_aux and isinstance(out, (Tracer, np.ndarray)):
            out_info.tree, out_info.n = _LEAF_TREE, 1
            return [out]
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise InvalidArgumentError(
                    f"{transform} was called with has_aux=True, so the function must "
                    f"return a pair (output, aux), but it returned {type(out).__name__}.")
            out, aux = out
            out_leaves, out_tree = tree_flatten(out)
            aux_tree = AuxTree(aux)
            out_info.tree, out_info.aux_tree, out_info.n = out_tree, aux_tree, len(out_leaves)
            return [check_output(o, transform, i) for i, o in enumerate(out_leaves)] + \
                aux_tree.array_leaves
        out_leaves, out_tree = tree_flatten(out)
        out_info.tree, out_info.n = out_tree, len(out_leaves)
        return [check_output(o, transform, i) for i, o in enumerate(out_leaves)]
    return f_flat


class AuxTree:
    """The aux value of a has_aux function: its array leaves travel through the
    transform as extra outputs (so their values are plain arrays afterwards);
    other leaves (strings, objects) are kept aside unchanged."""

    def __init__(self, aux: Any):
        leaves, self.tree = tree_flatten(aux)
        self.is_array = [is_array_like(l) for l in leaves]
        self.others = [l for l, a in zip(leaves, self.is_array) if not a]
        self.array_leaves = [l for l, a in zip(leaves, self.is_array) if a]

    @property
    def num_leaves(self) -> int:
        return len(self.array_leaves)

    def unflatten(self, array_values: Sequence[Any]) -> Any:
        arrays, others = iter(array_values), iter(self.others)
        return tree_unflatten(self.tree, [next(arrays) if a else next(others)
                                          for a in self.is_array])


def check_output(o: Any, transform: str, i: int) -> Any:
    if is_array_like(o):
        return o
    raise InvalidArgumentError(
        f"{transform}: the function returned a {type(o).__name__} as output leaf {i}; "
        "outputs must be arrays, scalars or pytrees of them.")


def zeros_like_aval(aval: ShapedArray) -> np.ndarray:
    if dtypes.is_inexact(aval.dtype):  # complex intermediates carry tangents too
        return np.zeros(aval.shape, aval.dtype)
    return np.zeros(aval.shape, dtypes.float0)


def materialize(t: Any) -> Any:
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def describe(aval: ShapedArray) -> str:
    return aval.str_short()


_INEXACT_SCALARS = frozenset({np.float32, np.float64, np.complex64, np.complex128})
_leaf_tuples: dict[int, PyTreeDef] = {}  # the tree of a tuple of k arrays, by k
_LEAF_TREE = tree_flatten(0.0)[1]  # the tree of a single array


def _all_inexact(leaves: Sequence[Any]) -> bool:
    """Whether every leaf is a plain float or complex numpy array or numpy scalar."""
    for x in leaves:
        t = type(x)
        if t not in _INEXACT_SCALARS and (t is not np.ndarray or x.dtype.kind not in "fc"):
            return False
    return True


def differentiable_leaves(args: Sequence[Any], argnums: tuple[int, ...], transform: str):
    """The flat leaves and tree of ``args[argnums]``, which must be float or complex
    arrays (``check_complex_inputs`` then applies each transform's rule).

    Plain float arrays and numpy float scalars (the common cases) need no
    flattening, and containers of them are flattened once and checked in one
    pass; other arguments are checked leaf by leaf (``checked_leaves``), and the
    error path flattens argument by argument to name the offending argument and
    leaf.
    """
    leaves = [args[i] for i in argnums]
    if _all_inexact(leaves):
        tree = _leaf_tuples.get(len(leaves))
        if tree is None:
            tree = _leaf_tuples[len(leaves)] = tree_flatten(tuple(leaves))[1]
        return leaves, tree
    leaves, tree = tree_flatten(tuple(leaves))
    if _all_inexact(leaves):  # containers (a list of layers) of plain float arrays
        return leaves, tree
    try:
        leaves = checked_leaves(leaves, transform)
    except InvalidArgumentError:
        _check_differentiable(argnums, args, transform)
        raise
    for leaf in leaves:
        if (leaf.dtype if type(leaf) is np.ndarray else get_aval(leaf).dtype).kind not in "fc":
            _check_differentiable(argnums, args, transform)
    return leaves, tree


def check_complex_inputs(leaves: Sequence[Any], holomorphic: bool, transform: str,
                         complex_allowed: bool = True) -> None:
    """Each transform's rule for complex inputs, as JAX's: with ``holomorphic=True``
    every differentiated input is complex; without it, complex inputs are allowed
    only where ``complex_allowed`` (grad and jacrev: the gradient of a real output
    is df/dx - i df/dy; jacfwd and hessian refuse, since their columns would need
    a complex structure the function may not have)."""
    for i, x in enumerate(leaves):
        kind = get_aval(x).dtype.kind
        if holomorphic and kind != "c":
            raise DifferentiationError(
                f"{transform}(holomorphic=True) needs complex inputs, but differentiated "
                f"input leaf {i} has dtype {get_aval(x).dtype}. Pass it as a complex array "
                "(x.astype(complex)), or drop holomorphic=True to differentiate a function "
                "of real inputs.")
        if kind == "c" and not holomorphic and not complex_allowed:
            raise DifferentiationError(
                f"{transform} needs real inputs without holomorphic=True, but "
                f"differentiated input leaf {i} is {get_aval(x).dtype}. For a holomorphic "
                f"function pass {transform}(f, holomorphic=True); for a real-valued function "
                "of complex inputs use jacrev or grad (df/dx - i df/dy); otherwise pass the "
                "real and imaginary parts as separate real arguments.")


def _check_differentiable(argnums: tuple[int, ...], args, transform: str):
    for i in argnums:
        for j, leaf in enumerate(tree_flatten(args[i])[0]):
            dtype = get_aval(as_leaf(leaf, transform, f"argument {i} leaf {j}")).dtype
            if not dtypes.is_inexact(dtype):
                raise DifferentiationError(
                    f"{transform} cannot differentiate with respect to argument {i}: it has "
                    f"dtype {dtype}, and only floating and complex values have derivatives. "
                    "Pass a float array (e.g. x.astype(float) or 1.0 instead of 1), or "
                    "leave the argument out of argnums.")
