"""Tracers as numpy arrays: operators, array methods, and numpy's dispatch protocols.

``install_tracer_methods()`` gives ``funcdiff.core.Tracer`` the arithmetic and
comparison operators, indexing (``x[idx]``, ``x.at[idx]``) and the common
ndarray methods, each forwarding to the ``funcdiff.numpy`` function of the
same meaning, so promotion is numpy 2's (``float32 tracer * 2.0`` stays
float32). It also installs numpy's override protocols:

- ``__array_ufunc__``: ``np.sin(x)``, ``W @ x``, ``np.add.reduce(x)`` with a
  tracer anywhere in the arguments run the funcdiff.numpy function of that name
  (``reduce``/``accumulate``/``outer`` map to ``sum``, ``cumsum``, ... ).
- ``__array_function__``: ``np.sum(x, axis=0)``, ``np.where(...)``,
  ``np.concatenate([...])`` likewise.
- ``__array__`` refuses: converting a tracer to a numpy array would drop it
  from the trace (abstract under jit) or silently cut its derivative.

Anything numpy offers that funcdiff does not implement raises
``UnsupportedNumpyError`` naming the numpy function. The dispatch tables are
built from the funcdiff.numpy namespace itself, and ``supported_numpy_names``
lists them; ``write_numpy_support_doc`` renders that list as
``docs/numpy-support.md``.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from funcdiff import dtypes
from funcdiff.core import Tracer
from funcdiff.errors import (ConcretizationError, TracerArrayConversionError,
                             UnsupportedNumpyError)

_POINTER = ("Use the funcdiff.numpy function of the same meaning (import funcdiff.numpy "
            "as fnp), or see docs/numpy-support.md for everything funcdiff implements.")


def _fnp():
    import funcdiff.numpy as fnp  # the namespace this module serves; imported at call time
    return fnp


# ---------------------------------------------------------------------------
# Names: numpy objects and the funcdiff.numpy functions that implement them

# numpy ufuncs whose reduce/accumulate methods funcdiff implements, and by what.
_UFUNC_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                 "logical_and": "all", "logical_or": "any"}
_UFUNC_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "maximum": "maximum_accumulate",
                     "minimum": "minimum_accumulate"}
_tables: dict[str, Any] = {}


def _numpy_objects() -> list[tuple[Any, list[str]]]:
    """Every public numpy function and ufunc with all names numpy exports it under
    (its own ``__name__`` first), in a fixed order."""
    found: dict[int, tuple[Any, list[str]]] = {}
    for name in sorted(dir(np)):
        obj = getattr(np, name, None)
        if name.startswith("_") or isinstance(obj, type) or not callable(obj):
            continue
        found.setdefault(id(obj), (obj, []))[1].append(name)
    for obj, names in found.values():
        canonical = getattr(obj, "__name__", None)
        names.sort(key=lambda n: (n != canonical, n))
    return sorted(found.values(), key=lambda entry: entry[1][0])


def _dtype_or_value(x: Any) -> Any:
    return x.aval.dtype if isinstance(x, Tracer) else x


# numpy functions that only ask about shapes and dtypes: answered from the abstract
# value, so they work on every tracer, abstract ones included.
_QUERIES = {
    "shape": lambda a: tuple(a.shape) if isinstance(a, Tracer) else np.shape(a),
    "ndim": lambda a: a.ndim if isinstance(a, Tracer) else np.ndim(a),
    "size": lambda a, axis=None: (a.size if axis is None else a.shape[axis])
    if isinstance(a, Tracer) else np.size(a, axis),
    "result_type": lambda *args: np.result_type(*[_dtype_or_value(a) for a in args]),
    "can_cast": lambda from_, to, casting="safe": np.can_cast(_dtype_or_value(from_), to, casting),
    "iscomplexobj": lambda x: x.dtype.kind == "c" if isinstance(x, Tracer) else np.iscomplexobj(x),
    "isrealobj": lambda x: x.dtype.kind != "c" if isinstance(x, Tracer) else np.isrealobj(x),
    "copy": lambda a, order="K", subok=False: a,  # funcdiff values are immutable
}


# numpy functions that write into an argument: funcdiff.numpy has functional versions
# that return a new array, so dispatching numpy's call to them would silently drop the
# update. They raise instead, pointing to the functional spelling.
_IN_PLACE = {"put_along_axis": "fnp.put_along_axis(arr, indices, values, axis), which "
                               "returns the updated array"}


# numpy functions that never dispatch on their arguments (they take shapes or convert
# with __array__), so funcdiff.numpy's versions are not reachable from numpy calls.
_NOT_DISPATCHED = frozenset({
    "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "zeros", "ones",
    "empty", "full", "arange", "eye", "identity", "tri", "frombuffer", "fromiter",
    "fromfunction", "fromstring", "fromfile", "fft.fftfreq", "fft.rfftfreq"})

# numpy submodules whose functions dispatch to the funcdiff.numpy submodule of the same
# name: numpy.linalg.X(tracer) runs funcdiff.numpy.linalg.X for every X the latter exports.
_SUBMODULES = ("linalg", "fft")


def _build_tables() -> dict[str, Any]:
    """Dispatch tables keyed by numpy object: ufuncs and array functions, plus the
    names numpy exports each under. Built once, on first use."""
    if _tables:
        return _tables
    fnp = _fnp()
    ufuncs, functions, names_of = {}, {}, {}
    for obj, names in _numpy_objects():
        if names[0] in _IN_PLACE or names[0] in _NOT_DISPATCHED:
            continue
        impl = next((getattr(fnp, n) for n in names if _is_implementation(getattr(fnp, n, None))),
                    _QUERIES.get(names[0]))
        if impl is None:
            continue
        names_of[id(obj)] = names
        (ufuncs if isinstance(obj, np.ufunc) else functions)[obj] = impl
    for obj, name, impl in _submodule_functions(fnp):
        if obj in functions:  # numpy exports it at the top level too
            names_of[id(obj)].append(name)
        else:
            functions[obj], names_of[id(obj)] = impl, [name]
    _tables.update(ufuncs=ufuncs, functions=functions, names_of=names_of)
    return _tables


def _submodule_functions(fnp: Any) -> list[tuple[Any, str, Callable]]:
    """(numpy function, ``"linalg.det"``-style name, funcdiff implementation) for each
    function a funcdiff.numpy submodule exports that numpy's submodule also has."""
    found = []
    for module in _SUBMODULES:
        np_module, fd_module = getattr(np, module), getattr(fnp, module)
        for name in fd_module.__all__:
            obj, impl = getattr(np_module, name, None), getattr(fd_module, name)
            qualified = f"{module}.{name}"
            if (qualified in _NOT_DISPATCHED or not _is_implementation(impl)
                    or obj is None or isinstance(obj, type) or not callable(obj)):
                continue
            found.append((obj, qualified, impl))
    return found


def _is_implementation(obj: Any) -> bool:
    """A funcdiff function (numpy objects funcdiff.numpy re-exports, such as its dtype
    helpers, are not: dispatching to them would call numpy on the tracer again)."""
    return (callable(obj) and not isinstance(obj, (type, np.ufunc))
            and (getattr(obj, "__module__", None) or "").startswith("funcdiff"))


def _numpy_name(obj: Any) -> str:
    """``numpy.linalg.norm``-style name of a numpy function or ufunc, for errors."""
    if isinstance(obj, np.ufunc):
        return f"numpy.{obj.__name__}"
    module = getattr(obj, "__module__", None) or "numpy"
    if module.startswith("numpy.") and getattr(np, obj.__name__, None) is obj:
        module = "numpy"
    return f"{module}.{getattr(obj, '__name__', repr(obj))}"


def _unsupported(what: str, hint: str = "") -> UnsupportedNumpyError:
    return UnsupportedNumpyError(
        f"{what} was called on a funcdiff tracer, but funcdiff has no implementation of it, "
        f"and converting the tracer to a numpy array would lose the trace (and the "
        f"derivative). {hint + ' ' if hint else ''}{_POINTER}")


# ---------------------------------------------------------------------------
# numpy's override protocols


def _array_ufunc(self: Tracer, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    if method == "__call__" and not kwargs and _tables:  # the common case: a plain call
        fn = _tables["ufuncs"].get(ufunc)
        if fn is not None:
            return fn(*inputs)
    name = f"numpy.{ufunc.__name__}"
    out = kwargs.pop("out", None)
    if any(o is not None for o in (out if isinstance(out, tuple) else (out,))):
        raise UnsupportedNumpyError(
            f"{name} was called with out= on a funcdiff tracer; tracers are immutable, so "
            "funcdiff cannot write into an output array. Call it without out= and use the "
            "returned value (funcdiff.numpy functions take no out= either).")
    tables = _build_tables()
    if method == "__call__":
        fn = tables["ufuncs"].get(ufunc)
        if fn is None:
            raise _unsupported(name)
        return fn(*inputs, **kwargs)
    if method in ("reduce", "accumulate"):
        mapping = _UFUNC_REDUCE if method == "reduce" else _UFUNC_ACCUMULATE
        target = mapping.get(ufunc.__name__)
        fn = getattr(_fnp(), target, None) if target else None
        if fn is None:
            raise _unsupported(f"{name}.{method}")
        (x,) = inputs
        kwargs.setdefault("axis", 0)  # numpy's ufunc methods default to axis 0
        if "dtype" in kwargs and kwargs["dtype"] is None:
            del kwargs["dtype"]
        return fn(x, **kwargs)
    if method == "outer":
        fn = tables["ufuncs"].get(ufunc)
        if fn is None:
            raise _unsupported(f"{name}.outer")
        from funcdiff.numpy import _shape
        a, b = (_shape._arr(v, f"{ufunc.__name__}.outer") for v in inputs)
        a = _shape.reshape(a, _shape._shape(a) + (1,) * len(_shape._shape(b)))
        return fn(a, b, **kwargs)
    if method == "at":
        raise _unsupported(f"{name}.at", "It updates its first argument in place; tracers "
                           "are immutable: use the functional x.at[idx].add(v) / .multiply(v) / "
                           ".min(v) / .max(v) / .set(v) (fnp.at(x)[idx] for numpy arrays).")
    raise _unsupported(f"{name}.{method}")


def _array_function(self: Tracer, func: Callable, types: tuple, args: tuple,
                    kwargs: dict) -> Any:
    if not all(issubclass(t, (Tracer, np.ndarray)) for t in types):
        return NotImplemented
    fn = _build_tables()["functions"].get(func)
    if fn is None:
        name = getattr(func, "__name__", "")
        hint = (f"It modifies its argument in place, which tracers do not allow; use "
                f"{_IN_PLACE[name]}." if name in _IN_PLACE else "")
        raise _unsupported(_numpy_name(func), hint)
    return fn(*args, **kwargs)


def _array(self: Tracer, dtype: Any = None, copy: Any = None) -> np.ndarray:
    try:
        self.to_concrete("numpy.asarray")
    except ConcretizationError:
        raise TracerArrayConversionError(
            f"numpy tried to convert the traced value {self.aval.str_short()} into a "
            "numpy.ndarray (numpy.asarray, numpy.array, or a numpy routine that converts its "
            "inputs). This value is abstract: under jit or make_jaxpr (or per-member under "
            "vmap) it has a shape and a dtype but no numbers yet. Compute with funcdiff.numpy "
            "(fnp.array / fnp.stack build arrays from traced values), or make the argument "
            "static (jit's static_argnums).") from None
    raise TracerArrayConversionError(
        f"numpy tried to convert the traced value {self.aval.str_short()} into a "
        "numpy.ndarray (numpy.asarray, numpy.array, or a numpy routine that converts its "
        "inputs) inside a funcdiff transform. Its value is known here, but the conversion "
        "would silently cut the derivative flowing through it. Compute with funcdiff.numpy "
        "(fnp.array / fnp.stack build arrays from traced values); if the value is meant to be "
        "a constant, say so with fd.stop_gradient(x) and keep computing on it with "
        "funcdiff.numpy.")


# ---------------------------------------------------------------------------
# Operators and methods

# operator suffix -> funcdiff.numpy function (reflected variants swap the operands)
_BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                "gt": "greater", "ge": "greater_equal"}
_UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}
# function names tried when the first is missing from funcdiff.numpy
_FALLBACKS = {"true_divide": ("divide",), "remainder": ("mod",), "power": ("pow",),
              "absolute": ("abs",), "invert": ("logical_not",), "bitwise_and": ("logical_and",),
              "bitwise_or": ("logical_or",), "bitwise_xor": ("logical_xor",),
              "left_shift": ("bitwise_left_shift",), "right_shift": ("bitwise_right_shift",),
              "round": ("around",)}
# Array methods: name -> funcdiff.numpy function taking the array first, same signature.
_METHODS = {name: name for name in (
    "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all",
    "dot", "swapaxes", "clip", "cumsum", "cumprod", "round", "sort", "argsort", "repeat",
    "take", "trace", "diagonal", "squeeze", "ravel")}
_METHODS["flatten"] = "ravel"

_resolved: dict[str, Callable] = {}


def _resolve(name: str, what: str) -> Callable:
    fn = _resolved.get(name)
    if fn is None:
        fnp = _fnp()
        for candidate in (name,) + _FALLBACKS.get(name, ()):
            fn = getattr(fnp, candidate, None)
            if fn is not None:
                break
        else:
            raise _unsupported(what, f"(funcdiff.numpy.{name} does not exist.)")
        _resolved[name] = fn
    return fn


_LOGICAL_OF = {"bitwise_and": "logical_and", "bitwise_or": "logical_or",
               "bitwise_xor": "logical_xor", "invert": "logical_not"}


def _is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_


def _bitwise(name: str, what: str) -> Callable:
    """``&``, ``|``, ``^``, ``~``: the bitwise function if funcdiff.numpy has it, else the
    logical one for booleans (the same thing there) and an error for integers."""
    def op(*args):
        fn = getattr(_fnp(), name, None)
        if fn is not None:
            return fn(*args)
        if all(_is_bool(a) for a in args):
            return _resolve(_LOGICAL_OF[name], what)(*args)
        raise _unsupported(what, f"(funcdiff.numpy.{name} does not exist; on booleans the "
                                 f"operator works as {_LOGICAL_OF[name]}.)")
    return op


_FLOAT_SCALAR_OPS = {"add": "add", "subtract": "sub", "multiply": "mul"}


def _ew():
    from funcdiff.primitives import elementwise  # the primitive layer, below this one
    return elementwise


def _binary(name: str, dunder: str, reflected: bool) -> Callable:
    what = f"the operator {dunder}"
    if name in _LOGICAL_OF:
        fn = _bitwise(name, what)
        method = (lambda self, other: fn(other, self)) if reflected else (
            lambda self, other: fn(self, other))
        method.__name__ = dunder
        return method
    fast = _FLOAT_SCALAR_OPS.get(name)
    if fast is not None:
        # A float array with a Python float, the commonest operator call: numpy 2
        # keeps the array's dtype, so the primitive applies directly.
        op = getattr(_ew(), fast)
        if reflected:
            def method(self, other):
                if type(other) is float:
                    dtype = self.dtype
                    if dtype.kind == "f":
                        return op(dtype.type(other), self)
                return _resolve(name, what)(other, self)
        else:
            def method(self, other):
                if type(other) is float:
                    dtype = self.dtype
                    if dtype.kind == "f":
                        return op(self, dtype.type(other))
                return _resolve(name, what)(self, other)
    elif reflected:
        def method(self, other):
            return _resolve(name, what)(other, self)
    else:
        def method(self, other):
            return _resolve(name, what)(self, other)
    method.__name__ = dunder
    method.__doc__ = f"``{dunder}`` via funcdiff.numpy.{name}."
    return method


def _unary(name: str, dunder: str) -> Callable:
    bitwise = _bitwise(name, f"the operator {dunder}") if name in _LOGICAL_OF else None

    def method(self):
        if bitwise is not None:
            return bitwise(self)
        return _resolve(name, dunder)(self)
    method.__name__ = dunder
    return method


def _array_method(method_name: str, fn_name: str) -> Callable:
    def method(self, *args, **kwargs):
        return _resolve(fn_name, f"the array method .{method_name}()")(self, *args, **kwargs)
    method.__name__ = method_name
    method.__doc__ = f"``x.{method_name}(...)`` is ``funcdiff.numpy.{fn_name}(x, ...)``."
    return method


def _reshape_method(self, *shape, order="C", **kwargs):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    from funcdiff.numpy import _shape
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not shape and "shape" in kwargs:
        shape = kwargs.pop("shape")
    return _shape.reshape(self, shape, order=order, **kwargs)


def _transpose_method(self, *axes):
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    from funcdiff.numpy import _shape
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _shape.transpose(self, axes if axes else None)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """``x.astype(dtype)``: a cast (a no-op when the dtype already matches)."""
    from funcdiff.numpy import _util
    return _util.cast(self, dtypes.check_dtype(dtype, "the dtype of astype", allow_complex=True))


def _identity(self, *args, **kwargs):
    return self


def _real(self):
    return _fnp().real(self)


def _imag(self):
    return _fnp().imag(self)


def _conj(self):
    return _fnp().conjugate(self)


def _nonzero(self):
    """Indices of the non-zero elements; needs a concrete value (it decides the shape)."""
    try:
        value = self.to_concrete("nonzero")
    except ConcretizationError:
        raise ConcretizationError(
            f"x.nonzero() needs a concrete value because its result's shape depends on the "
            f"values, but x is the abstract {self.aval.str_short()} (under jit/make_jaxpr). Use "
            "fnp.where(mask, x, fill) to keep shapes static.") from None
    return np.nonzero(np.asarray(value))


def _getitem(self, idx):
    from funcdiff.numpy._indexing import getitem
    return getitem(self, idx)


def _at(self):
    """Functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``, ``.min(v)``,
    ``.max(v)``, ``.get()``."""
    from funcdiff.numpy._indexing import _IndexUpdateHelper
    return _IndexUpdateHelper(self)


def _swap_last_two(self):
    from funcdiff.numpy import _shape
    return _shape.swapaxes(self, -1, -2)


def _tracer_methods() -> dict[str, tuple[Any, str | None]]:
    """Every attribute ``install_tracer_methods`` puts on Tracer, by name, with the
    funcdiff.numpy function it forwards to (None when it needs none)."""
    methods: dict[str, tuple[Any, str | None]] = {}
    for op, name in _BINARY_OPERATORS.items():
        methods[f"__{op}__"] = (_binary(name, f"__{op}__", reflected=False), name)
        methods[f"__r{op}__"] = (_binary(name, f"__r{op}__", reflected=True), name)
    for op, name in _COMPARISONS.items():
        methods[f"__{op}__"] = (_binary(name, f"__{op}__", reflected=False), name)
    for op, name in _UNARY_OPERATORS.items():
        methods[f"__{op}__"] = (_unary(name, f"__{op}__"), name)
    for method_name, fn_name in _METHODS.items():
        methods[method_name] = (_array_method(method_name, fn_name), fn_name)
    for name, value in dict(
            __getitem__=_getitem, at=property(_at), reshape=_reshape_method,
            transpose=_transpose_method, T=property(lambda self: _transpose_method(self)),
            mT=property(_swap_last_two), astype=_astype, copy=_identity, conj=_conj,
            conjugate=_conj, real=property(_real), imag=property(_imag),
            nonzero=_nonzero, __array__=_array, __array_ufunc__=_array_ufunc,
            __array_function__=_array_function).items():
        methods[name] = (value, None)
    return methods


def install_tracer_methods() -> None:
    """Attach operators, array methods and numpy's dispatch protocols to ``Tracer``.

    Called once by ``funcdiff.numpy`` at import; calling it again is harmless.
    """
    for name, (value, _) in _tracer_methods().items():
        setattr(Tracer, name, value)


# ---------------------------------------------------------------------------
# The list of supported names and its document


def supported_numpy_names() -> list[str]:
    """Every numpy name funcdiff implements: ``numpy.X`` functions and ufuncs (by each
    name numpy exports them under), ``numpy.linalg.X`` and ``numpy.fft.X``, and
    ``numpy.<ufunc>.reduce/accumulate/outer``.

    >>> "numpy.concatenate" in supported_numpy_names()
    True
    >>> "numpy.linalg.det" in supported_numpy_names()
    True
    """
    tables = _build_tables()
    names = set()
    for obj in list(tables["ufuncs"]) + list(tables["functions"]):
        names.update(f"numpy.{n}" for n in tables["names_of"][id(obj)])
    fnp = _fnp()
    for ufunc in tables["ufuncs"]:
        aliases = tables["names_of"][id(ufunc)]
        for method, mapping in (("reduce", _UFUNC_REDUCE), ("accumulate", _UFUNC_ACCUMULATE)):
            target = mapping.get(ufunc.__name__)
            if target and hasattr(fnp, target):
                names.update(f"numpy.{n}.{method}" for n in aliases)
        if ufunc.nin == 2 and ufunc.signature is None:  # gufuncs (matmul) have no outer
            names.update(f"numpy.{n}.outer" for n in aliases)
    return sorted(names)


def supported_array_methods() -> list[str]:
    """The ndarray operators, methods and attributes funcdiff tracers have (those whose
    funcdiff.numpy function exists)."""
    fnp = _fnp()
    out = []
    for name, (_, target) in _tracer_methods().items():
        if name in ("__array__", "__array_ufunc__", "__array_function__"):
            continue
        if target is None or any(
                hasattr(fnp, c) for c in (target,) + _FALLBACKS.get(target, ())):
            out.append(name)
    return sorted(out)


def numpy_support_markdown() -> str:
    """The text of ``docs/numpy-support.md``, generated from the dispatch tables."""
    functions = supported_numpy_names()
    methods = supported_array_methods()
    lines = [
        "# numpy names supported by funcdiff",
        "",
        "<!-- Generated from the code by funcdiff.numpy._interop; do not edit by hand.",
        "     Regenerate with: python -c \"from funcdiff.numpy._interop import "
        "write_numpy_support_doc; write_numpy_support_doc()\" -->",
        "",
        "Inside a transform, calling any of these numpy functions on a traced value runs the",
        "funcdiff.numpy function of the same name (through `__array_ufunc__` /",
        "`__array_function__`), so unmodified `import numpy as np` code is traced and",
        "differentiated. Every other numpy function raises `UnsupportedNumpyError` naming it;",
        "`numpy.asarray(tracer)` raises `TracerArrayConversionError`. numpy's creation",
        "functions that take shapes (`numpy.zeros`, `numpy.arange`, ...) need no dispatch: they",
        "build constants; `funcdiff.numpy` has them too. Operators `&`, `|`, `^`, `~` on",
        "traced booleans are the logical functions.",
        "",
        f"## Functions and ufuncs ({len(functions)})",
        "",
    ]
    lines += [f"- `{n}`" for n in functions]
    lines += ["", f"## Array methods and operators on traced values ({len(methods)})", ""]
    lines += [f"- `ndarray.{n}`" for n in methods]
    return "\n".join(lines) + "\n"


def default_doc_path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "docs", "numpy-support.md")


def write_numpy_support_doc(path: str | None = None) -> str:
    """Write ``docs/numpy-support.md`` (or ``path``) from the code; returns the path."""
    path = path or default_doc_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(numpy_support_markdown())
    return path


__all__ = ["install_tracer_methods", "supported_numpy_names", "supported_array_methods",
           "numpy_support_markdown", "write_numpy_support_doc"]
