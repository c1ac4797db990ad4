"""Conformance of funcdiff.numpy.array_api with the Python array API standard (2024.12).

The reference is ``array_api_strict`` (the standard's strict implementation):
every case calls one function of the standard, or one array attribute,
operator or method, in both namespaces on the same inputs and compares the
result's structure, shape, dtype and values.

- The names come from array_api_strict's namespace and its ``linalg`` and
  ``fft`` extensions, restricted to version 2024.12 (its flags say which).
- Signature cases check that each name exists and accepts the standard's
  parameters: positional-only ones by position (any name), the others by name.
- Value cases run in three modes: ``eager`` (numpy arrays in, the namespace's
  functions called directly), ``jit`` (the inputs are arguments of ``fd.jit``,
  so the functions see abstract tracers) and ``traced`` (the inputs are primals
  of ``fd.jvp`` with zero tangents, so the functions see concrete tracers).
  Complex inputs enter the transforms as real and imaginary parts and are
  joined inside the traced function.
- A case whose result needs concrete values (data-dependent output shapes,
  Python conversions) is expected to raise ``ConcretizationError`` under jit:
  funcdiff's documented behaviour, counted apart from failures.
- Inputs the reference itself refuses (dtypes outside a function's domain,
  mixed kinds in promotion) are not cases: the standard leaves them open.

Run ``python tests/array_api_conformance.py`` for the summary and the failing
cases, ``--write`` to regenerate docs/array-api-conformance.md;
tests/test_array_api_conformance.py runs it and holds the known failures.
"""

from __future__ import annotations

import argparse
import inspect
import math
import operator
import os
import re
import sys
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
import array_api_strict as xps
from array_api_strict._array_object import Array as StrictArray

import funcdiff as fd
import funcdiff.numpy.array_api as fxp
from funcdiff import dtypes as fd_dtypes
from funcdiff.core import Tracer
from funcdiff.errors import ConcretizationError, TracerConversionError
from funcdiff.primitives.complex_ops import complex as make_complex

xps.set_array_api_strict_flags(api_version="2024.12")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC_PATH = os.path.join(ROOT, "docs", "array-api-conformance.md")
MODES = ("eager", "jit", "traced")

# array_api_strict's own names, not the standard's
_STRICT_ONLY = {"ArrayAPIStrictFlags", "Device", "__version__", "get_array_api_strict_flags",
                "set_array_api_strict_flags", "reset_array_api_strict_flags", "fft", "linalg"}

# Known failures: case names (``mode: case``) that fail today, each with why.
# The test fails when a listed case passes or an unlisted one fails.
_ALL_MODES = ("eager", "jit", "traced")
_KNOWN_GROUPS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("complex special values: reciprocal(0j) is inf+nanj (numpy: nan+nanj)", _ALL_MODES,
     ("reciprocal[complex128]",)),
    # The completed orthonormal columns are not unique, so they have no derivative.
    ("qr mode='complete' and svd full_matrices=True need m <= n or square matrices",
     _ALL_MODES, ("linalg.qr[complete]", "linalg.svd[default]")),
    # As in JAX: nextafter has no derivative, and jvp with zero tangents differentiates.
    ("nextafter has no derivative (as in JAX)", ("traced",),
     tuple(f"nextafter[{label}]" for label in (
         "float64", "float32", "float32,float64", "float64,0-d", "float64,empty",
         "float64,float-scalar", "float-scalar,float64", "float32,float-scalar",
         "float-scalar,float32", "float64,int-scalar", "int-scalar,float64"))),
]
KNOWN_FAILURES: dict[str, str] = {f"{mode}: {name}": reason
                                  for reason, modes, names in _KNOWN_GROUPS
                                  for mode in modes for name in names}


def _introduced(fn: Any) -> str:
    """The standard version array_api_strict's ``fn`` requires ('' when it says none):
    its version gate keeps the version in the wrapper's closure."""
    versions = [""]
    while fn is not None:
        for cell in getattr(fn, "__closure__", None) or ():
            value = cell.cell_contents
            if isinstance(value, str) and re.fullmatch(r"\d{4}\.\d{2}", value):
                versions.append(value)
        fn = getattr(fn, "__wrapped__", None)
    return max(versions)


def standard_names() -> list[str]:
    """Every name of the 2024.12 standard: the namespace, then linalg.*, then fft.*
    (array_api_strict also lists later names, such as isin, behind a version gate)."""
    names = [n for n in xps.__all__ if n not in _STRICT_ONLY]
    names += ["linalg." + n for n in xps.linalg.__all__]
    names += ["fft." + n for n in xps.fft.__all__]
    return [n for n in names if _introduced(_lookup(xps, n)) <= xps.__array_api_version__]


def _lookup(ns: Any, path: str) -> Any:
    for part in path.split("."):
        ns = getattr(ns, part)
    return ns


# ---------------------------------------------------------------------------
# Inputs: arrays are traced leaves; D("float32") names a dtype in either namespace


class D(NamedTuple):
    """A dtype by its standard name, resolved in the namespace under test."""
    name: str


def _resolve(xp: Any, value: Any) -> Any:
    """``value`` with dtype markers replaced by ``xp``'s dtypes (through containers)."""
    if isinstance(value, D):
        return getattr(xp, value.name)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_resolve(xp, v) for v in value)
    if isinstance(value, list):
        return [_resolve(xp, v) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(xp, v) for k, v in value.items()}
    return value


def _map_arrays(value: Any, fn: Callable[[np.ndarray], Any]) -> Any:
    """``value`` with every numpy array replaced by ``fn(array)`` (through lists, tuples, dicts)."""
    if isinstance(value, np.ndarray):
        return fn(value)
    if isinstance(value, tuple) and not isinstance(value, D):
        return tuple(_map_arrays(v, fn) for v in value)
    if isinstance(value, list):
        return [_map_arrays(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_arrays(v, fn) for k, v in value.items()}
    return value


def _arrays_in(value: Any) -> list:
    found: list = []
    _map_arrays(value, found.append)
    return found


# ---------------------------------------------------------------------------
# Results: both namespaces' results become one comparable form


class Leaf(NamedTuple):
    kind: str      # "array", "dtype", "py", "info", "namespace", "device"
    value: Any


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Tracer, StrictArray))


def _as_numpy(x: Any) -> np.ndarray:
    if isinstance(x, StrictArray):
        return np.asarray(x._array)
    return np.asarray(x)


def _dtype_of_obj(x: Any) -> np.dtype | None:
    if isinstance(x, type(xps.float64)):
        return np.dtype(x._np_dtype)
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return np.dtype(x)
    return None


def normalize(out: Any) -> Any:
    """A result as nested tuples of ``Leaf``s (arrays as numpy, dtypes as numpy dtypes)."""
    if _is_array(out):
        return Leaf("array", _as_numpy(out))
    dt = _dtype_of_obj(out)
    if dt is not None:
        return Leaf("dtype", dt)
    if isinstance(out, type(xps.asarray(0).device)) or (isinstance(out, str) and out == "cpu"):
        return Leaf("device", None)
    if hasattr(out, "bits") and hasattr(out, "max"):   # finfo / iinfo
        fields = ("bits", "eps", "max", "min", "smallest_normal", "dtype")
        return Leaf("info", tuple((f, normalize(getattr(out, f))) for f in fields
                                  if hasattr(out, f)))
    if hasattr(out, "_fields"):
        return ("namedtuple", tuple(out._fields), tuple(normalize(v) for v in out))
    if isinstance(out, (tuple, list)):
        return ("sequence", tuple(normalize(v) for v in out))
    if isinstance(out, dict):
        return ("dict", tuple(sorted((k, normalize(v)) for k, v in out.items())))
    if isinstance(out, (bool, int, float, complex, str)) or out is None:
        return Leaf("py", (type(out).__name__, out))
    if hasattr(out, "__array_api_version__"):
        return Leaf("namespace", out.__array_api_version__)
    return Leaf("py", (type(out).__name__, repr(out)))


def _tolerance(dtype: np.dtype, loose: bool) -> tuple[float, float]:
    single = dtype in (np.float32, np.complex64)
    if single:
        return (1e-4, 1e-5) if loose else (2e-6, 1e-7)
    return (1e-8, 1e-10) if loose else (1e-12, 1e-14)


def compare(got: Any, want: Any, *, loose: bool = False, signed_zeros: bool = False) -> str:
    """'' when ``got`` matches ``want`` (both normalized), else the first difference."""
    if isinstance(want, Leaf):
        if not isinstance(got, Leaf) or got.kind != want.kind:
            return f"returned {_describe(got)}, expected {_describe(want)}"
        if want.kind == "array":
            return _compare_arrays(got.value, want.value, loose, signed_zeros)
        if want.kind == "py":
            (gt, gv), (wt, wv) = got.value, want.value
            if gt != wt:
                return f"returned a Python {gt}, expected a Python {wt}"
            if gv != wv and not (isinstance(wv, float) and math.isnan(wv) and math.isnan(gv)):
                return f"returned {gv!r}, expected {wv!r}"
            return ""
        if want.kind == "info":
            for (name, g), (_, w) in zip(got.value, want.value):
                why = compare(g, w)
                if why:
                    return f".{name}: {why}"
            return ""
        if got.value != want.value:
            return f"returned {want.kind} {got.value}, expected {want.value}"
        return ""
    if not isinstance(got, tuple) or isinstance(got, Leaf) or got[0] != want[0]:
        return f"returned {_describe(got)}, expected {_describe(want)}"
    if want[0] == "namedtuple" and got[1] != want[1]:
        return f"returned fields {got[1]}, expected {want[1]}"
    items_got, items_want = got[-1], want[-1]
    if len(items_got) != len(items_want):
        return f"returned {len(items_got)} items, expected {len(items_want)}"
    for i, (g, w) in enumerate(zip(items_got, items_want)):
        if want[0] == "dict":
            if g[0] != w[0]:
                return f"returned key {g[0]!r}, expected {w[0]!r}"
            g, w = g[1], w[1]
        why = compare(g, w, loose=loose, signed_zeros=signed_zeros)
        if why:
            return f"item {i}: {why}"
    return ""


def _describe(x: Any) -> str:
    if isinstance(x, Leaf):
        if x.kind == "array":
            return f"an array {x.value.dtype}{list(x.value.shape)}"
        if x.kind == "py":
            return f"a Python {x.value[0]}"
        return f"a {x.kind}"
    return f"a {x[0]}"


def _compare_arrays(got: np.ndarray, want: np.ndarray, loose: bool, signed_zeros: bool) -> str:
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if want.dtype.kind in "fc":
        rtol, atol = _tolerance(want.dtype, loose)
        parts = [(got.real, want.real), (got.imag, want.imag)] if want.dtype.kind == "c" \
            else [(got, want)]
        for g, w in parts:
            close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            if not close.all():
                return _first_difference(got, want, ~close)
            if signed_zeros:
                wrong_sign = (w == 0) & (g == 0) & (np.signbit(g) != np.signbit(w))
                if wrong_sign.any():
                    return "sign of zero: " + _first_difference(got, want, wrong_sign)
        return ""
    if not np.array_equal(got, want):
        return _first_difference(got, want, got != want)
    return ""


def _first_difference(got: np.ndarray, want: np.ndarray, wrong: np.ndarray) -> str:
    """Where the first wrong element is, what it is and what it should be."""
    wrong = np.broadcast_to(wrong, want.shape)
    index = tuple(int(i) for i in np.argwhere(wrong)[0])
    where = f" at {list(index)}" if index else ""
    return (f"{int(wrong.sum())} of {want.size} values differ, e.g.{where} {got[index]!r}, "
            f"expected {want[index]!r}")


# ---------------------------------------------------------------------------
# Cases


class Case(NamedTuple):
    """One call: ``fn(xp, *args, **kwargs)`` in the reference and in funcdiff."""
    name: str          # "sum[int32,axis=0]", "Array.__add__[float64,scalar]"
    function: str      # the standard name it covers ("sum", "linalg.det", "Array.__add__")
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict
    concrete_only: bool = False   # needs concrete values: ConcretizationError under jit
    loose: bool = False           # iterative or factorized results: looser tolerances
    signed_zeros: bool = False


class Outcome(NamedTuple):
    mode: str
    case: str
    function: str
    status: str        # "pass", "fail", "documented"
    reason: str


def _call(path: str) -> Callable[..., Any]:
    def call(xp: Any, *args: Any, **kwargs: Any) -> Any:
        return _lookup(xp, path)(*args, **kwargs)
    return call


_CASES: list[Case] = []


def case(function: str, label: str, *args: Any, fn: Callable | None = None,
         concrete_only: bool = False, loose: bool = False, signed_zeros: bool = False,
         **kwargs: Any) -> None:
    """Add a case calling the standard function ``function`` (or ``fn``) on ``args``."""
    name = f"{function}[{label}]" if label else function
    _CASES.append(Case(name, function, fn or _call(function), args, kwargs, concrete_only,
                       loose, signed_zeros))


def _kw_label(kwargs: dict) -> str:
    return ",".join(f"{k}={v.name if isinstance(v, D) else v}" for k, v in kwargs.items())


DTYPES = ("float64", "float32", "int64", "int32", "uint8", "bool", "complex128")
RNG = np.random.default_rng(20241)

_FLOAT_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -3.0, 1e-8]
_INT_VALUES = [-3, -1, 0, 1, 2, 7]
_UINT_VALUES = [0, 1, 2, 7, 255]
_COMPLEX_VALUES = [1 + 2j, -0.5 + 0j, -1.5j, 0j, 3 - 4j, complex(-0.0, 0.5),
                   complex(np.inf, 0.0), complex(np.nan, 1.0)]


def values(dtype: str) -> np.ndarray:
    """The elementwise test vector of ``dtype``: special values included."""
    if dtype in ("float64", "float32"):
        return np.array(_FLOAT_SPECIALS, dtype)
    if dtype in ("int64", "int32", "int8", "int16"):
        return np.array(_INT_VALUES, dtype)
    if dtype.startswith("uint"):
        return np.array(_UINT_VALUES, dtype)
    if dtype == "bool":
        return np.array([True, False])
    return np.array(_COMPLEX_VALUES, dtype)


def normal(*shape: int, dtype: str = "float64") -> np.ndarray:
    if dtype.startswith("complex"):
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.startswith("int") or dtype.startswith("uint"):
        return RNG.integers(0 if dtype.startswith("u") else -5, 6, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# --- elementwise -------------------------------------------------------------

UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
         "conj", "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan",
         "log", "log10", "log1p", "log2", "logical_not", "negative", "positive", "real",
         "reciprocal", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan",
         "tanh", "trunc"]
BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
          "bitwise_right_shift", "bitwise_xor", "copysign", "divide", "equal", "floor_divide",
          "greater", "greater_equal", "hypot", "less", "less_equal", "logaddexp", "logical_and",
          "logical_or", "logical_xor", "maximum", "minimum", "multiply", "nextafter",
          "not_equal", "pow", "remainder", "subtract"]
_SHIFTS = ("bitwise_left_shift", "bitwise_right_shift")


def _binary_operands(name: str, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    v = values(dtype)
    right = v
    if name in _SHIFTS or (name == "pow" and dtype[0] in "iu"):
        right = np.array([0, 1, 2, 3], dtype)  # negative shifts and powers are undefined
    return v[:, None], right[None, :]


for _name in UNARY:
    for _dt in DTYPES:
        case(_name, _dt, values(_dt), signed_zeros=True)
    case(_name, "float64,0-d", np.array(-0.75))
    case(_name, "float64,empty", np.zeros((0, 2)))
    case(_name, "float32,2-d", normal(2, 3, dtype="float32"))
    case(_name, "int64,0-d", np.array(3))

for _name in BINARY:
    for _dt in DTYPES:
        case(_name, _dt, *_binary_operands(_name, _dt), signed_zeros=True)
    for _d1, _d2 in (("float32", "float64"), ("int32", "int64"), ("uint8", "int64"),
                     ("complex128", "float64")):
        case(_name, f"{_d1},{_d2}", normal(3, dtype=_d1), normal(2, 1, dtype=_d2))
    case(_name, "float64,0-d", np.array(1.25), normal(3))
    case(_name, "float64,empty", np.zeros((0, 1)), normal(3))
    for _dt, _scalar in (("float64", 2.0), ("float32", 0.5), ("int32", 2), ("int64", 3),
                         ("uint8", 1), ("bool", True), ("complex128", 1j),
                         ("float64", 2)):
        _x = normal(4, dtype=_dt)
        case(_name, f"{_dt},{type(_scalar).__name__}-scalar", _x, _scalar)
        case(_name, f"{type(_scalar).__name__}-scalar,{_dt}", _scalar, _x)

case("clip", "float64", values("float64"), min=-1.0, max=1.0)
case("clip", "float64,arrays", normal(5), min=normal(5), max=np.full(5, 0.5))
case("clip", "float64,min-only", normal(2, 3), min=0.0)
case("clip", "int32,int-bounds", values("int32"), min=-1, max=2)
case("clip", "uint8", values("uint8"), max=7)
case("clip", "float32,0-d", np.array(3.0, "float32"), min=0.0, max=1.0)
case("clip", "empty", np.zeros((0,)), min=0.0, max=1.0)

# --- creation ------------------------------------------------------------------

for _args, _kw in [((5,), {}), ((1, 7, 2), {}), ((0.5,), {}), ((1.0, 2.0, 0.25), {}),
                   ((3,), {"dtype": D("float32")}), ((5, 1, -1), {}), ((0,), {}),
                   ((2, 10), {"step": 3, "dtype": D("int32")})]:
    case("arange", ",".join(map(str, _args)) + (("," + _kw_label(_kw)) if _kw else ""),
         *_args, **_kw)
for _shape in [(2, 3), 4, (), (0, 2)]:
    for _kw in [{}, {"dtype": D("int32")}, {"dtype": D("bool")}]:
        _label = f"{_shape}" + ("," + _kw_label(_kw) if _kw else "")
        for _name in ("zeros", "ones"):
            case(_name, _label, _shape, **_kw)
        case("empty", _label, _shape,
             fn=lambda xp, shape, **kw: xp.zeros_like(xp.empty(shape, **kw)), **_kw)
for _fill, _kw in [(1.5, {}), (2, {}), (True, {}), (1 + 2j, {}), (3, {"dtype": D("float32")}),
                   (0, {"dtype": D("uint8")})]:
    case("full", f"{_fill!r}" + ("," + _kw_label(_kw) if _kw else ""), (2, 3), _fill, **_kw)
for _dt in ("float64", "float32", "int64", "bool", "complex128"):
    _x = normal(2, 3, dtype=_dt)
    case("zeros_like", _dt, _x)
    case("ones_like", _dt, _x)
    case("empty_like", _dt, _x, fn=lambda xp, x: xp.zeros_like(xp.empty_like(x)))
    case("full_like", _dt, _x, 1)
case("zeros_like", "dtype", normal(3), dtype=D("int32"))
case("ones_like", "0-d", np.array(2.0))
case("full_like", "dtype", normal(3), 2.5, dtype=D("float32"))
case("full_like", "empty", np.zeros((0, 3)), 7)
case("empty_like", "dtype", normal(3), dtype=D("int64"),
     fn=lambda xp, x, **kw: xp.zeros_like(xp.empty_like(x, **kw)))
for _args, _kw in [((3,), {}), ((2, 4), {}), ((3,), {"k": 1}), ((4, 3), {"k": -1}),
                   ((2,), {"dtype": D("int32")}), ((0,), {})]:
    case("eye", ",".join(map(str, _args)) + ("," + _kw_label(_kw) if _kw else ""), *_args, **_kw)
for _args, _kw in [((0.0, 1.0, 5), {}), ((2, 10, 4), {}), ((0.0, 1.0, 5), {"endpoint": False}),
                   ((1.0, 0.0, 1), {}), ((0, 1, 3), {"dtype": D("float32")}),
                   ((0.0, 1.0, 0), {}), ((0j, 1 + 1j, 3), {})]:
    case("linspace", ",".join(map(str, _args)) + ("," + _kw_label(_kw) if _kw else ""),
         *_args, **_kw)
for _dt in ("float64", "float32", "int32", "bool", "complex128"):
    case("asarray", _dt, normal(2, 3, dtype=_dt))
case("asarray", "list", [[1.0, 2.0], [3.0, 4.0]])
case("asarray", "int-list", [1, 2, 3])
case("asarray", "bool-scalar", True)
case("asarray", "dtype", normal(3), dtype=D("float32"))
case("asarray", "copy", normal(3), copy=True)
case("asarray", "device", normal(3), fn=lambda xp, x: xp.asarray(x, device=x.device))
case("asarray", "array-list", [normal(2), normal(2)])
case("meshgrid", "xy", normal(3), normal(2))
case("meshgrid", "ij", normal(3), normal(2), np.arange(4.0), indexing="ij")
case("meshgrid", "one", normal(3, dtype="int32"))
case("meshgrid", "none", fn=lambda xp: xp.meshgrid())
for _name in ("tril", "triu"):
    for _kw in [{}, {"k": 1}, {"k": -1}]:
        case(_name, "float64" + ("," + _kw_label(_kw) if _kw else ""), normal(3, 4), **_kw)
    case(_name, "int32,batched", normal(2, 3, 3, dtype="int32"))
    case(_name, "bool", normal(3, 3, dtype="bool"))
# from_dlpack's input is another library's array (numpy's here), never a traced value
case("from_dlpack", "numpy", fn=lambda xp: xp.from_dlpack(np.arange(3.0)))
case("from_dlpack", "numpy-int32", fn=lambda xp: xp.from_dlpack(np.arange(4, dtype=np.int32)))

# --- data types ------------------------------------------------------------------

for _a, _b in [("float64", "float32"), ("float32", "float64"), ("int32", "int64"),
               ("int64", "int32"), ("uint8", "int32"), ("int8", "uint8"), ("bool", "int8"),
               ("int64", "float64"), ("float64", "complex128"), ("complex128", "float64")]:
    case("can_cast", f"{_a},{_b}", D(_a), D(_b))
case("can_cast", "array", normal(3, dtype="float32"), D("float64"))
case("can_cast", "int-array", normal(3, dtype="int64"), D("int32"))
for _dt in ("float32", "float64", "complex128"):
    case("finfo", _dt, D(_dt))
case("finfo", "array", normal(2, dtype="float32"))
for _dt in ("int8", "int32", "uint8", "uint64", "int64"):
    case("iinfo", _dt, D(_dt))
case("iinfo", "array", normal(2, dtype="int32"))
for _dt in ("float32", "int8", "uint16", "bool", "complex64"):
    for _kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating",
                  "complex floating", "numeric", ("integral", "real floating"), D("float32")):
        _label = f"{_dt},{_kind.name if isinstance(_kind, D) else _kind}"
        case("isdtype", _label, D(_dt), _kind)
for _args in [(D("float32"), D("float64")), (D("int8"), D("uint8")), (D("int32"), D("int64")),
              (D("bool"),), (D("uint8"), D("uint16"), D("int8"))]:
    case("result_type", ",".join(a.name for a in _args), *_args)
case("result_type", "arrays", normal(2, dtype="float32"), normal(3, dtype="float64"))
case("result_type", "array,dtype", normal(2, dtype="int32"), D("int64"))
case("result_type", "float32,float-scalar", normal(2, dtype="float32"), 1.5)
case("result_type", "int8,int-scalar", normal(2, dtype="int8"), 3)
case("result_type", "float64,complex-scalar", D("float64"), 1j)
for _src, _dst in [("float64", "float32"), ("float64", "int32"), ("int32", "float64"),
                   ("bool", "int64"), ("int64", "bool"), ("float32", "complex128"),
                   ("uint8", "int8"), ("complex128", "complex64")]:
    case("astype", f"{_src}->{_dst}", normal(2, 3, dtype=_src), D(_dst))
case("astype", "copy=False", normal(3), D("float64"), copy=False)
case("astype", "device", normal(3), fn=lambda xp, x: xp.astype(x, xp.float32, device=x.device))
case("astype", "0-d", np.array(2.7), D("int64"))
case("astype", "empty", np.zeros((0, 2)), D("uint8"))

# --- manipulation ----------------------------------------------------------------

case("broadcast_arrays", "float64", normal(3, 1), normal(4))
case("broadcast_arrays", "mixed", normal(1, 2, dtype="int32"), normal(3, 1, dtype="bool"),
     np.array(1.0))
case("broadcast_arrays", "one", normal(2))
case("broadcast_to", "float64", normal(3), (2, 3))
case("broadcast_to", "0-d", np.array(1.5), (2,))
case("broadcast_to", "int32", normal(2, 1, dtype="int32"), (2, 2, 3))
case("broadcast_to", "empty", normal(1), (0,))
for _kw in [{}, {"axis": 1}, {"axis": None}, {"axis": -1}]:
    case("concat", "float64" + ("," + _kw_label(_kw) if _kw else ""),
         [normal(2, 3), normal(2, 3)], **_kw)
case("concat", "mixed", [normal(2, dtype="int32"), normal(3, dtype="int64")])
case("concat", "float32,float64", (normal(2, dtype="float32"), normal(2)))
case("concat", "empty", [np.zeros((0, 2)), normal(1, 2)])
for _kw in [{"axis": 0}, {"axis": (0, 2)}, {"axis": -1}]:
    case("expand_dims", _kw_label(_kw), normal(2, 3), **_kw)
case("expand_dims", "0-d", np.array(1.0), axis=0)
case("expand_dims", "int32", normal(3, dtype="int32"), axis=1)
for _kw in [{}, {"axis": 0}, {"axis": (0, 1)}, {"axis": -1}]:
    case("flip", "float64" + ("," + _kw_label(_kw) if _kw else ""), normal(2, 3), **_kw)
case("flip", "0-d", np.array(2.0))
case("flip", "bool", normal(4, dtype="bool"))
case("moveaxis", "int", normal(2, 3, 4), 0, -1)
case("moveaxis", "tuple", normal(2, 3, 4), (0, 1), (2, 0))
case("moveaxis", "int32", normal(2, 3, dtype="int32"), 1, 0)
case("permute_dims", "float64", normal(2, 3, 4), (2, 0, 1))
case("permute_dims", "0-d", np.array(1.0), ())
case("permute_dims", "bool", normal(2, 3, dtype="bool"), (1, 0))
for _rep, _kw in [(2, {}), (np.array([1, 0, 2]), {"axis": 0}), (2, {"axis": 1}),
                  (np.array([2, 1]), {"axis": 1})]:
    _label = ("array" if isinstance(_rep, np.ndarray) else str(_rep)) + \
        ("," + _kw_label(_kw) if _kw else "")
    # array repeats give a data-dependent length
    case("repeat", _label, normal(3, 2) if _kw else normal(3), _rep,
         concrete_only=isinstance(_rep, np.ndarray), **_kw)
case("repeat", "int32", normal(3, dtype="int32"), 3)
for _shape, _kw in [((3, 2), {}), ((-1,), {}), ((6, 1), {"copy": True}), ((), {}),
                    ((2, -1), {"copy": None})]:
    _x = np.array([1.5]) if _shape == () else normal(2, 3)
    case("reshape", f"{_shape}" + ("," + _kw_label(_kw) if _kw else ""), _x, _shape, **_kw)
case("reshape", "empty", np.zeros((0, 3)), (3, 0))
case("reshape", "int32", normal(4, dtype="int32"), (2, 2))
for _shift, _kw in [(1, {}), (-2, {"axis": 1}), ((1, 2), {"axis": (0, 1)}), (1, {"axis": 0})]:
    case("roll", f"{_shift}" + ("," + _kw_label(_kw) if _kw else ""), normal(3, 4), _shift, **_kw)
case("roll", "0-d", np.array(1.0), 1)
case("squeeze", "axis", normal(1, 3, 1), 0)
case("squeeze", "tuple", normal(1, 3, 1), (0, 2))
case("squeeze", "keyword", normal(3, 1), axis=-1)
case("squeeze", "int32", normal(1, dtype="int32"), 0)
for _kw in [{}, {"axis": 1}, {"axis": -1}]:
    case("stack", "float64" + ("," + _kw_label(_kw) if _kw else ""), [normal(2, 3), normal(2, 3)],
         **_kw)
case("stack", "0-d", (np.array(1.0), np.array(2.0)))
case("stack", "mixed", [normal(2, dtype="int32"), normal(2, dtype="int64")])
case("tile", "float64", normal(2, 3), (2, 1))
case("tile", "more", normal(3), (2, 2))
case("tile", "int32", normal(2, 2, dtype="int32"), (3,))
case("unstack", "float64", normal(3, 2))
case("unstack", "axis", normal(2, 3, 4), axis=-1)
case("unstack", "int32", normal(2, 3, dtype="int32"), axis=1)
case("unstack", "empty", np.zeros((0, 2)))

# --- indexing and searching ----------------------------------------------------------

case("take", "float64", normal(5), np.array([0, 4, 2]))
case("take", "axis", normal(3, 4), np.array([1, 1, 0]), axis=1)
case("take", "axis0", normal(3, 4, dtype="int32"), np.array([2]), axis=0)
case("take", "negative", normal(5), np.array([-1, -5]))
case("take", "empty", normal(5), np.zeros(0, np.int64))
case("take_along_axis", "float64", normal(3, 4), np.array([[0, 3], [1, 1], [2, 0]]))
case("take_along_axis", "axis0", normal(3, 4), np.array([[0, 2, 1, 0]]), axis=0)
case("take_along_axis", "int32", normal(4, dtype="int32"), np.array([3, 0, 0]))
for _kw in [{}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"keepdims": True}]:
    for _name in ("argmax", "argmin"):
        case(_name, "float64" + ("," + _kw_label(_kw) if _kw else ""), normal(3, 4), **_kw)
for _name in ("argmax", "argmin"):
    case(_name, "int32", normal(5, dtype="int32"))
    case(_name, "uint8", values("uint8"))
    case(_name, "bool", normal(5, dtype="bool"))
    case(_name, "nan", np.array([1.0, np.nan, 3.0]))
    case(_name, "0-d", np.array(1.0))
case("nonzero", "float64", np.array([0.0, 1.5, 0.0, -2.0]), concrete_only=True)
case("nonzero", "2-d", normal(3, 4, dtype="bool"), concrete_only=True)
case("nonzero", "int32", normal(5, dtype="int32"), concrete_only=True)
case("nonzero", "empty", np.zeros((0,)), concrete_only=True)
case("count_nonzero", "float64", np.array([0.0, 1.5, 0.0, -2.0]))
case("count_nonzero", "axis", normal(3, 4, dtype="int32"), axis=1)
case("count_nonzero", "keepdims", normal(3, 4, dtype="bool"), axis=(0, 1), keepdims=True)
case("count_nonzero", "nan", np.array([np.nan, 0.0, -0.0]))
_sorted = np.sort(normal(6))
for _kw in [{}, {"side": "right"}, {"side": "left"}]:
    case("searchsorted", "float64" + ("," + _kw_label(_kw) if _kw else ""), _sorted,
         np.array([_sorted[2], -10.0, 10.0, _sorted[4]]), **_kw)
case("searchsorted", "sorter", np.array([3.0, 1.0, 2.0]), np.array([1.5, 2.5]),
     sorter=np.array([1, 2, 0]))
case("searchsorted", "int32", np.array([1, 2, 2, 5], "int32"), np.array([2, 3], "int32"))
case("searchsorted", "scalar", _sorted, 0.0)
for _cond, _a, _b, _label in [
        (normal(3, dtype="bool"), normal(3), normal(3), "float64"),
        (normal(2, 3, dtype="bool"), normal(3), np.array(0.0), "broadcast"),
        (normal(3, dtype="bool"), normal(3, dtype="int32"), normal(3, dtype="int64"), "ints"),
        (normal(3, dtype="bool"), normal(3, dtype="float32"), 0.0, "float-scalar"),
        (normal(3, dtype="bool"), 1, normal(3, dtype="int32"), "int-scalar"),
        (normal(3, dtype="bool"), normal(3, dtype="complex128"), 0j, "complex")]:
    case("where", _label, _cond, _a, _b)

# --- sorting and sets ----------------------------------------------------------------------

_ties = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 0.0, np.nan]])
for _name in ("sort", "argsort"):
    for _kw in [{}, {"descending": True}, {"axis": 0}, {"stable": False},
                {"axis": 0, "descending": True, "stable": True}]:
        case(_name, "float64" + ("," + _kw_label(_kw) if _kw else ""), _ties, **_kw)
    case(_name, "int32", normal(6, dtype="int32"), descending=True)
    case(_name, "uint8", values("uint8"))
    case(_name, "bool", np.array([True, False, True, False]), descending=True)
    case(_name, "empty", np.zeros((0,)))
for _name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    case(_name, "float64", np.array([2.0, 1.0, 2.0, 3.0, 1.0]), concrete_only=True)
    case(_name, "2-d", np.array([[1, 2], [2, 0]], "int32"), concrete_only=True)
    case(_name, "nan", np.array([np.nan, 1.0, np.nan, 0.0, -0.0]), concrete_only=True)
    case(_name, "bool", np.array([True, False, True]), concrete_only=True)
    case(_name, "empty", np.zeros((0,)), concrete_only=True)

# --- statistics -----------------------------------------------------------------------------

_STAT_KWS = [{}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": (0, 1)}, {"axis": -1},
             {"keepdims": True}]
for _name in ("sum", "prod", "max", "min", "mean", "std", "var", "all", "any"):
    for _kw in _STAT_KWS:
        case(_name, "float64" + ("," + _kw_label(_kw) if _kw else ""), normal(3, 4), **_kw)
    for _dt in ("float32", "int64", "int32", "uint8", "bool", "complex128"):
        case(_name, _dt, normal(2, 3, dtype=_dt))
    case(_name, "0-d", np.array(1.5))
    case(_name, "nan", np.array([1.0, np.nan, -0.0]))
    case(_name, "empty", np.zeros((0,)))
    case(_name, "empty-axis", np.zeros((2, 0)), axis=1)
for _name in ("sum", "prod"):
    for _src, _dst in (("int32", "int32"), ("int32", "float64"), ("float32", "float64"),
                       ("uint8", "uint8"), ("bool", "int32")):
        case(_name, f"{_src},dtype={_dst}", normal(2, 3, dtype=_src), dtype=D(_dst))
for _name in ("std", "var"):
    case(_name, "correction=1", normal(3, 4), correction=1)
    case(_name, "correction=1.5,axis", normal(3, 4), axis=0, correction=1.5)
    case(_name, "float32,correction", normal(5, dtype="float32"), correction=1)
for _name in ("cumulative_sum", "cumulative_prod"):
    for _dt in ("float64", "float32", "int64", "int32", "uint8", "bool", "complex128"):
        case(_name, _dt, normal(4, dtype=_dt))
    case(_name, "axis", normal(2, 3), axis=1)
    case(_name, "include_initial", normal(2, 3), axis=0, include_initial=True)
    case(_name, "dtype", normal(4, dtype="int32"), dtype=D("float64"))
    case(_name, "int32,dtype", normal(4, dtype="int32"), dtype=D("int32"))
    case(_name, "empty", np.zeros((0,)), include_initial=True)
    case(_name, "0-d", np.array(2.0))
for _kw in [{}, {"axis": 0}, {"n": 2}, {"prepend": np.array([[0.0], [1.0], [2.0]])},
            {"append": np.zeros((3, 2)), "n": 2}]:
    case("diff", "float64" + ("," + _kw_label({k: v for k, v in _kw.items()
                                                 if not isinstance(v, np.ndarray)})
                              + ("," + ",".join(k for k, v in _kw.items()
                                                if isinstance(v, np.ndarray)))
                              if _kw else ""), normal(3, 4), **_kw)
case("diff", "int32", normal(5, dtype="int32"))
case("diff", "uint8", values("uint8"))
case("diff", "bool", normal(5, dtype="bool"))

# --- linear algebra ----------------------------------------------------------------------------


def _spd(n: int, *batch: int, dtype: str = "float64") -> np.ndarray:
    a = RNG.standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


case("matmul", "float64", normal(2, 3), normal(3, 4))
case("matmul", "vector", normal(3), normal(3, 2))
case("matmul", "vectors", normal(3), normal(3))
case("matmul", "batched", normal(2, 1, 2, 3), normal(4, 3, 2))
case("matmul", "int32", normal(2, 2, dtype="int32"), normal(2, 2, dtype="int32"))
case("matmul", "float32,float64", normal(2, 2, dtype="float32"), normal(2))
case("matmul", "complex128", normal(2, 2, dtype="complex128"), normal(2, dtype="complex128"))
case("matmul", "bool", normal(2, 2, dtype="bool"), normal(2, 2, dtype="bool"))
case("matmul", "empty", np.zeros((2, 0)), np.zeros((0, 3)))
for _kw in [{}, {"axes": 1}, {"axes": ((0,), (1,))}, {"axes": 0}]:
    _a, _b = (normal(3, 4), normal(3, 4)) if not _kw or _kw["axes"] == ((0,), (1,)) \
        else (normal(2, 3), normal(3, 2))
    if _kw.get("axes") == ((0,), (1,)):
        _b = normal(2, 3)
    case("tensordot", "float64" + ("," + _kw_label(_kw) if _kw else ""), _a, _b, **_kw)
case("tensordot", "int32", normal(2, 2, dtype="int32"), normal(2, 2, dtype="int32"), axes=1)
for _path in ("vecdot", "linalg.vecdot"):
    case(_path, "float64", normal(4, 3), normal(3))
    case(_path, "axis", normal(3, 2), normal(3, 2), axis=0)
    case(_path, "broadcast", normal(2, 1, 3), normal(4, 3))
    case(_path, "int32", normal(2, 3, dtype="int32"), normal(3, dtype="int32"))
    case(_path, "complex128", normal(2, 3, dtype="complex128"), normal(3, dtype="complex128"))
    case(_path, "float32", normal(3, dtype="float32"), normal(3, dtype="float32"))
for _path in ("matrix_transpose", "linalg.matrix_transpose"):
    case(_path, "float64", normal(2, 3))
    case(_path, "batched", normal(4, 2, 3, dtype="int32"))
    case(_path, "bool", normal(2, 2, dtype="bool"))
case("linalg.matmul", "float64", normal(2, 3), normal(3))
case("linalg.matmul", "int32", normal(2, 2, dtype="int32"), normal(2, 2, dtype="int32"))
case("linalg.tensordot", "float64", normal(2, 3), normal(3, 2), axes=1)
case("linalg.tensordot", "default", normal(2, 3), normal(2, 3))
case("linalg.cholesky", "float64", _spd(3), loose=True)
case("linalg.cholesky", "upper", _spd(3), upper=True, loose=True)
case("linalg.cholesky", "batched-float32", _spd(2, 2, dtype="float32"), loose=True)
case("linalg.cross", "float64", normal(3), normal(3))
case("linalg.cross", "batched", normal(2, 3), normal(3))
case("linalg.cross", "axis", normal(3, 2), normal(3, 2), axis=0)
case("linalg.cross", "int32", normal(3, dtype="int32"), normal(3, dtype="int32"))
for _dt in ("float64", "float32"):
    case("linalg.det", _dt, normal(3, 3, dtype=_dt), loose=True)
    case("linalg.inv", _dt, _spd(3, dtype=_dt), loose=True)
    case("linalg.slogdet", _dt, normal(3, 3, dtype=_dt), loose=True)
    case("linalg.eigh", _dt, _spd(3, dtype=_dt), loose=True)
    case("linalg.eigvalsh", _dt, _spd(3, dtype=_dt), loose=True)
    case("linalg.svdvals", _dt, normal(3, 2, dtype=_dt), loose=True)
    case("linalg.pinv", _dt, normal(3, 2, dtype=_dt), loose=True)
    case("linalg.solve", _dt, _spd(3, dtype=_dt), normal(3, 2, dtype=_dt), loose=True)
    case("linalg.qr", _dt, normal(4, 3, dtype=_dt), loose=True)
    case("linalg.matrix_rank", _dt, normal(3, 3, dtype=_dt))
case("linalg.det", "batched", normal(2, 2, 2), loose=True)
case("linalg.det", "complex128", normal(2, 2, dtype="complex128"), loose=True)
case("linalg.inv", "batched", _spd(2, 3), loose=True)
case("linalg.slogdet", "negative", np.array([[0.0, 1.0], [1.0, 0.0]]), loose=True)
case("linalg.eigh", "batched", _spd(2, 2), loose=True)
case("linalg.solve", "batched", _spd(3, 2), normal(2, 3, 1), loose=True)
case("linalg.qr", "complete", normal(3, 2), mode="complete", loose=True)
case("linalg.qr", "reduced", normal(3, 2), mode="reduced", loose=True)
case("linalg.svd", "reduced", normal(4, 3), full_matrices=False, loose=True)
case("linalg.svd", "square", normal(3, 3), loose=True)
case("linalg.svd", "default", normal(4, 3), loose=True)
case("linalg.matrix_rank", "deficient", np.ones((3, 3)))
case("linalg.matrix_rank", "rtol", np.diag([1.0, 1e-3, 1e-9]), rtol=1e-4)
case("linalg.pinv", "rtol", np.diag([1.0, 1e-3, 1e-9]), rtol=1e-4, loose=True)
for _n in (0, 1, 3, -1):
    case("linalg.matrix_power", str(_n), _spd(3), _n, loose=True)
case("linalg.matrix_power", "int32", normal(2, 2, dtype="int32"), 2)
for _kw in [{}, {"ord": "nuc"}, {"ord": 1}, {"ord": -1}, {"ord": 2}, {"ord": -2},
            {"ord": np.inf}, {"ord": -np.inf}, {"keepdims": True}]:
    case("linalg.matrix_norm", "float64" + ("," + _kw_label(_kw) if _kw else ""),
         normal(2, 3, 3), loose=True, **_kw)
case("linalg.matrix_norm", "float32", normal(3, 3, dtype="float32"), loose=True)
case("linalg.matrix_norm", "complex128", normal(2, 2, dtype="complex128"), loose=True)
for _kw in [{}, {"ord": 1}, {"ord": np.inf}, {"ord": -np.inf}, {"ord": 0}, {"ord": 3},
            {"ord": -1}, {"axis": 0}, {"axis": (0, 1)}, {"axis": 1, "keepdims": True},
            {"keepdims": True}]:
    case("linalg.vector_norm", "float64" + ("," + _kw_label(_kw) if _kw else ""),
         normal(3, 4), loose=True, **_kw)
case("linalg.vector_norm", "float32", normal(4, dtype="float32"), loose=True)
case("linalg.vector_norm", "complex128", normal(4, dtype="complex128"), loose=True)
case("linalg.vector_norm", "0-d", np.array(-2.0))
case("linalg.vector_norm", "empty", np.zeros((0,)))
case("linalg.diagonal", "float64", normal(3, 4))
case("linalg.diagonal", "offset", normal(2, 3, 4), offset=1)
case("linalg.diagonal", "negative", normal(3, 3, dtype="int32"), offset=-1)
case("linalg.trace", "float64", normal(3, 4))
case("linalg.trace", "offset", normal(2, 3, 3), offset=1)
case("linalg.trace", "int32", normal(3, 3, dtype="int32"))
case("linalg.trace", "dtype", normal(3, 3, dtype="int32"), dtype=D("float64"))
case("linalg.trace", "float32", normal(3, 3, dtype="float32"))
case("linalg.outer", "float64", normal(3), normal(2))
case("linalg.outer", "int32", normal(3, dtype="int32"), normal(2, dtype="int32"))
case("linalg.outer", "mixed", normal(3, dtype="float32"), normal(2))

# --- fft --------------------------------------------------------------------------------------

for _name in ("fft", "ifft"):
    case("fft." + _name, "complex128", normal(8, dtype="complex128"), loose=True)
    case("fft." + _name, "n", normal(2, 6, dtype="complex128"), n=4, axis=0, loose=True)
    case("fft." + _name, "norm-ortho", normal(5, dtype="complex128"), norm="ortho", loose=True)
    case("fft." + _name, "norm-forward", normal(5, dtype="complex128"), norm="forward",
         loose=True)
    case("fft." + _name, "float64", normal(4), loose=True)
    case("fft." + _name, "float32", normal(4, dtype="float32"), loose=True)
for _name in ("fftn", "ifftn"):
    case("fft." + _name, "complex128", normal(3, 4, dtype="complex128"), loose=True)
    case("fft." + _name, "axes", normal(2, 3, 4, dtype="complex128"), axes=(0, 2), loose=True)
    case("fft." + _name, "s", normal(3, 4, dtype="complex128"), s=(2, 6), loose=True)
    case("fft." + _name, "norm", normal(3, 4, dtype="complex128"), norm="ortho", loose=True)
case("fft.rfft", "float64", normal(8), loose=True)
case("fft.rfft", "n", normal(3, 5), n=8, axis=-1, loose=True)
case("fft.rfft", "float32", normal(6, dtype="float32"), norm="ortho", loose=True)
case("fft.irfft", "complex128", normal(5, dtype="complex128"), loose=True)
case("fft.irfft", "n", normal(2, 5, dtype="complex128"), n=9, loose=True)
case("fft.irfft", "norm", normal(4, dtype="complex128"), norm="forward", loose=True)
case("fft.rfftn", "float64", normal(4, 6), loose=True)
case("fft.rfftn", "s", normal(4, 6), s=(4, 4), axes=(0, 1), loose=True)
case("fft.irfftn", "complex128", normal(4, 4, dtype="complex128"), loose=True)
case("fft.irfftn", "s", normal(4, 4, dtype="complex128"), s=(4, 6), loose=True)
case("fft.hfft", "complex128", normal(5, dtype="complex128"), loose=True)
case("fft.hfft", "n", normal(5, dtype="complex128"), n=7, norm="ortho", loose=True)
case("fft.ihfft", "float64", normal(8), loose=True)
case("fft.ihfft", "n", normal(2, 7), n=6, axis=1, loose=True)
for _name in ("fftfreq", "rfftfreq"):
    case("fft." + _name, "8", 8, loose=True)
    case("fft." + _name, "d", 7, d=0.5, loose=True)
    case("fft." + _name, "dtype", 5, dtype=D("float32"), loose=True)
    case("fft." + _name, "device", 4, fn=lambda xp, n, _p=_name: _lookup(xp.fft, _p)(
        n, device=xp.__array_namespace_info__().default_device()), loose=True)
for _name in ("fftshift", "ifftshift"):
    case("fft." + _name, "float64", normal(7))
    case("fft." + _name, "axes", normal(3, 4), axes=0)
    case("fft." + _name, "axes-tuple", normal(3, 4, dtype="complex128"), axes=(0, 1))

# --- constants and dtypes --------------------------------------------------------------------


def _constant(name: str) -> Callable[..., Any]:
    return lambda xp: getattr(xp, name)


for _name in ("e", "inf", "nan", "pi", "newaxis", "__array_api_version__"):
    case(_name, "", fn=_constant(_name))
for _name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64", "complex64", "complex128"):
    case(_name, "", fn=lambda xp, _n=_name: (getattr(xp, _n), xp.zeros(2, dtype=getattr(xp, _n)),
                                           xp.isdtype(getattr(xp, _n), "numeric")))
case("newaxis", "indexing", normal(3), fn=lambda xp, x: x[xp.newaxis, :, None])
_info_queries = {
    "capabilities-keys": lambda xp: sorted(xp.__array_namespace_info__().capabilities()),
    "default_dtypes": lambda xp: xp.__array_namespace_info__().default_dtypes(),
    "default_dtypes-device": lambda xp: xp.__array_namespace_info__().default_dtypes(
        device=xp.__array_namespace_info__().default_device()),
    "dtypes": lambda xp: xp.__array_namespace_info__().dtypes(),
    "dtypes-integral": lambda xp: xp.__array_namespace_info__().dtypes(kind="integral"),
    "dtypes-tuple": lambda xp: xp.__array_namespace_info__().dtypes(
        kind=("bool", "real floating")),
    "devices": lambda xp: len(xp.__array_namespace_info__().devices()) >= 1,
    "default_device": lambda xp: xp.__array_namespace_info__().default_device()
    in xp.__array_namespace_info__().devices(),
}
for _label, _fn in _info_queries.items():
    case("__array_namespace_info__", _label, fn=_fn)

# --- the array object -----------------------------------------------------------------------

_ATTRS = {
    "dtype": lambda xp, x: x.dtype,
    "device": lambda xp, x: xp.asarray(x, device=x.device) + 0,
    "mT": lambda xp, x: x.mT,
    "ndim": lambda xp, x: x.ndim,
    "shape": lambda xp, x: x.shape,
    "size": lambda xp, x: x.size,
    "T": lambda xp, x: x.T,
    "to_device": lambda xp, x: x.to_device(x.device),
    "__array_namespace__": lambda xp, x: (x.__array_namespace__().__array_api_version__,
                                          x.__array_namespace__().sum(x)),
    "__array_namespace__-version": lambda xp, x: x.__array_namespace__(
        api_version="2024.12").__array_api_version__,
}
for _attr, _fn in _ATTRS.items():
    _base = _attr.split("-")[0]
    for _label, _x in [("float64", normal(2, 3)), ("int32", normal(3, 2, 4, dtype="int32")),
                       ("bool", normal(2, 2, dtype="bool")), ("0-d", np.array(1.5))]:
        if _base in ("mT", "T") and _x.ndim < 2:
            continue
        case("Array." + _base, (_attr.split("-")[1] + "," if "-" in _attr else "") + _label,
             _x, fn=_fn)

_BINARY_OPS = {"__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
               "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
               "__mod__": operator.mod, "__pow__": operator.pow, "__and__": operator.and_,
               "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
               "__rshift__": operator.rshift, "__eq__": operator.eq, "__ne__": operator.ne,
               "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt,
               "__ge__": operator.ge, "__matmul__": operator.matmul}
_INPLACE = {"__add__": operator.iadd, "__sub__": operator.isub, "__mul__": operator.imul,
            "__truediv__": operator.itruediv, "__floordiv__": operator.ifloordiv,
            "__mod__": operator.imod, "__pow__": operator.ipow, "__and__": operator.iand,
            "__or__": operator.ior, "__xor__": operator.ixor, "__lshift__": operator.ilshift,
            "__rshift__": operator.irshift, "__matmul__": operator.imatmul}


def _inplace(op: Callable) -> Callable:
    def run(xp: Any, x: Any, y: Any) -> Any:
        z = xp.asarray(x, copy=True)
        z = op(z, y)
        return z
    return run


for _dunder, _op in _BINARY_OPS.items():
    _reflected = "__r" + _dunder[2:]
    _in = "__i" + _dunder[2:]
    for _dt in ("float64", "int32", "uint8", "bool", "complex128"):
        if _dunder == "__matmul__":
            _x, _y = normal(2, 2, dtype=_dt), normal(2, 2, dtype=_dt)
        elif _dunder in ("__lshift__", "__rshift__") or (_dunder == "__pow__" and
                                                          _dt[0] in "iu"):
            _x, _y = values(_dt), (np.arange(len(values(_dt))) % 3).astype(_dt)
        else:
            _x, _y = values(_dt)[:, None], values(_dt)[None, :]
        case("Array." + _dunder, _dt, _x, _y, fn=lambda xp, x, y, _o=_op: _o(x, y),
             signed_zeros=True)
        if _dunder == "__matmul__":
            continue
        _scalar = {"float64": 1.5, "int32": 2, "uint8": 3, "bool": True, "complex128": 0.5j}[_dt]
        case("Array." + _dunder, _dt + ",scalar", _x, _scalar,
             fn=lambda xp, x, s, _o=_op: _o(x, s))
        if _dunder not in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            case("Array." + _reflected, _dt + ",scalar", _x, _scalar,
                 fn=lambda xp, x, s, _o=_op: _o(s, x))
    if _dunder in _INPLACE:
        case("Array." + _in, "float64", normal(2, 3), normal(3) if _dunder != "__matmul__"
             else normal(3, 3), fn=_inplace(_INPLACE[_dunder]))
        case("Array." + _in, "int32,scalar", normal(2, 3, dtype="int32"), 2,
             fn=_inplace(_INPLACE[_dunder]))
    case("Array." + _dunder, "float32,float64", normal(2, 2, dtype="float32"),
         normal(2, 2), fn=lambda xp, x, y, _o=_op: _o(x, y))

for _dunder, _op in {"__abs__": operator.abs, "__neg__": operator.neg, "__pos__": operator.pos,
                     "__invert__": operator.invert}.items():
    for _dt in ("float64", "int32", "uint8", "bool", "complex128"):
        case("Array." + _dunder, _dt, values(_dt), fn=lambda xp, x, _o=_op: _o(x),
             signed_zeros=True)
    case("Array." + _dunder, "0-d", np.array(-2, "int64"), fn=lambda xp, x, _o=_op: _o(x))

_KEYS = {
    "int": (normal(4, 3), lambda x: x[1]),
    "negative-int": (normal(4, 3), lambda x: x[-1]),
    "slice": (normal(5), lambda x: x[1:4]),
    "step": (normal(6), lambda x: x[::2]),
    "negative-step": (normal(4, 3), lambda x: x[:, ::-1]),
    "empty-slice": (normal(5), lambda x: x[2:2]),
    "out-of-bounds-slice": (normal(5), lambda x: x[3:10]),
    "ellipsis": (normal(2, 3, 4), lambda x: x[..., 0]),
    "none": (normal(2, 3), lambda x: x[None, 1]),
    "tuple": (normal(2, 3), lambda x: x[1, 2]),
    "mixed": (normal(2, 3, 4), lambda x: x[1, ..., 1:3]),
    "0-d-empty-tuple": (np.array(2.5), lambda x: x[()]),
    "0-d-ellipsis": (np.array(2.5), lambda x: x[...]),
    "int32": (normal(5, dtype="int32"), lambda x: x[-2:]),
}
for _label, (_x, _index) in _KEYS.items():
    case("Array.__getitem__", _label, _x, fn=lambda xp, x, _i=_index: _i(x))
case("Array.__getitem__", "integer-array", normal(5), np.array([0, 4, 1]),
     fn=lambda xp, x, i: x[i])
case("Array.__getitem__", "integer-arrays", normal(3, 4), np.array([0, 2]), np.array([1, 3]),
     fn=lambda xp, x, i, j: x[i, j])
case("Array.__getitem__", "0-d-index", normal(5), np.array(3),
     fn=lambda xp, x, i: x[i])
case("Array.__getitem__", "boolean-mask", normal(5), np.array([True, False, True, True, False]),
     fn=lambda xp, x, m: x[m], concrete_only=True)
case("Array.__getitem__", "boolean-mask-2d", normal(2, 3), normal(2, 3, dtype="bool"),
     fn=lambda xp, x, m: x[m], concrete_only=True)
case("Array.__getitem__", "0-d-boolean", normal(3), fn=lambda xp, x: x[None, ...][0, True],
     concrete_only=False)


def _setitem(key: Callable) -> Callable:
    def run(xp: Any, x: Any, v: Any, *extra: Any) -> Any:
        z = xp.asarray(x, copy=True)
        z[key(*extra)] = v
        return z
    return run


for _label, _x, _v, _key, _extra in [
        ("int", normal(4), 5.0, lambda: 1, ()),
        ("slice-array", normal(5), normal(2), lambda: slice(1, 3), ()),
        ("ellipsis-scalar", normal(2, 3), -1.0, lambda: (..., 0), ()),
        ("tuple", normal(2, 3), np.array(7.0), lambda: (1, 2), ()),
        ("broadcast", normal(3, 4), normal(4), lambda: slice(None), ()),
        ("int32", normal(4, dtype="int32"), 9, lambda: slice(None, None, 2), ()),
        ("bool-array", normal(4, dtype="bool"), True, lambda: -1, ()),
        ("boolean-mask", normal(5), 0.0, lambda m: m,
         (np.array([True, False, True, True, False]),)),
        ("integer-array", normal(5), 3.0, lambda i: i, (np.array([0, 3]),)),
        ("0-d", np.array(1.5), 2.5, lambda: (), ())]:
    case("Array.__setitem__", _label, _x, _v, *_extra, fn=_setitem(_key))

for _dunder, _conv, _inputs in [
        ("__bool__", bool, [np.array(0.0), np.array(2, "int32"), np.array(True),
                            np.array(np.nan)]),
        ("__float__", float, [np.array(1.5), np.array(-0.0), np.array(3, "int32"),
                              np.array(True)]),
        ("__int__", int, [np.array(7, "int64"), np.array(-2.7), np.array(True)]),
        ("__index__", operator.index, [np.array(7, "int64"), np.array(3, "uint8")]),
        ("__complex__", complex, [np.array(1.5), np.array(1 - 2j), np.array(2, "int32")])]:
    for _i, _x in enumerate(_inputs):
        case("Array." + _dunder, f"{_x.dtype},{_x.item()!r}", _x,
             fn=lambda xp, x, _c=_conv: _c(x), concrete_only=True)


def cases() -> list[Case]:
    return list(_CASES)


_duplicates = {c.name for c in _CASES if sum(d.name == c.name for d in _CASES) > 1} \
    if len({c.name for c in _CASES}) != len(_CASES) else set()
assert not _duplicates, f"case names must be unique: {sorted(_duplicates)[:5]}"


# ---------------------------------------------------------------------------
# Signature cases


def check_signature(path: str) -> str:
    """'' when funcdiff's ``path`` exists and takes the reference's parameters."""
    try:
        ours = _lookup(fxp, path)
    except AttributeError:
        return "missing"
    ref = _lookup(xps, path)
    if not callable(ref) or isinstance(ref, type(xps.float64)) or path == "bool":
        return ""
    if not callable(ours):
        return f"not callable: {ours!r}"
    try:
        ref_sig = inspect.signature(ref)
    except (TypeError, ValueError):
        return ""
    try:
        sig = inspect.signature(ours)
    except (TypeError, ValueError):
        return ""  # builtins (numpy's from_dlpack): the value cases call them
    ours_params = list(sig.parameters.values())
    positional = [p for p in ours_params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
    var_positional = any(p.kind == p.VAR_POSITIONAL for p in ours_params)
    var_keyword = any(p.kind == p.VAR_KEYWORD for p in ours_params)
    by_name = {p.name: p for p in ours_params if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                            p.KEYWORD_ONLY)}
    problems = []
    index = 0
    for p in ref_sig.parameters.values():
        if p.kind == p.POSITIONAL_ONLY:
            if index >= len(positional) and not var_positional:
                problems.append(f"no positional parameter for {p.name!r}")
            index += 1
        elif p.kind == p.POSITIONAL_OR_KEYWORD:
            # taken by position and by name (numpy's clip has a_min second and min= too)
            if p.name not in by_name and not var_keyword:
                problems.append(f"no keyword {p.name!r}")
            if index >= len(positional) and not var_positional:
                problems.append(f"no positional parameter for {p.name!r}")
            index += 1
        elif p.kind == p.KEYWORD_ONLY:
            if p.name not in by_name and not var_keyword:
                problems.append(f"no keyword {p.name!r}")
        elif p.kind == p.VAR_POSITIONAL and not var_positional:
            problems.append(f"no *{p.name}")
    ref_names = set(ref_sig.parameters)
    for i, p in enumerate(positional):
        if p.default is p.empty and i >= index:
            problems.append(f"extra required parameter {p.name!r}")
    for p in ours_params:
        if p.kind == p.KEYWORD_ONLY and p.default is p.empty and p.name not in ref_names:
            problems.append(f"extra required keyword {p.name!r}")
    return "; ".join(problems)


# ---------------------------------------------------------------------------
# Running


def _reference(c: Case) -> Any:
    args = _map_arrays(_resolve(xps, c.args), xps.asarray)
    kwargs = _map_arrays(_resolve(xps, c.kwargs), xps.asarray)
    return normalize(c.fn(xps, *args, **kwargs))


def _zero_tangent(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "fc":
        return np.zeros_like(x)
    return np.zeros(x.shape, fd_dtypes.float0)


def _ours(c: Case, mode: str) -> Any:
    """``c`` run in funcdiff in ``mode``, normalized."""
    args, kwargs = _resolve(fxp, c.args), _resolve(fxp, c.kwargs)
    if mode == "eager":
        return normalize(c.fn(fxp, *args, **kwargs))
    leaves = _arrays_in((args, kwargs))
    # complex inputs enter as real and imaginary parts, joined inside the trace
    flat = [np.asarray(0.0)]
    for leaf in leaves:
        flat += [leaf.real.copy(), leaf.imag.copy()] if leaf.dtype.kind == "c" else [leaf]
    static: dict = {}

    def body(*flat_in: Any) -> Any:
        it = iter(flat_in[1:])

        def take(leaf: np.ndarray) -> Any:
            if leaf.dtype.kind == "c":
                return make_complex(next(it), next(it))
            return next(it)
        a, k = _map_arrays((args, kwargs), take)
        out = c.fn(fxp, *a, **k)
        out_leaves: list = []

        def strip(value: Any) -> Any:
            if _is_array(value):
                out_leaves.append(value)
                return _Slot(len(out_leaves) - 1)
            if hasattr(value, "_fields"):
                return type(value)(*map(strip, value))
            if isinstance(value, (tuple, list)):
                return type(value)(map(strip, value))
            if isinstance(value, dict):
                return {key: strip(v) for key, v in value.items()}
            return value
        static["tree"] = strip(out)
        return tuple(out_leaves) if out_leaves else (flat_in[0],)

    if mode == "jit":
        outs = fd.jit(body)(*flat)
    else:
        outs, _ = fd.jvp(body, tuple(flat), tuple(_zero_tangent(x) for x in flat))
    return normalize(_fill(static["tree"], outs))


class _Slot(NamedTuple):
    index: int


def _fill(tree: Any, outs: Any) -> Any:
    if isinstance(tree, _Slot):
        return outs[tree.index]
    if hasattr(tree, "_fields"):
        return type(tree)(*(_fill(v, outs) for v in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_fill(v, outs) for v in tree)
    if isinstance(tree, dict):
        return {k: _fill(v, outs) for k, v in tree.items()}
    return tree


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    text = text if len(text) <= 150 else text[:147] + "..."
    return f"{type(e).__name__}: {text}"


def run_case(c: Case, want: Any, mode: str) -> Outcome:
    try:
        got = _ours(c, mode)
    except (ConcretizationError, TracerConversionError) as e:
        # documented: under jit nothing is concrete; under jvp, float(x) of a value that
        # carries a derivative would drop it (bool(x) and int of integers work)
        documented = c.concrete_only and (
            (mode == "jit" and isinstance(e, ConcretizationError))
            or (mode == "traced" and isinstance(e, TracerConversionError)))
        return Outcome(mode, c.name, c.function, "documented" if documented else "fail",
                       _first_line(e))
    except Exception as e:  # noqa: BLE001  every error is a finding
        return Outcome(mode, c.name, c.function, "fail", _first_line(e))
    why = compare(got, want, loose=c.loose, signed_zeros=c.signed_zeros)
    return Outcome(mode, c.name, c.function, "fail" if why else "pass", why)


def applicable_cases() -> list[tuple[Case, Any]]:
    """The cases with the reference's result; those the reference refuses are left out."""
    out = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for c in _CASES:
            try:
                want = _reference(c)
            except Exception:  # noqa: BLE001  outside the standard: not a case
                continue
            out.append((c, want))
    return out


def sample(pairs: list, every: int) -> list:
    """Every ``every``-th case, plus the first case of each function (so all are covered)."""
    seen: set = set()
    picked = []
    for i, (c, want) in enumerate(pairs):
        if c.function not in seen or i % every == 0:
            picked.append((c, want))
            seen.add(c.function)
    return picked


def run(modes: tuple = MODES, every: dict | None = None) -> list[Outcome]:
    """All outcomes: the signature cases, then each mode's value cases.

    ``every`` maps a mode to a sampling stride (1 runs every case).
    """
    outcomes = [Outcome("signature", name, name, "fail" if why else "pass", why)
                for name in standard_names() for why in [check_signature(name)]]
    pairs = applicable_cases()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for mode in modes:
            stride = (every or {}).get(mode, 1)
            for c, want in (pairs if stride == 1 else sample(pairs, stride)):
                outcomes.append(run_case(c, want, mode))
    return outcomes


def key(o: Outcome) -> str:
    return f"{o.mode}: {o.case}"


def summary_rows(outcomes: list[Outcome]) -> list[tuple]:
    rows = []
    for mode in ("signature",) + MODES:
        mine = [o for o in outcomes if o.mode == mode]
        if not mine:
            continue
        passed = sum(o.status == "pass" for o in mine)
        concrete = sum(o.status == "documented" for o in mine)
        failed = sum(o.status == "fail" for o in mine)
        rate = 100.0 * (passed + concrete) / len(mine)
        rows.append((mode, passed, concrete, failed, len(mine), rate))
    return rows


def report(outcomes: list[Outcome]) -> str:
    """docs/array-api-conformance.md's text."""
    n_functions = len(standard_names())
    n_array = len({o.function for o in outcomes if o.function.startswith("Array.")})
    lines = [
        "# Array API conformance",
        "",
        "How closely `funcdiff.numpy.array_api` (what a tracer's `__array_namespace__()`",
        "returns) follows the Python array API standard, version 2024.12, measured",
        "against `array_api_strict` by `tests/array_api_conformance.py`: "
        f"{n_functions} names of the standard",
        f"(namespace, `linalg`, `fft`) and {n_array} attributes, operators and methods of",
        "the array object, each called on a small table of inputs (several dtypes, 0-d",
        "and empty shapes, keyword variants, nan/inf/-0.0). Each value case runs in",
        "three modes:",
        "",
        "- *eager*: numpy arrays in, the namespace's functions called directly;",
        "- *jit*: the inputs are arguments of `fd.jit`, so the functions see abstract",
        "  tracers;",
        "- *traced*: the inputs are primals of `fd.jvp` with zero tangents, so the",
        "  functions see concrete tracers (as under `grad`).",
        "",
        "Complex inputs enter the transforms as real and imaginary parts and are",
        "joined inside the traced function. *Signature* cases check that each name",
        "exists and takes the standard's parameters.",
        "",
        "| mode | passed | documented | failed | total | pass rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mode, passed, concrete, failed, total, rate in summary_rows(outcomes):
        lines.append(f"| {mode} | {passed} | {concrete} | {failed} | {total} | {rate:.1f}% |")
    lines += [
        "",
        "*Documented*: cases that need concrete values. Their result's shape depends",
        "on the values (`nonzero`, `unique_*`, boolean-mask indexing, `repeat` with",
        "array repeats) or they convert to a Python number (`bool(x)`, `float(x)`,",
        "...). They work eagerly and raise `ConcretizationError` under `jit`; under",
        "`jvp`, `float(x)`, `int(x)` and `complex(x)` of a float value raise",
        "`TracerConversionError`, since the conversion would drop the derivative.",
        "The pass rate counts them as passing; the known failures are listed in the",
        "checker's `KNOWN_FAILURES` with their reasons.",
        "",
        "## Failing cases",
        "",
    ]
    failing = [o for o in outcomes if o.status == "fail"]
    if not failing:
        lines.append("None.")
    for o in failing:
        known = KNOWN_FAILURES.get(key(o))
        why = f"{known}. {o.reason}" if known else f"(new) {o.reason}"
        lines.append(f"- `{key(o)}`: {why.replace('|', '/')}")
    concrete = sorted({key(o) for o in outcomes if o.status == "documented"})
    lines += ["", "## Documented (need concrete values)", "", ", ".join(f"`{c}`" for c in concrete),
              "", "## Re-running", "",
              "```bash",
              "python tests/array_api_conformance.py          # summary and failing cases",
              "python tests/array_api_conformance.py --write  # regenerate this page",
              "python -m pytest -p no:cacheprovider tests/test_array_api_conformance.py",
              "```", "",
              "The test fails when a case fails that is not in the checker's",
              "`KNOWN_FAILURES`, when a known failure passes, and when this page differs",
              "from the checker's output.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {DOC_PATH}")
    parser.add_argument("--verbose", action="store_true", help="list every failing case")
    ns = parser.parse_args(argv)
    outcomes = run()
    print(f"{'mode':10} {'passed':>7} {'documented':>10} {'failed':>7} {'total':>6} {'rate':>7}")
    for mode, passed, concrete, failed, total, rate in summary_rows(outcomes):
        print(f"{mode:10} {passed:7} {concrete:10} {failed:7} {total:6} {rate:6.1f}%")
    failing = [o for o in outcomes if o.status == "fail"]
    for o in failing if ns.verbose or len(failing) <= 200 else failing[:200]:
        print(f"FAIL {key(o)}: {o.reason}")
    if ns.write:
        with open(DOC_PATH, "w") as f:
            f.write(report(outcomes))
        print(f"wrote {os.path.relpath(DOC_PATH, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
