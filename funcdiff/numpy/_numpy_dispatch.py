"""numpy's override protocols for tracers: __array_ufunc__, __array_function__, dispatch tables.

- ``__array_ufunc__``: ``np.sin(x)``, ``W @ x``, ``np.add.reduce(x)`` with a
  tracer anywhere in the arguments run the funcdiff.numpy function of that name
  (``reduce``/``accumulate``/``outer`` map to ``sum``, ``cumsum``, ... ).
- ``__array_function__``: ``np.sum(x, axis=0)``, ``np.where(...)``,
  ``np.concatenate([...])`` likewise.

The dispatch tables map each numpy function and ufunc, and the functions of
``numpy.linalg`` and ``numpy.fft``, to the funcdiff.numpy function of the same
name. They are built from the funcdiff.numpy namespace itself, once, on first
use, into the one ``_tables`` dict every reader shares. numpy functions that
only ask about shapes and dtypes are answered from the abstract value; those
that write into an argument raise, pointing to the functional spelling.
Anything numpy offers that funcdiff does not implement raises
``UnsupportedNumpyError`` naming the numpy function.
``_interop`` installs the two protocols on ``Tracer`` and lists the tables'
names in ``docs/numpy-support.md``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

import funcdiff.numpy as fnp
from funcdiff.core import Tracer
from funcdiff.errors import UnsupportedNumpyError
from funcdiff.numpy import _shape
from funcdiff.numpy._polynomial_guard import check_caller
from funcdiff.numpy._tracer_conversion import unsupported


def _fnp():
    return fnp  # the namespace this module serves (being imported when this module is)


# ---------------------------------------------------------------------------
# Names: numpy objects and the funcdiff.numpy functions that implement them

# numpy ufuncs whose reduce/accumulate methods funcdiff implements, and by what.
UFUNC_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                 "logical_and": "all", "logical_or": "any"}
UFUNC_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "maximum": "maximum_accumulate",
                     "minimum": "minimum_accumulate"}
_tables: dict[str, Any] = {}


def numpy_objects() -> list[tuple[Any, list[str]]]:
    """Every public numpy function and ufunc with all names numpy exports it under
    (its own ``__name__`` first), in a fixed order. Only the names numpy declares in
    ``numpy.__all__``: other libraries add attributes to numpy (numexpr sets
    ``numpy.expm1x``), and what they add must not change the tables or the docs."""
    found: dict[int, tuple[Any, list[str]]] = {}
    for name in sorted(np.__all__):
        obj = getattr(np, name, None)
        if name.startswith("_") or isinstance(obj, type) or not callable(obj):
            continue
        found.setdefault(id(obj), (obj, []))[1].append(name)
    for obj, names in found.values():
        canonical = getattr(obj, "__name__", None)
        names.sort(key=lambda n: (n != canonical, n))
    return sorted(found.values(), key=lambda entry: entry[1][0])


def dtype_or_value(x: Any) -> Any:
    return x.aval.dtype if isinstance(x, Tracer) else x


# numpy functions that only ask about dtypes and have no funcdiff.numpy function of
# their own: answered from the abstract value, so they work on every tracer, abstract
# ones included. (shape, ndim, size, iscomplexobj and isrealobj are funcdiff.numpy
# functions, in _array_api, and dispatch there.)
QUERIES = {
    "result_type": lambda *args: np.result_type(*[dtype_or_value(a) for a in args]),
    "can_cast": lambda from_, to, casting="safe": np.can_cast(dtype_or_value(from_), to, casting),
    # a new tracer, as numpy's copy is a new array: a write into it leaves a alone
    "copy": lambda a, order="K", subok=False: a.fresh_copy() if isinstance(a, Tracer) else a,
}


# numpy functions that write into an argument: funcdiff.numpy has functional versions
# that return a new array, so dispatching numpy's call to them would silently drop the
# update. They raise instead, pointing to the functional spelling.
IN_PLACE = {"put_along_axis": "fnp.put_along_axis(arr, indices, values, axis), which "
                               "returns the updated array"}


# numpy functions that never dispatch on their arguments (they take shapes or lengths,
# convert with __array__, or, as isscalar, only inspect the type), so funcdiff.numpy's
# versions are not reachable from numpy calls.
NOT_DISPATCHED = frozenset({
    "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "zeros", "ones",
    "empty", "full", "arange", "eye", "identity", "tri", "frombuffer", "fromiter",
    "fromfunction", "fromstring", "fromfile", "fft.fftfreq", "fft.rfftfreq", "hamming",
    "hanning", "bartlett", "blackman", "kaiser", "isscalar"})

# numpy submodules whose functions dispatch to the funcdiff.numpy submodule of the same
# name: numpy.linalg.X(tracer) runs funcdiff.numpy.linalg.X for every X the latter exports.
# (Of numpy.polynomial.polynomial only polyval2d and polygrid2d dispatch at all.)
SUBMODULES = ("linalg", "fft", "polynomial.polynomial", "lib.stride_tricks")


def build_tables() -> dict[str, Any]:
    """Dispatch tables keyed by numpy object: ufuncs and array functions, plus the
    names numpy exports each under. Built once, on first use."""
    if _tables:
        return _tables
    fnp = _fnp()
    ufuncs, functions, names_of = {}, {}, {}
    for obj, names in numpy_objects():
        if names[0] in IN_PLACE or names[0] in NOT_DISPATCHED:
            continue
        impl = next((getattr(fnp, n) for n in names if is_implementation(getattr(fnp, n, None))),
                    QUERIES.get(names[0]))
        if impl is None:
            continue
        names_of[id(obj)] = names
        (ufuncs if isinstance(obj, np.ufunc) else functions)[obj] = impl
    for obj, name, impl in submodule_functions(fnp):
        if obj in functions:  # numpy exports it at the top level too
            names_of[id(obj)].append(name)
        else:
            functions[obj], names_of[id(obj)] = impl, [name]
    _tables.update(ufuncs=ufuncs, functions=functions, names_of=names_of)
    return _tables


def submodule_functions(fnp: Any) -> list[tuple[Any, str, Callable]]:
    """(numpy function, ``"linalg.det"``-style name, funcdiff implementation) for each
    function a funcdiff.numpy submodule exports that numpy's submodule also has."""
    found = []
    for module in SUBMODULES:
        np_module, fd_module = np, fnp
        for part in module.split("."):
            np_module, fd_module = getattr(np_module, part), getattr(fd_module, part)
        for name in fd_module.__all__:
            obj, impl = getattr(np_module, name, None), getattr(fd_module, name)
            qualified = f"{module}.{name}"
            if (qualified in NOT_DISPATCHED or not is_implementation(impl)
                    or not hasattr(obj, "_implementation")):  # numpy never dispatches it
                continue
            found.append((obj, qualified, impl))
    return found


def is_implementation(obj: Any) -> bool:
    """A funcdiff function (numpy objects funcdiff.numpy re-exports, such as its dtype
    helpers, are not: dispatching to them would call numpy on the tracer again)."""
    return (callable(obj) and not isinstance(obj, (type, np.ufunc))
            and (getattr(obj, "__module__", None) or "").startswith("funcdiff"))


def numpy_name(obj: Any) -> str:
    """``numpy.linalg.norm``-style name of a numpy function or ufunc, for errors."""
    if isinstance(obj, np.ufunc):
        return f"numpy.{obj.__name__}"
    module = getattr(obj, "__module__", None) or "numpy"
    if module.startswith("numpy.") and getattr(np, obj.__name__, None) is obj:
        module = "numpy"
    return f"{module}.{getattr(obj, '__name__', repr(obj))}"


# ---------------------------------------------------------------------------
# numpy's override protocols


def array_ufunc(self: Tracer, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    check_caller(sys._getframe(1))
    if method == "__call__" and not kwargs and _tables:  # the common case: a plain call
        fn = _tables["ufuncs"].get(ufunc)
        if fn is not None:
            return fn(*inputs)
    name = f"numpy.{ufunc.__name__}"
    if getattr(np, ufunc.__name__, None) is not ufunc:
        raise foreign_ufunc(ufunc)
    out = kwargs.pop("out", None)
    if any(o is not None for o in (out if isinstance(out, tuple) else (out,))):
        raise UnsupportedNumpyError(
            f"{name} was called with out= on a funcdiff tracer; tracers are immutable, so "
            "funcdiff cannot write into an output array. Call it without out= and use the "
            "returned value (funcdiff.numpy functions take no out= either).")
    tables = build_tables()
    if method == "__call__":
        fn = tables["ufuncs"].get(ufunc)
        if fn is None:
            raise unsupported(name)
        return fn(*inputs, **kwargs)
    if method in ("reduce", "accumulate"):
        mapping = UFUNC_REDUCE if method == "reduce" else UFUNC_ACCUMULATE
        target = mapping.get(ufunc.__name__)
        fn = getattr(_fnp(), target, None) if target else None
        if fn is None:
            raise unsupported(f"{name}.{method}")
        (x,) = inputs
        kwargs.setdefault("axis", 0)  # numpy's ufunc methods default to axis 0
        if "dtype" in kwargs and kwargs["dtype"] is None:
            del kwargs["dtype"]
        return fn(x, **kwargs)
    if method == "outer":
        fn = tables["ufuncs"].get(ufunc)
        if fn is None:
            raise unsupported(f"{name}.outer")
        a, b = (_shape._arr(v, f"{ufunc.__name__}.outer") for v in inputs)
        a = _shape.reshape(a, _shape.shape_of(a) + (1,) * len(_shape.shape_of(b)))
        return fn(a, b, **kwargs)
    if method == "at":
        raise unsupported(f"{name}.at", "It updates its first argument in place; tracers "
                           "are immutable: use the functional x.at[idx].add(v) / .multiply(v) / "
                           ".min(v) / .max(v) / .set(v) (fnp.at(x)[idx] for numpy arrays).")
    raise unsupported(f"{name}.{method}")


def foreign_ufunc(ufunc: np.ufunc) -> UnsupportedNumpyError:
    """The error for a ufunc that is not numpy's own (scipy.special's, say), named as
    its library names it, pointing to funcdiff's counterpart where there is one."""
    name = ufunc.__name__
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) is ufunc:
        ours = sys.modules.get("funcdiff.scipy.special")
        fix = (f"Use funcdiff.scipy.special.{name}, which differentiates."
               if ours is not None and hasattr(ours, name) else
               "funcdiff.scipy.special has no counterpart yet; write it with funcdiff.numpy, "
               "or give it a derivative with fd.custom_jvp.")
        return UnsupportedNumpyError(
            f"scipy.special.{name} was called on a funcdiff tracer: it is compiled code that "
            f"funcdiff cannot trace, and converting the tracer would lose the derivative. {fix}")
    return UnsupportedNumpyError(
        f"the ufunc {name} (from {type(ufunc).__module__ or 'another library'}, not numpy) was "
        "called on a funcdiff tracer, which funcdiff cannot trace. Write it with "
        "funcdiff.numpy, or give it a derivative with fd.custom_jvp.")


def array_function(self: Tracer, func: Callable, types: tuple, args: tuple,
                    kwargs: dict) -> Any:
    if not all(issubclass(t, (Tracer, np.ndarray)) for t in types):
        return NotImplemented
    check_caller(sys._getframe(1))
    fn = build_tables()["functions"].get(func)
    if fn is None:
        name = getattr(func, "__name__", "")
        hint = (f"It modifies its argument in place, which tracers do not allow; use "
                f"{IN_PLACE[name]}." if name in IN_PLACE else "")
        raise unsupported(numpy_name(func), hint)
    return fn(*args, **kwargs)
