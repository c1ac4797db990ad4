"""Argument handling shared by all of funcdiff.numpy.

Converts what users pass (arrays, tracers, Python scalars, nested lists, whose
traced leaves ``stack_nested`` joins: public as ``funcdiff.numpy.stack_nested``)
into values primitives accept, promotes dtypes the numpy-2 way (through
``funcdiff.dtypes.result_type``, the one place promotion is computed),
normalises axes, and rejects arguments funcdiff does not support with errors
that name the function and the argument.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from funcdiff import bridge, dtypes
from funcdiff.backends import backend_of
from funcdiff.core import Tracer, concrete_value, get_aval
from funcdiff.errors import (AxisError, ConcretizationError, DTypeError, InvalidArgumentError,
                             ShapeError, UnsupportedNumpyError)
from funcdiff.primitives import elementwise, structural
from funcdiff.primitives.cards import broadcast_shapes

_PY_SCALARS = (bool, int, float)


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)


def refuse_dropping_imaginary(name: str, x: Any, dtype: Any) -> None:
    """numpy casts complex values to a real ``dtype=`` by dropping the imaginary part,
    with only a warning; funcdiff refuses (tracers cast by convert_element_type,
    which refuses too)."""
    if (dtype is not None and np.dtype(dtype).kind != "c" and not isinstance(x, Tracer)
            and np.iscomplexobj(x)):
        raise DTypeError(
            f"{name} cannot convert complex values to {np.dtype(dtype)}: that would drop the "
            "imaginary part silently. Take fnp.real(z) (or fnp.abs(z)) explicitly.")


def asarray(x: Any, name: str = "funcdiff.numpy", dtype: Any = None) -> Any:
    """``x`` as an array or tracer funcdiff can bind (lists become numpy arrays)."""
    if isinstance(x, Tracer):
        if dtype is not None and x.dtype != np.dtype(dtype):
            return elementwise.convert_element_type(x, new_dtype=np.dtype(dtype))
        return x
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) for e in flat(x)):
        return stack_nested(x, dtype)
    if type(x) is not np.ndarray and backend_of(x) is not None:  # a dask (cupy ...) array
        if bridge.calls.depth and not backend_of(x).dispatches:
            x = bridge.wrap_leaf(x)  # closed over inside a transform: computed on like arguments
        if dtype is not None and get_aval(x).dtype != np.dtype(dtype):
            return elementwise.convert_element_type(x, new_dtype=np.dtype(dtype))
        return x
    refuse_dropping_imaginary(name, x, dtype)
    arr = np.asarray(x, dtype=dtype)
    if arr.dtype.kind not in "biuf":
        dtypes.check_dtype(arr.dtype, f"the input of {name}")  # complex passes, object fails
    return arr


def flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from flat(e)
        else:
            yield e


def dtype_of(x: Any) -> np.dtype:
    return x.dtype if hasattr(x, "dtype") else dtypes.dtype_of(x)


def promote(name: str, *args: Any) -> list[Any]:
    """Convert ``args`` to one dtype by numpy-2 rules; Python scalars are weak."""
    dtype = dtypes.result_type(*args)
    return [cast(a, dtype) for a in args]


def promote_to_float(name: str, *args: Any) -> list[Any]:
    """Like ``promote``, then ints and bools become float64 (as numpy's float ufuncs do)."""
    dtype = dtypes.result_type(*args)
    if not dtypes.is_float(dtype):
        dtype = dtypes.default_float
    return [cast(a, dtype) for a in args]


def cast(x: Any, dtype: np.dtype) -> Any:
    """``x`` with dtype ``dtype``; Python scalars become 0-d numpy arrays."""
    if type(x) in _PY_SCALARS:
        return np.asarray(x, dtype=dtype)
    if isinstance(x, Tracer):
        if x.dtype == dtype:
            return x
        return elementwise.convert_element_type(x, new_dtype=dtype)
    x = asarray(x)
    if x.dtype == dtype:
        return x
    return elementwise.convert_element_type(x, new_dtype=dtype)


def normalize_axis(axis: Any, ndim: int, name: str) -> int:
    try:
        axis = int(axis)
    except TypeError:
        raise AxisError(f"{name}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < max(ndim, 1):
        raise AxisError(f"{name}: axis {axis} is out of range for an array of rank {ndim}")
    return axis % max(ndim, 1)


def normalize_axes(axis: Any, ndim: int, name: str) -> tuple[int, ...]:
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, name) for a in axis)
        if len(set(axes)) != len(axes):
            raise AxisError(f"{name}: repeated axis in {axis}")
        return tuple(sorted(axes))
    return (normalize_axis(axis, ndim, name),)


def reject(name: str, **kwargs: Any) -> None:
    """Raise for numpy arguments funcdiff does not support when they are not default."""
    for key, value in kwargs.items():
        if value is not None:
            raise UnsupportedNumpyError(
                f"funcdiff.numpy.{name} does not support the argument {key}= "
                f"(funcdiff arrays are immutable and functions are pure); call it without "
                f"{key}= and use the returned value.")


def concrete_or_none(x: Any, name: str) -> np.ndarray | None:
    """The value of ``x`` as a numpy array, or None when it is abstract (a tracer
    under jit, make_jaxpr or vmap); a tracer with a concrete value (under grad)
    gives that value."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return np.asarray(x.to_concrete(f"funcdiff.numpy.{name}"))
    except ConcretizationError:
        return None


def static_int(value: Any, name: str, arg: str) -> int:
    """``value`` as a Python int, for a static integer argument ``arg`` of the
    function ``name`` (a diagonal offset, a number of samples): a traced value
    with a concrete value (under grad) is read, an abstract one gets
    ``concrete_value``'s ConcretizationError, a non-integer an
    InvalidArgumentError naming the argument."""
    value = concrete_value(value, name)
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgumentError(f"{name} needs an integer {arg}, got {value!r}") from None


def static_count(value: Any, name: str, arg: str, purpose: str) -> int:
    """``value`` as a non-negative Python int, for an argument (``size=``, ``length=``,
    an order ``m=``) that fixes the shape of ``name``'s result. A traced value with a
    concrete value (under grad) is read; an abstract one gets a ConcretizationError
    saying to pass a Python int; a bool, a non-integer or a negative value gets an
    InvalidArgumentError. ``purpose`` says what the argument is, for the messages."""
    if isinstance(value, Tracer):
        aval = value.aval.str_short()
        try:
            value = value.to_concrete(f"funcdiff.numpy.{name}")
        except ConcretizationError:
            raise ConcretizationError(
                f"funcdiff.numpy.{name}: {arg}= is {purpose}, which fixes the shape of the "
                f"result, so it must be a concrete int, but got the abstract {aval} (under "
                f"jit, make_jaxpr or vmap). Pass {arg}= as a Python int, e.g. mark it static "
                "with fd.jit(f, static_argnums=...).") from None
    try:
        count = None if isinstance(value, (bool, np.bool_)) else operator.index(value)
    except TypeError:
        count = None
    if count is None or count < 0:
        raise InvalidArgumentError(
            f"funcdiff.numpy.{name}: {arg}= is {purpose} and must be a non-negative Python "
            f"int, got {value!r}.")
    return int(count)


def shape_of(x: Any) -> tuple[int, ...]:
    return get_aval(x).shape if not isinstance(x, (list, tuple)) else np.shape(x)


def broadcast_arrays_of(name: str, *args: Any) -> list[Any]:
    shape = broadcast_shapes(name, *[shape_of(a) for a in args])
    return [structural.broadcast_to(a, shape) for a in args]


# ---------------------------------------------------------------------------
# Nested lists holding tracers (used by funcdiff.numpy.array / asarray)


def stack_nested(obj: Any, dtype: Any = None) -> Any:
    """An array from a nested list/tuple whose leaves may be tracers, arrays or scalars.

    Leaves are promoted as ``numpy.array`` would (Python scalars count as
    float64/int64/bool, not weakly). Every leaf is flattened in row-major order
    (runs of constant leaves become one numpy constant), joined by one
    concatenate and reshaped, so the result is differentiable in each traced leaf.

    Raises:
      ShapeError: the nesting is ragged.

    >>> import funcdiff.numpy as fnp, numpy as np
    >>> fnp.stack_nested([[1, 2], [np.float32(3), 4]])
    array([[1., 2.],
           [3., 4.]])
    """
    leaves: list = []

    def shape_of(o) -> tuple:
        if isinstance(o, (list, tuple)):
            shapes = [shape_of(e) for e in o]
            if any(t != shapes[0] for t in shapes):
                raise ShapeError(
                    "funcdiff.numpy.array: the nested sequence is ragged (its elements have "
                    f"shapes {', '.join(str(t) for t in shapes)}); every element of a level "
                    "must have the same shape.")
            return (len(o),) + (shapes[0] if shapes else ())
        leaf = o if isinstance(o, Tracer) else asarray(o, "array")
        leaves.append(leaf)
        return get_aval(leaf).shape
    shape = shape_of(obj)
    if dtype is not None:
        target = dtypes.check_dtype(dtype, "the dtype= of funcdiff.numpy.array")
    elif leaves:
        target = dtypes.result_type(*leaves)
    else:
        target = dtypes.default_float
    pieces, constants = [], []

    def flush():
        if constants:
            pieces.append(np.concatenate(constants).astype(target))
            constants.clear()
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            flush()
            flat = cast(leaf, target)
            if leaf.ndim != 1:
                flat = structural.reshape(flat, new_sizes=(leaf.size,))
            pieces.append(flat)
        else:
            constants.append(np.ravel(leaf))
    flush()
    if not pieces:
        return np.zeros(shape, target)
    out = pieces[0] if len(pieces) == 1 else structural.concatenate(*pieces, dimension=0)
    return out if len(shape) == 1 else structural.reshape(out, new_sizes=shape)


__all__ = ["stack_nested"]  # public in funcdiff.numpy; the rest serve its modules
