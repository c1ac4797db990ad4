"""Arrays of libraries numpy does not dispatch to (PyTorch, array_api_strict), seen through numpy's protocols.

The primitives' impls are written once, in numpy's API. Dask and CuPy arrays
take part in numpy's dispatch (NEP 13 and 18), so the impls run on them as
they are; a PyTorch tensor or an array_api_strict array does not, and numpy
would quietly convert it. ``NamespaceArray`` closes the gap:

- it wraps one such array and implements ``__array_ufunc__``,
  ``__array_function__`` and the ndarray methods the impls use, each by the
  array's own array API namespace (``np.sin(a)`` is ``xp.sin(a.raw)``,
  ``np.tensordot`` is ``xp.tensordot``, ``np.add.reduce`` is ``xp.sum``), so the
  computation stays on the library (and its device) from the first operation to
  the last;
- the api layer wraps such arguments on the way in (``wrap_leaf``) and unwraps
  results (``unwrap``): users see their own array type, never this one;
- a numpy function with no array API counterpart, and every conversion to
  numpy (``__array__``), raise a ``BackendError`` naming the numpy function and
  the library, never a silent copy to the host.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
from typing import Any

import numpy as np

from funcdiff import dtypes
from funcdiff.backends import (Backend, BackendError, as_array, backend_of, common_backend,
                               numpy_dtype, register_bridge)

# numpy ufuncs whose array API function has another name
_UFUNC_NAMES = {"absolute": "abs", "power": "pow", "arctan2": "atan2", "arcsin": "asin",
                "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
                "arctanh": "atanh", "true_divide": "divide", "conjugate": "conj",
                "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
                "right_shift": "bitwise_right_shift", "rint": "round", "fabs": "abs"}
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
_ACCUMULATIONS = {"add": "cumulative_sum", "multiply": "cumulative_prod"}

# Functions the standard lacks that a library has under its own name: (library, ufunc
# name) -> attribute path in the library's top-level module. scipy.special's ufuncs meet
# torch tensors here, so funcdiff.scipy.special runs on them where torch has the function.
LIBRARY_FUNCTIONS = {
    ("torch", name): f"special.{name}" for name in (
        "erf", "erfc", "erfinv", "erfcx", "gammaln", "digamma", "ndtr", "ndtri", "log_ndtr",
        "i0", "i0e", "i1", "i1e", "expit", "logit", "xlogy", "xlog1py", "entr", "sinc",
        "zeta", "polygamma")
} | {("torch", "psi"): "special.digamma"}  # scipy.special.digamma is the ufunc psi


class NamespaceArray:
    """An array of a library numpy does not dispatch to, computed through its namespace."""

    __slots__ = ("raw", "view", "xp")
    __array_priority__ = 100  # numpy's binary operators defer to this class

    def __init__(self, raw: Any, view: Backend, xp: Any):
        self.raw = raw
        self.view = view  # the library's Backend, as numpy-dispatching (backends.register_bridge)
        self.xp = xp

    # --- what the impls read --------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.raw.shape)

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.raw.dtype)

    @property
    def ndim(self) -> int:
        return len(self.raw.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def T(self) -> "NamespaceArray":
        return self.transpose()

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"NamespaceArray({self.raw!r})"

    # --- numpy's protocols ----------------------------------------------------------

    def __array__(self, dtype=None, copy=None):
        raise BackendError(
            f"{_converting_impl()} converts its operands with numpy.asarray, so it cannot run "
            f"on {self.view.name} arrays (funcdiff never copies them to numpy behind your "
            f"back). Compute this operation on numpy arrays instead.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not _all_known(inputs):
            return NotImplemented  # a tracer among the operands: its own protocol binds
        if kwargs.get("out") is not None:
            raise BackendError(f"numpy.{ufunc.__name__}(..., out=) has no {self.view.name} form")
        xp = self.xp
        if method == "__call__":
            fn = getattr(xp, _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__), None)
            if fn is None:
                fn = self._library_function(ufunc.__name__)
            if fn is None:
                name = ufunc.__name__
                raise self._missing(f"numpy.{name}" if getattr(np, name, None) is ufunc
                                    else f"the ufunc {name} (scipy.special's)")
            dtype = kwargs.pop("dtype", None)
            out = fn(*self._operands(inputs), **kwargs)
            return self._wrap(out if dtype is None else xp.astype(out, self.xp_dtype(dtype)))
        if method in ("reduce", "accumulate"):
            table = _REDUCTIONS if method == "reduce" else _ACCUMULATIONS
            name = table.get(ufunc.__name__)
            if name is None or not hasattr(xp, name):
                raise self._missing(f"numpy.{ufunc.__name__}.{method}")
            return reduction(name)(*inputs, **kwargs)
        raise self._missing(f"numpy.{ufunc.__name__}.{method}")

    def __array_function__(self, func, types, args, kwargs):
        if any(not issubclass(t, (NamespaceArray, np.ndarray)) for t in types):
            return NotImplemented  # a tracer among the operands: its own protocol binds
        handler = _FUNCTIONS.get(func)
        if handler is None:
            if func.__module__ in ("numpy.linalg", "numpy.fft"):  # the standard's extensions
                extension = func.__module__.rpartition(".")[2]
                fn = getattr(getattr(self.xp, extension, None), func.__name__, None)
                where = f"numpy.{extension}.{func.__name__}"
            else:
                fn = getattr(self.xp, func.__name__, None)
                where = f"numpy.{func.__name__}"
                if func.__module__ not in ("numpy", "numpy._core.fromnumeric",
                                           "numpy._core.numeric", "numpy._core.multiarray"):
                    fn = None
            if fn is None:
                raise self._missing(where)
            return _wrap_tree(fn(*_operands_tree(args, self), **kwargs), self)
        return handler(*args, **kwargs)

    # --- methods ----------------------------------------------------------------------

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return self._wrap(self.xp.reshape(self.raw, tuple(shape)))

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        axes = tuple(axes) if axes else tuple(range(self.ndim))[::-1]
        return self._wrap(self.xp.permute_dims(self.raw, axes))

    def astype(self, dtype, copy=True, **kwargs):
        return self._wrap(self.xp.astype(self.raw, self.xp_dtype(dtype), copy=copy))

    def copy(self):
        return self._wrap(self.xp.asarray(self.raw, copy=True))

    def ravel(self):
        return self.reshape(-1)

    def item(self):
        return self.raw.item() if hasattr(self.raw, "item") else self.raw.__float__()

    def all(self, axis=None):
        return self._wrap(self.xp.all(self.raw, axis=axis))

    def any(self, axis=None):
        return self._wrap(self.xp.any(self.raw, axis=axis))

    def sum(self, axis=None, dtype=None, keepdims=False):
        return reduction("sum")(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def __getitem__(self, key):
        raw, key = _positive_steps(self.xp, self.raw, key)
        return self._wrap(raw[self._index(key)])

    def __setitem__(self, key, value):
        self.raw[self._index(key)] = self._operand(value)

    def __bool__(self) -> bool:
        return bool(self.raw)

    def __float__(self) -> float:
        return float(self.raw)

    def __int__(self) -> int:
        return int(self.raw)

    def __index__(self) -> int:
        return operator.index(int(self.raw))

    # --- conversions ----------------------------------------------------------------

    def scatter_add(self, operand: Any, indices: Any, updates: Any, axis: int) -> "NamespaceArray":
        """``operand`` with ``updates`` added at ``indices`` along ``axis`` (repeated
        indices add up), in the namespace: the standard has no scatter, so the updates
        are summed into place by a matrix product with the indices' one-hot matrix
        (k indices by n positions: memory k * n)."""
        xp = self.xp
        operand, updates = self._operand(operand), self._operand(updates)
        n = operand.shape[axis]
        indices = indices if type(indices) is NamespaceArray else np.asarray(indices)
        flat = xp.reshape(self._operand(indices), (-1,))
        k = flat.shape[0]
        one_hot = xp.astype(xp.reshape(flat, (k, 1)) == xp.reshape(xp.arange(n), (1, n)),
                            operand.dtype)
        shape = tuple(updates.shape)
        lead, index_ndim = axis, len(shape) - operand.ndim + 1
        updates = xp.reshape(updates, shape[:lead] + (k,) + shape[lead + index_ndim:])
        summed = xp.moveaxis(xp.moveaxis(updates, lead, -1) @ one_hot, -1, lead)
        return self._wrap(operand + summed)

    def _library_function(self, name: str):
        """The library's own function ``name`` where the standard has none, or None."""
        library = type(self.raw).__module__.partition(".")[0]
        path = LIBRARY_FUNCTIONS.get((library, name))
        if path is None:
            return None
        fn = sys.modules.get(library)
        for part in path.split("."):
            fn = getattr(fn, part, None)
        return fn

    def call_library(self, name: str, *args: Any) -> "NamespaceArray":
        """The library's own function ``name`` (LIBRARY_FUNCTIONS) applied to ``args``
        (this library's arrays unwrapped, other values as they are)."""
        fn = self._library_function(name)
        if fn is None:
            raise self._missing(f"scipy.special.{name}")
        return self._wrap(fn(*[self._operand(a) if isinstance(a, (NamespaceArray, np.ndarray))
                               else a for a in args]))

    def like(self, x: Any) -> "NamespaceArray":
        """``x`` (a numpy array, or an array of this library) as an array of this library."""
        return self._wrap(self._operand(x))

    def complex_from(self, re: Any, im: Any) -> "NamespaceArray":
        """``re + i im`` in the namespace (the standard has no ``complex`` constructor)."""
        xp = self.xp
        re, im = self._operand(re), self._operand(im)
        dtype = self.xp_dtype(dtypes.complex_dtype(numpy_dtype(re.dtype)))
        unit = xp.asarray(1j, dtype=dtype)
        return self._wrap(xp.astype(re, dtype) + xp.astype(im, dtype) * unit)

    def xp_dtype(self, dtype: Any) -> Any:
        """The namespace's dtype of the same name as the numpy ``dtype``."""
        name = np.dtype(dtype).name
        found = getattr(self.xp, {"bool": "bool"}.get(name, name), None)
        if found is None:
            raise BackendError(f"{self.view.name} has no dtype {name}")
        return found

    def _operand(self, x: Any) -> Any:
        if type(x) is NamespaceArray:
            return x.raw
        if isinstance(x, (np.ndarray, np.generic)):
            x = np.asarray(x)
            if x.strides and min(x.strides) < 0:  # a reversed view: torch takes none
                x = x.copy()
            return self.xp.asarray(x, dtype=self.xp_dtype(x.dtype))
        return x  # a Python scalar, which the namespace takes as it is

    def _operands(self, xs) -> list:
        return [self._operand(x) for x in xs]

    def _index(self, key, top: bool = True):
        if isinstance(key, tuple):
            key = tuple(self._index(k, False) for k in key)
            if top and Ellipsis not in key and sum(k is not None for k in key) < self.ndim:
                key = key + (Ellipsis,)  # the standard wants every axis indexed
            return key
        if isinstance(key, (NamespaceArray, np.ndarray)):
            return self._operand(key)
        return self._index((key,)) if top and self.ndim > 1 else key

    def _wrap(self, raw: Any) -> "NamespaceArray":
        return NamespaceArray(raw, self.view, self.xp)

    def _missing(self, what: str) -> BackendError:
        return BackendError(
            f"{what} has no array API form that funcdiff knows, so it cannot run on "
            f"{self.view.name} arrays. Use an operation of the array API standard, or "
            "numpy arrays.")


_KNOWN = (np.ndarray, np.generic, int, float, complex, bool)
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _converting_impl() -> str:
    """The funcdiff function (an impl) that is converting an array to numpy now, for
    the error; found on the call stack, in the error path only."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_PACKAGE) and not path.endswith("bridge.py"):
            module = os.path.relpath(path, os.path.dirname(_PACKAGE))[:-3].replace(os.sep, ".")
            return f"numpy.asarray in {module}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "a numpy function"


def _all_known(xs) -> bool:
    return all(type(x) is NamespaceArray or isinstance(x, _KNOWN) for x in xs)


def _operator(ufunc, reflected: bool = False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


for _name, _ufunc in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.divide), ("floordiv", np.floor_divide),
                      ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
                      ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    setattr(NamespaceArray, f"__{_name}__", _operator(_ufunc))
    setattr(NamespaceArray, f"__r{_name}__", _operator(_ufunc, reflected=True))
for _name, _ufunc in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    setattr(NamespaceArray, f"__{_name}__", _operator(_ufunc))
NamespaceArray.__neg__ = lambda self: np.negative(self)
NamespaceArray.__pos__ = lambda self: self
NamespaceArray.__abs__ = lambda self: np.absolute(self)
NamespaceArray.__invert__ = lambda self: np.invert(self)
NamespaceArray.__hash__ = None
del _name, _ufunc


# --- numpy functions, by the numpy function object ------------------------------------

def _positive_steps(xp, raw, key):
    """``(raw, key)`` with each slice of negative step made positive by flipping its axis
    first (the standard, and torch, take positive steps only)."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(type(k) is slice and k.step is not None and k.step < 0 for k in keys):
        return raw, key
    consuming = [k for k in keys if k is not None and k is not Ellipsis]
    axis, out = 0, []
    for k in keys:
        if k is Ellipsis:
            axis = raw.ndim - (len(consuming) - sum(1 for o in out if o is not None
                                                    and o is not Ellipsis))
            out.append(k)
            continue
        if k is None:
            out.append(k)
            continue
        if type(k) is slice and k.step is not None and k.step < 0:
            n = raw.shape[axis]
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            raw = xp.flip(raw, axis=axis)
            k = slice(n - 1 - start, n - 1 - start + count * -step, -step)
        out.append(k)
        axis += 1
    return raw, tuple(out) if isinstance(key, tuple) else out[0]


def _first(args) -> NamespaceArray:
    for a in args:
        if type(a) is NamespaceArray:
            return a
        if isinstance(a, (list, tuple)):
            found = _first(a)
            if found is not None:
                return found
    return None


def _operands_tree(args, like: NamespaceArray):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) and any(isinstance(e, (NamespaceArray, np.ndarray))
                                                for e in a):
            out.append([like._operand(e) for e in a])
        elif isinstance(a, (NamespaceArray, np.ndarray, np.generic)):
            out.append(like._operand(a))
        else:
            out.append(a)
    return out


def _wrap_tree(out, like: NamespaceArray):
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # a named result (SVDResult)
        return tuple(_wrap_tree(o, like) for o in out)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_tree(o, like) for o in out)
    if type(out) is bool or type(out) is int or type(out) is float:
        return out
    return like._wrap(out)


def reduction(name: str):
    """The numpy-style reduction ``np.<...>(x, axis=, dtype=, keepdims=)`` by ``xp.<name>``."""
    def reduce(x, axis=None, dtype=None, keepdims=False, **ignored):
        x = x if type(x) is NamespaceArray else _first([x])
        axis = tuple(axis) if isinstance(axis, list) else axis
        fn = getattr(x.xp, name)
        if name in ("cumulative_sum", "cumulative_prod"):
            raw = x.raw if axis is not None else x.xp.reshape(x.raw, (-1,))  # numpy flattens
            out = fn(raw, axis=axis if axis is not None else 0)
        elif name in ("sum", "prod") and dtype is not None:
            out = fn(x.raw, axis=axis, dtype=x.xp_dtype(dtype), keepdims=keepdims)
        elif dtype is not None:  # the standard's other reductions take no dtype: cast first
            out = fn(x.xp.astype(x.raw, x.xp_dtype(dtype)), axis=axis, keepdims=keepdims)
        else:
            out = fn(x.raw, axis=axis, keepdims=keepdims)
        return x._wrap(out)
    return reduce


def _namespace_call(name: str, *, arrays: int = 1):
    """``np.f(a, b, ..., **kw)`` as ``xp.<name>`` of the first ``arrays`` operands' raw arrays."""
    def call(*args, **kwargs):
        like = _first(args)
        fn = getattr(like.xp, name, None)
        if fn is None:
            raise like._missing(f"numpy function {name}")
        operands = _operands_tree(args[:arrays], like) + list(args[arrays:])
        return _wrap_tree(fn(*operands, **kwargs), like)
    return call


def _joining(name: str):
    """numpy's concatenate / stack (the axis positional or keyword) by ``xp.<name>``."""
    def call(arrays, axis=0, **ignored):
        like = _first([arrays])
        return like._wrap(getattr(like.xp, name)([like._operand(a) for a in arrays], axis=axis))
    return call


def _dot(x, y):
    like = _first((x, y))
    a, b = like._operand(x), like._operand(y)
    if len(getattr(a, "shape", ())) == 0 or len(getattr(b, "shape", ())) == 0:
        return like._wrap(a * b)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return like._wrap(like.xp.vecdot(a, b))
    if len(b.shape) == 1:
        return like._wrap(like.xp.matmul(a, b))
    return like._wrap(like.xp.tensordot(a, b, axes=((len(a.shape) - 1,), (len(b.shape) - 2,))))


def _take(a, indices, axis=None, **ignored):
    """numpy's take (any index shape, a flattened ``a`` without ``axis``) by the standard's
    ``take``, which takes 1-D integer indices of its own library."""
    like = _first((a, indices))
    xp, x = like.xp, like._operand(a)
    if axis is None:
        x, axis = xp.reshape(x, (-1,)), 0
    axis %= x.ndim
    index = like._operand(np.asarray(indices) if isinstance(indices, (int, list)) else indices)
    index_shape = tuple(index.shape)
    out = xp.take(x, xp.reshape(index, (-1,)), axis=axis)
    return like._wrap(xp.reshape(out, tuple(x.shape[:axis]) + index_shape
                                 + tuple(x.shape[axis + 1:])))


def _tensordot(x, y, axes=2):
    like = _first((x, y))
    return like._wrap(like.xp.tensordot(like._operand(x), like._operand(y), axes=axes))


def _where(c, x=None, y=None):
    like = _first((c, x, y))
    if x is None:
        return _wrap_tree(like.xp.nonzero(like._operand(c)), like)
    return like._wrap(like.xp.where(like._operand(c), like._operand(x), like._operand(y)))


def _like(name: str):
    """np.zeros_like / ones_like / full_like (with ``shape=``) by xp.zeros / ones / full."""
    def like_fn(a, *fill, dtype=None, shape=None, **ignored):
        like = _first((a,))
        xp = like.xp
        shape = like.shape if shape is None else tuple(shape)
        dtype = like.xp_dtype(like.dtype if dtype is None else dtype)
        device = getattr(like.raw, "device", None)
        kwargs = {"dtype": dtype} if device is None else {"dtype": dtype, "device": device}
        if name == "full":
            value = fill[0]
            if isinstance(value, (np.ndarray, np.generic, NamespaceArray)):
                value = value.item()  # the standard's full takes a Python scalar
            return like._wrap(xp.full(shape, value, **kwargs))
        return like._wrap(getattr(xp, name)(shape, **kwargs))
    return like_fn


def _transpose(a, axes=None):
    return _first((a,)).transpose(*(axes or ()))


def _sorting(name: str):
    """numpy's sort / argsort (``kind="stable"`` included) by the standard's, stable."""
    def call(a, axis=-1, kind=None, order=None):
        if order is not None:
            raise a._missing(f"numpy.{name}(order=...)")
        if axis is None:
            a, axis = a.reshape(-1), 0
        return a._wrap(getattr(a.xp, name)(a.raw, axis=axis, stable=True))
    return call


def _swapaxes(a, axis1, axis2):
    axes = list(range(a.ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return a._wrap(a.xp.permute_dims(a.raw, tuple(axes)))


def _reshape(a, shape, order="C"):
    return _first((a,)).reshape(shape)


def _flip(a, axis=None):
    like = _first((a,))
    return like._wrap(like.xp.flip(like.raw, axis=axis))


def _result_type(*args):
    return np.result_type(*[a.dtype if type(a) is NamespaceArray else a for a in args])


def _ndim(a):
    return a.ndim


def _shape(a):
    return a.shape


_FUNCTIONS = {
    np.dot: _dot, np.tensordot: _tensordot, np.matmul: _namespace_call("matmul", arrays=2),
    np.where: _where, np.sum: reduction("sum"), np.prod: reduction("prod"),
    np.max: reduction("max"), np.min: reduction("min"), np.amax: reduction("max"),
    np.amin: reduction("min"), np.mean: reduction("mean"), np.all: reduction("all"),
    np.any: reduction("any"), np.cumsum: reduction("cumulative_sum"),
    np.cumprod: reduction("cumulative_prod"), np.size: lambda a, axis=None: (
        a.size if axis is None else a.shape[axis]),
    np.zeros_like: _like("zeros"), np.ones_like: _like("ones"), np.full_like: _like("full"),
    np.empty_like: _like("zeros"), np.transpose: _transpose, np.reshape: _reshape,
    np.flip: _flip, np.swapaxes: _swapaxes, np.concatenate: _joining("concat"), np.stack: _joining("stack"),
    np.broadcast_to: _namespace_call("broadcast_to"),
    np.expand_dims: _namespace_call("expand_dims"), np.squeeze: _namespace_call("squeeze"),
    np.moveaxis: _namespace_call("moveaxis"), np.clip: _namespace_call("clip"),
    np.take: _take, np.sort: _sorting("sort"), np.argsort: _sorting("argsort"), np.argmax: _namespace_call("argmax"),
    np.argmin: _namespace_call("argmin"), np.result_type: _result_type, np.ndim: _ndim,
    np.shape: _shape, np.copysign: _namespace_call("copysign", arrays=2),
    np.take_along_axis: _namespace_call("take_along_axis", arrays=2),
}


class _Calls:
    """How deep the current call is in public transforms, and whether any argument
    was ever wrapped (until then, ``boundary`` costs one counter)."""

    __slots__ = ("depth", "wrapped")

    def __init__(self):
        self.depth = 0
        self.wrapped = False


calls = _Calls()


def wrap_leaf(x: Any) -> Any:
    """``x`` as the impls compute with it: an array of a non-dispatching library
    wrapped in a NamespaceArray; anything else as it is."""
    if type(x) is np.ndarray:
        return x
    backend = backend_of(x)
    if backend is None or backend.dispatches:
        return x
    calls.wrapped = True
    return NamespaceArray(x, bridged_view(backend), backend.namespace(x))


def unwrap(x: Any) -> Any:
    """A result as the user's library gives it (a NamespaceArray's raw array)."""
    return x.raw if type(x) is NamespaceArray else x


def unwrap_tree(out: Any, like: "NamespaceArray | None" = None) -> Any:
    """``out`` with every NamespaceArray in its tuples, lists and dicts unwrapped;
    a returned function (vjp's) unwraps its own results when called. With ``like``
    (the call's arguments were of its library), numpy arrays among the results
    (computed from constants only, such as a gradient that does not depend on the
    arguments' values) become arrays of that library too."""
    t = type(out)
    if t is NamespaceArray:
        return out.raw
    if like is not None and (t is np.ndarray or isinstance(out, np.generic)):
        return like._operand(out)
    if t is tuple or t is list:
        return t(unwrap_tree(o, like) for o in out)
    if t is dict:
        return {k: unwrap_tree(v, like) for k, v in out.items()}
    return out


def holds_foreign(x: Any) -> bool:
    """Whether the pytree ``x`` (tuples, lists, dicts) holds an array of a library
    other than numpy, not yet wrapped (numpy arrays and scalars are answered first)."""
    t = type(x)
    if t is np.ndarray or t is float or t is int or t is NamespaceArray:
        return False
    if t is tuple or t is list:
        for e in x:
            te = type(e)
            if not (te is np.ndarray or te is float or te is int) and holds_foreign(e):
                return True
        return False
    if t is dict:
        for e in x.values():
            if holds_foreign(e):
                return True
        return False
    return backend_of(x) is not None


def _foreign_leaves(x: Any, out: list) -> list:
    t = type(x)
    if t is tuple or t is list:
        for e in x:
            _foreign_leaves(e, out)
    elif t is dict:
        for e in x.values():
            _foreign_leaves(e, out)
    elif t is not np.ndarray and backend_of(x) is not None:
        out.append(x)
    return out


def entering(args: tuple, kwargs: dict, where: str) -> tuple[tuple, dict]:
    """The arguments of a public call that holds foreign arrays: one library only
    (two are refused by name), its arrays wrapped when numpy does not dispatch to it."""
    leaves = _foreign_leaves(kwargs, _foreign_leaves(args, []))
    backend = common_backend(leaves, where)
    if backend is None or backend.dispatches:
        return args, kwargs
    return wrap_tree(args), wrap_tree(kwargs)


def wrap_tree(x: Any) -> Any:
    """``x`` with every array of a non-dispatching library wrapped (wrap_leaf)."""
    t = type(x)
    if t is tuple or t is list:
        return t(wrap_tree(e) for e in x)
    if t is dict:
        return {k: wrap_tree(v) for k, v in x.items()}
    return wrap_leaf(x)


def call_at_boundary(fn, args: tuple, kwargs: dict, where: str) -> Any:
    """``fn(*args, **kwargs)`` as a public call: arguments of a library numpy does not
    dispatch to are wrapped on the way in (so the user's function computes on
    NamespaceArrays, which meet tracers), and results are unwrapped when this is
    the outermost such call (inner ones compute on them)."""
    like = None
    if holds_foreign(args) or (kwargs and holds_foreign(kwargs)):
        args, kwargs = entering(args, kwargs, where)
        like = _first((args, tuple(kwargs.values())))
    calls.depth += 1
    try:
        out = fn(*args, **kwargs)
    finally:
        calls.depth -= 1
    return unwrap_tree(out, like) if calls.wrapped and not calls.depth else out


def boundary(fn):
    """``fn``, a public transform or a function one returns, called at the boundary
    (``call_at_boundary``)."""
    where = getattr(fn, "__name__", "funcdiff")

    def at_boundary(*args, **kwargs):
        return call_at_boundary(fn, args, kwargs, where)
    return functools.update_wrapper(at_boundary, fn, updated=())


_views: dict[str, Backend] = {}


def bridged_view(backend: Backend) -> Backend:
    """The Backend of ``backend``'s wrapped arrays: same name, numpy-dispatching."""
    view = _views.get(backend.name)
    if view is None:
        view = _views[backend.name] = Backend(backend.name, dispatches=True)
    return view


register_bridge(NamespaceArray)
