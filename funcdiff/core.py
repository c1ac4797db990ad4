"""The core of funcdiff: abstract values, primitives, ``bind``, traces and tracers.

Every operation funcdiff performs is a ``Primitive`` applied with ``bind``.
``bind`` looks at its arguments, finds the innermost active transform whose
tracers appear among them (the *top trace*), and hands the primitive to that
trace's ``process_primitive``. With no tracers and no staging in progress, the
primitive's numpy ``impl`` runs directly: that is the eager fast path.

Transforms nest through a stack of ``MainTrace`` records. Each transform call
pushes a fresh record with its own level, and a trace only unpacks tracers
created by its own record; tracers of outer (lower) levels are treated as
constants. That is what rules out perturbation confusion.
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import sys
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import backends, dtypes
from funcdiff.roles import BROADCAST
from funcdiff.errors import (ConcretizationError, DifferentiationError,
                             FloatingPointCheckError, FunctionalDiffError, InvalidArgumentError,
                             TracerConversionError)

# ---------------------------------------------------------------------------
# Abstract values

_SHORT_DTYPE = {
    "float64": "f64", "float32": "f32", "float16": "f16",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
    "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8",
    "bool": "bool", "complex128": "c128", "complex64": "c64",
}


class ShapedArray:
    """The abstract value of an array: its shape and dtype, nothing more."""

    __slots__ = ("shape", "dtype")
    array_abstraction_level = 1

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def str_short(self) -> str:
        name = _SHORT_DTYPE.get(self.dtype.name, self.dtype.name)
        return f"{name}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapedArray({self.str_short()})"


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of ``shapes``, or None when they do not broadcast."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            d = s[i - ndim + len(s)] if i >= ndim - len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    return None
                size = d
        out.append(size)
    return tuple(out)


_SCALAR_TYPES = {float: np.dtype(np.float64), int: np.dtype(np.int64),
                 bool: np.dtype(np.bool_), complex: np.dtype(np.complex128)}


_checked_dtypes: dict[np.dtype, np.dtype] = {}  # dtypes check_dtype has accepted
# The aval of every value of a scalar type (Python scalars, numpy scalar types seen
# so far). Avals are never mutated, so one object serves every scalar of a type.
scalar_avals: dict[type, ShapedArray] = {t: ShapedArray((), d) for t, d in _SCALAR_TYPES.items()}
array_avals: dict[tuple, ShapedArray] = {}  # by (shape, dtype) of the arrays seen so far


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer, numpy array, numpy scalar or Python scalar.

    Complex values are accepted: they are intermediates (of funcdiff.numpy.fft);
    the api layer keeps them out of transform inputs.
    """
    t = type(x)
    if t is np.ndarray:
        key = (x.shape, x.dtype)
        aval = array_avals.get(key)
        if aval is None:
            dtype = _checked_dtypes.get(x.dtype)
            if dtype is None:
                dtype = _checked_dtypes[x.dtype] = dtypes.check_dtype(x.dtype, allow_complex=True)
            aval = ShapedArray(x.shape, dtype)
            if len(array_avals) < 4096:
                array_avals[key] = aval
        return aval
    aval = scalar_avals.get(t)
    if aval is not None:
        return aval
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, (np.ndarray, np.generic)):
        dtype = _checked_dtypes.get(x.dtype)
        if dtype is None:
            dtype = _checked_dtypes[x.dtype] = dtypes.check_dtype(x.dtype, allow_complex=True)
        if isinstance(x, np.generic):
            aval = scalar_avals[t] = ShapedArray((), dtype)
            return aval
        return ShapedArray(x.shape, dtype)
    backend = backends.backend_of(x)
    if backend is not None:  # a dask, cupy, torch ... array: the backends module knows it
        return ShapedArray(backends.static_shape(x, backend), dtypes.check_dtype(
            backends.numpy_dtype(x.dtype), allow_complex=True))
    raise InvalidArgumentError(
        f"funcdiff expected an array, a tracer or a Python scalar, but got "
        f"{type(x).__name__}: {x!r:.80}. Convert it with numpy.asarray first.")


def raise_to_shaped(aval: ShapedArray) -> ShapedArray:
    return aval


# ---------------------------------------------------------------------------
# Primitives


class Primitive:
    """An operation funcdiff knows, with one slot per rule.

    Slots: ``impl`` (numpy), ``abstract_eval`` (avals -> aval or list of avals),
    ``jvp`` ((primals, tangents, **params) -> (primal_out, tangent_out)),
    ``transpose`` (for linear primitives: (ct, *args, **params) -> cotangents),
    ``batch`` ((vals, dims, **params) -> (out, out_dim)), ``cost``
    ((avals_in, **params) -> dict with 'flops' and 'bytes') and, optionally,
    ``vjp`` ((needed, out, *primals, **params) -> pullback, a function from
    the output cotangent to one cotangent per primal), the eager reverse-mode
    rule of ``interpreters.tape``; cards derive it from the primitive's
    derivative, never state it twice. Elementwise cards also set
    ``vjp_factor`` ((i, out, *primals, **params) -> d, so that operand ``i``,
    when it has the output's shape, has the cotangent ``ct * d``; None when
    that is ``ct`` itself, False when it is not a plain product): the tape's
    cheapest node. ``batched_transpose`` (optional, bilinear primitives) is
    ``transpose`` for a concrete cotangent with a leading batch axis, giving
    cotangents batched the same way; like ``impl`` it evaluates with numpy and
    is never traced: jacrev's pass over the tape uses it instead of running
    ``transpose`` under vmap (it may also be handed a ``DiagonalBatch``, the
    scaled basis of a vector output, and return None when it has no shortcut
    for it).
    A primitive that has no derivative by nature (comparisons, argmax, floor)
    is declared with ``nondifferentiable = True`` instead of a jvp rule.
    ``tape_rule`` (optional; control flow and checkpoint: ``(trace, args,
    **params) -> outputs``, or None to decline) runs the primitive on the eager
    tape by its definition, a loop's iterations recorded one by one
    (``interpreters.tape_control`` owns its signature and helpers).

    Facts the optimisation passes and the compiler read are declared here too,
    on the card, and looked up by object: ``traits`` (a frozenset of ``Trait``s,
    each defined by the layer that reads it: commutative, zero-preserving, ...),
    ``rewrites`` (the algebraic rewrites of an equation of this primitive, as
    data the passes run), ``lowering`` (the compiler's numpy source for an
    equation) and ``scalar_lowering`` (its Python-float form in all-scalar
    programs). Their signatures belong to the modules that run them.
    """

    __slots__ = ("name", "multiple_results", "impl", "raw_impl", "impl_validator",
                 "abstract_eval", "jvp", "transpose", "batch", "cost", "vjp", "vjp_factor",
                 "batched_transpose", "nondifferentiable", "linear", "traits", "rewrites",
                 "lowering", "scalar_lowering", "tape_rule", "bind", "__weakref__")

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable | None = None
        self.abstract_eval: Callable | None = None
        self.jvp: Callable | None = None
        self.transpose: Callable | None = None
        self.batch: Callable | None = None
        self.cost: Callable | None = None
        self.vjp: Callable | None = None
        self.vjp_factor: Callable | None = None
        self.batched_transpose: Callable | None = None
        self.nondifferentiable = False
        self.linear = False
        self.traits: frozenset[Trait] = frozenset()
        self.rewrites: tuple = ()
        self.lowering: Callable | None = None
        self.scalar_lowering: Callable | None = None
        self.tape_rule: Callable | None = None
        self.bind = binder(self)  # prim.bind(*args, **params) applies the primitive
        registry[name] = self

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "impl":
            # An impl whose failures a shape rule reports (cards.checked_impl) is also
            # kept without that wrapper: the eager hot paths call ``raw_impl`` and,
            # when it raises, ``impl_failed`` (a Python frame fewer per operation).
            object.__setattr__(self, "raw_impl", getattr(value, "unchecked", value))
            object.__setattr__(self, "impl_validator", getattr(value, "validator", None))

    def __repr__(self) -> str:
        return self.name


def impl_failed(primitive: Primitive, args: Sequence[Any], params: dict) -> None:
    """Called in an ``except`` block around ``primitive.raw_impl(*args, **params)``:
    the failure reported as ``primitive.impl`` reports it (``report_failure``)."""
    report_failure(primitive.impl_validator, args, params)


def report_failure(validator: "Callable | Primitive | None", args: Sequence[Any],
                   params: dict) -> None:
    """Called in an ``except`` block around an impl's call: raise the funcdiff error
    that ``validator`` (a shape rule, or a primitive whose rule is looked up then)
    gives for these arguments' avals. When it gives none, or there is no
    validator, or the impl raised a funcdiff error itself, return: the caller
    re-raises the impl's error."""
    if validator is None or isinstance(sys.exc_info()[1], FunctionalDiffError):
        return
    rule = validator.abstract_eval if isinstance(validator, Primitive) else validator
    rule(*[get_aval(a) for a in args], **params)


registry: dict[str, Primitive] = {}


class Trait:
    """A fact a card can state about its primitive (``prim.traits``), read by one layer.

    The layer that reads a trait defines it, with a sentence saying what it
    promises; cards import it and declare it. Traits are compared by identity.
    """

    __slots__ = ("name", "doc")

    def __init__(self, name: str, doc: str):
        self.name = name
        self.doc = doc

    def __repr__(self) -> str:
        return f"Trait({self.name})"


def all_primitives() -> dict[str, Primitive]:
    """Every primitive defined so far, by name."""
    return dict(registry)


# ---------------------------------------------------------------------------
# The trace stack


class MainTrace:
    """One active transform: its level in the stack, its trace type and its data."""

    __slots__ = ("level", "trace_type", "global_data", "trace")

    def __init__(self, level: int, trace_type: type, global_data: Any):
        self.level = level
        self.trace_type = trace_type
        self.global_data = global_data
        self.trace = trace_type(self)

    def __repr__(self) -> str:
        return f"MainTrace({self.level}, {self.trace_type.__name__})"


class Trace:
    """How one transform interprets primitives applied to its tracers."""

    __slots__ = ("main",)
    raw_args = False  # True: bind passes arguments as they are, without full_raise
    stages = False  # True: records operations on abstract values instead of running them

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define pure")

    def lift(self, val: Any) -> Any:
        return self.pure(val)

    def constant_tracer(self, val: Any) -> "Tracer":
        """A tracer of this trace holding the constant ``val`` (``pure`` where that
        already gives one; traces whose ``pure`` keeps plain values override it)."""
        return self.pure(val)

    def full_raise(self, val: Any) -> Any:
        if not isinstance(val, Tracer):
            return self.pure(val)
        main = val._trace.main
        if main is self.main:
            return val
        if main.level < self.main.level:
            return self.lift(val)
        raise FunctionalDiffError(
            f"a value traced by an inner transform ({main.trace_type.__name__}) "
            f"escaped into an outer one ({self.main.trace_type.__name__}). This "
            "happens when a function stores a tracer in a global or a closure that "
            "outlives the transform; return the value instead.")

    def process_primitive(self, primitive: Primitive, tracers: list, params: dict) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define process_primitive")


class EvalTrace(Trace):
    """The bottom of every stack: runs the numpy implementation."""

    __slots__ = ()

    def pure(self, val: Any) -> Any:
        return val

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        if float_checks:
            return checked_impl(primitive, tracers, params)
        return primitive.impl(*tracers, **params)


trace_stack: list[MainTrace] = [MainTrace(0, EvalTrace, None)]
dynamic: list[MainTrace] = [trace_stack[0]]  # innermost staging that captures all ops


class new_main:
    """Push a new transform onto the trace stack for the duration of a
    ``with`` block, which receives its ``MainTrace``.

    A *dynamic* main (used by make_jaxpr and jit) captures every operation,
    even those on constants, so they are staged rather than evaluated. (A
    class rather than a generator-based context manager: every transform
    enters one per call.)

    On exit the main lets go of its trace (``main.trace`` becomes None): the
    trace refers to its main, so the pair would otherwise be a reference
    cycle, and everything the trace recorded (a tape's residual arrays, staged
    equations) would wait for Python's cycle collector instead of being freed
    when the transform returns. A tracer that escapes keeps its trace, whose
    main still tells ``bind`` that the transform is over.
    """

    __slots__ = ("main", "dynamic")

    def __init__(self, trace_type: type, global_data: Any = None, dynamic: bool = False):
        self.main = MainTrace(len(trace_stack), trace_type, global_data)
        self.dynamic = dynamic

    def __enter__(self) -> MainTrace:
        trace_stack.append(self.main)
        if self.dynamic:
            dynamic.append(self.main)
        return self.main

    def __exit__(self, *exc_info) -> None:
        if self.dynamic:
            dynamic.pop()
        trace_stack.pop()
        self.main.trace = None  # break the cycle main <-> trace (see above)


def _level_of(main: MainTrace) -> int:
    return main.level


def find_top_trace(args: Sequence[Any]) -> Trace:
    """The trace ``bind`` would hand a primitive applied to ``args``."""
    top = dynamic[-1]
    for x in args:
        if isinstance(x, Tracer):
            main = x._trace.main
            if main.level > top.level:
                top = main
    return top.trace


def innermost_constant(value: Any) -> Any:
    """``value`` as a constant of the innermost transform (a tracer, which accepts
    ``x[idx] = v`` of any traced ``v``); outside transforms, itself. For the array
    API namespace, whose arrays inside a transform are tracers, and whose creation
    functions' results array-API libraries fill in place."""
    main = trace_stack[-1]
    if main.level == 0:
        return value
    return main.trace.constant_tracer(value).fresh_copy()


def constant_of(tracer: Tracer, value: Any) -> Tracer:
    """A tracer of ``tracer``'s transform holding the constant ``value``."""
    return tracer._trace.main.trace.constant_tracer(value)


def lock_arguments(args: Sequence[Any], transform: str) -> None:
    """Refuse ``x[idx] = v`` on the tracers a transform passes to the user's function:
    numpy would change the caller's array, which funcdiff cannot."""
    reason = None
    for x in args:
        if isinstance(x, Tracer):
            if reason is None:
                reason = (f"it is an argument of {transform}, and funcdiff never changes "
                          "the caller's arrays")
            x.write_lock = reason


def staging_active() -> bool:
    """Whether operations are being staged rather than run: the innermost dynamic
    transform (jit, make_jaxpr) is one whose trace ``stages``. A rule that must
    choose between running now and staging a program (a while loop's reverse
    mode) asks here, and never names an interpreter."""
    return dynamic[-1].trace.stages


def bind(primitive: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``primitive`` to ``args``: the one point where every operation passes.

    Arrays are positional, settings (params) keyword-only and hashable.
    """
    return primitive.bind(*args, **params)


def binder(primitive: Primitive) -> Callable[..., Any]:
    """``bind`` specialised to one primitive (``prim.bind`` and the operation
    functions of the primitive modules): find the top trace among the
    arguments; with none and no staging active, run the numpy impl."""
    def bind_primitive(*args: Any, **params: Any) -> Any:
        top = dynamic[-1]  # find_top_trace's search, inline: this is the hottest path
        for x in args:
            if isinstance(x, Tracer) and x._trace.main.level > top.level:
                top = x._trace.main
        if top.level == 0:
            if float_checks:  # fd.config's debug_nans / debug_infs
                return checked_impl(primitive, args, params)
            try:  # (an empty **params costs a dict: most operations have none)
                return (primitive.raw_impl(*args, **params) if params
                        else primitive.raw_impl(*args))
            except Exception:
                impl_failed(primitive, args, params)
                raise
        if top is not trace_stack[-1]:  # an outer transform, or one that has returned
            level = top.level
            if level >= len(trace_stack) or trace_stack[level] is not top:
                raise _escaped_error(top)
        trace = top.trace
        if trace.raw_args:
            return trace.process_primitive(primitive, args, params)
        return trace.process_primitive(primitive, [trace.full_raise(a) for a in args], params)
    return bind_primitive


def _escaped_error(main: MainTrace) -> FunctionalDiffError:
    return FunctionalDiffError(
        f"a value traced by a transform ({main.trace_type.__name__}) was used after that "
        "transform had returned. This happens when a function stores a tracer in a "
        "global, a list or a closure that outlives the transform; return the value "
        "instead (as an output, or an aux output with has_aux=True).")


def cur_level() -> int:
    return len(trace_stack) - 1


# ---------------------------------------------------------------------------
# Tracers


# with the separator, so that a sibling such as numpy_financial is the user's code
_FUNCDIFF_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep


def user_frame() -> str:
    """``file:line`` of the innermost stack frame outside funcdiff and numpy (the
    user's line, also when a numpy routine did the work), for error messages."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if (not filename.startswith((_FUNCDIFF_DIR, _NUMPY_DIR))
                and "contextlib" not in filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


class Tracer:
    """A value flowing through a transform; it behaves like a numpy array.

    The numpy layer (``funcdiff.numpy``) adds the arithmetic operators and
    array methods; conversion to a Python value works only when the tracer's
    value is concrete.

    ``x[idx] = v`` rebinds the tracer to ``x.at[idx].set(v)`` (code written for
    numpy and array-API libraries fill arrays in place), except where numpy's
    answer would differ: a tracer that is a view, or has views, of another
    (numpy would write through to the shared memory; funcdiff's views are
    copies) and a transform's argument (funcdiff never changes the caller's
    arrays). Those carry a ``write_lock``, the reason the write is refused.
    """

    __slots__ = ("_trace", "write_lock", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError(f"{type(self).__name__} must define aval")

    def to_concrete(self, operation: str) -> Any:
        """The concrete numpy value behind this tracer, or a ConcretizationError."""
        raise concretization_error(self, operation)

    def carries_derivative(self) -> bool:
        """Whether the value depends on an input that is being differentiated."""
        return False

    def to_number(self, operation: str) -> Any:
        """The concrete value, for a conversion to a Python or numpy number.

        A value that carries a derivative never converts: the number would
        drop the derivative without a trace (``float(x)``, ``math.exp(x)``,
        ``a[i] = x`` on a numpy array). Integer and boolean values, and values
        that do not depend on a differentiated input, convert when concrete.
        """
        if self.carries_derivative():
            raise derivative_dropped_error(self, operation)
        try:
            return self.to_concrete(operation)
        except ConcretizationError as e:
            raise ConcretizationError(f"{e} {_BUILD_ARRAYS}") from None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    def __len__(self) -> int:
        if not self.aval.shape:
            raise InvalidArgumentError("len() of a 0-d array is not defined")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise InvalidArgumentError("iteration over a 0-d array is not defined")
        return (self[i] for i in range(self.aval.shape[0]))

    def __bool__(self) -> bool:
        return bool(backends.computed(self.to_concrete("bool()"), "bool()"))

    def __float__(self) -> float:
        return float(backends.computed(self.to_number(
            "float() (also called by math functions and by storing into a numpy array, "
            "a[i] = x)"), "float()"))

    def __int__(self) -> int:
        return int(backends.computed(self.to_number("int()"), "int()"))

    def __index__(self) -> int:
        value = backends.computed(self.to_number("use as an index"), "use as an index")
        return operator.index(value.item() if hasattr(value, "item") else value)

    def __complex__(self) -> complex:
        return complex(self.to_number("complex() (also called by cmath functions)"))

    def item(self) -> Any:
        return np.asarray(self.to_number("item()")).item()

    def tolist(self) -> Any:
        return np.asarray(self.to_number("tolist()")).tolist()

    def __hash__(self):
        raise InvalidArgumentError(
            "funcdiff tracers are unhashable, like numpy arrays. To use a traced "
            "value as a static argument of jit, pass a Python value instead.")

    def __setitem__(self, idx, value):
        lock = getattr(self, "write_lock", None)
        if lock is not None and (not isinstance(lock, ViewLink) or lock.active()):
            raise InvalidArgumentError(
                f"x[idx] = v (at {user_frame()}) cannot write into x: {lock}. Use the "
                "functional update `x = x.at[idx].set(v)`, or write into a copy "
                "(`x = x.copy()` first).")
        updated = self.at[idx].set(value)
        if type(updated) is not type(self) or updated._trace.main is not self._trace.main:
            raise InvalidArgumentError(
                f"x[idx] = v (at {user_frame()}): v is traced by a transform that began "
                "after x was made, so x cannot hold it. Use the functional update "
                "`x = x.at[idx].set(v)` instead.")
        self.take_state(updated)

    def take_state(self, other: "Tracer") -> None:
        """Become ``other`` (a tracer of the same type and trace); the lock stays."""
        for cls in type(other).__mro__:
            for name in cls.__dict__.get("__slots__", ()):
                if name != "write_lock" and not name.startswith("__") and hasattr(other, name):
                    setattr(self, name, getattr(other, name))

    def fresh_copy(self) -> "Tracer":
        """A new, unlocked tracer holding this one's value (``x.copy()``: writes to
        either leave the other unchanged)."""
        copy = object.__new__(type(self))
        copy.take_state(self)
        return copy

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>"


class ViewLink:
    """A tracer's ``write_lock`` while it shares memory in numpy's terms: it is a view
    of another tracer, or others are views of it. Weak references, so that the lock
    lifts when the others are gone (``y[1:] += 1`` takes a view that dies at once)."""

    __slots__ = ("reason", "others")

    def __init__(self, reason: str):
        self.reason = reason
        self.others: list = []

    def active(self) -> bool:
        return any(ref() is not None for ref in self.others)

    def __str__(self) -> str:
        return self.reason


def concretization_error(tracer: Tracer, operation: str) -> ConcretizationError:
    return ConcretizationError(
        f"{operation} needs a concrete value, but it received an abstract "
        f"tracer {tracer.aval.str_short()} (at {user_frame()}). Python control "
        "flow on traced values cannot be staged under jit or make_jaxpr. Use "
        "fd.lax.cond / fd.lax.while_loop / fd.numpy.where for value-dependent "
        "branches, or mark the argument static with static_argnums.")


_BUILD_ARRAYS = ("To build an array from traced values use funcdiff arrays (x.at[i].set(v), "
                 "fnp.stack, fnp.array) rather than assigning into a numpy array; compute with "
                 "funcdiff.numpy (fnp.exp, not math.exp).")


def derivative_dropped_error(tracer: Tracer, operation: str) -> TracerConversionError:
    return TracerConversionError(
        f"{operation} would turn the traced value {tracer.aval.str_short()}, which carries a "
        f"derivative, into a plain number (at {user_frame()}), and the derivative would be "
        f"dropped without a trace. {_BUILD_ARRAYS} If the value is meant to be a constant, "
        "convert fd.stop_gradient(x) instead.")


def is_array_like(x: Any) -> bool:
    """Whether a transform takes ``x`` as an array: a tracer, a numpy array or scalar, a
    Python number, or an array of another supported library."""
    return (isinstance(x, (Tracer, np.ndarray, np.generic)) or type(x) in (float, int, bool)
            or backends.backend_of(x) is not None)


def concrete_value(x: Any, operation: str) -> Any:
    """``x`` as a concrete numpy value, unwrapping tracers whose value is known."""
    if isinstance(x, Tracer):
        return x.to_concrete(operation)
    return x


# ---------------------------------------------------------------------------
# Floating-point checks: fd.config's debug_nans and debug_infs

# Set by fd.config; read where impls run (bind's eager path; the tape picks its
# checked trace when it starts), so that with both settings off nothing else is paid.
float_checks = False  # debug_nans or debug_infs
nans_checked = False
infs_checked = False


def impls_run_directly() -> bool:
    """Whether ``bind`` on concrete values calls the impl and nothing else: no
    transform stages operations and no float check is on. A rule handed numpy
    arrays (the eager tape's backward pass) may then make the impl's numpy call
    itself, skipping bind's dispatch, with the same result."""
    return len(dynamic) == 1 and not float_checks


class FloatContext:
    """What is being computed while a check runs: the backward pass of the forward
    ``operation`` applied at ``line`` for a ``cotangent`` (a description), or, with
    ``operation`` None, a staged equation replayed from ``line`` (jit's re-run)."""

    __slots__ = ("operation", "line", "cotangent")

    def __init__(self, operation: str | None, line: str, cotangent: str = ""):
        self.operation = operation
        self.line = line
        self.cotangent = cotangent


float_context: list[FloatContext] = []  # innermost last


def _holds(x: Any, nan: bool, inf: bool) -> bool:
    if isinstance(x, Tracer):
        return False
    if isinstance(x, float):  # Python floats and numpy float64 scalars
        return (nan and math.isnan(x)) or (inf and math.isinf(x))
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        return False
    return bool((nan and np.isnan(x).any()) or (inf and np.isinf(x).any()))


def bad_floats(x: Any) -> bool:
    """Whether the concrete value ``x`` holds a NaN (with debug_nans) or an inf (with
    debug_infs); tracers and integer values never do."""
    return _holds(x, nans_checked, infs_checked)


def holds_inf(x: Any) -> bool:
    """Whether the concrete value ``x`` holds an inf (said of a cotangent in messages)."""
    return _holds(x, False, True)


def describe_value(x: Any) -> str:
    """``f64[3]``: the aval of ``x`` in short, for messages."""
    try:
        return get_aval(x).str_short()
    except FunctionalDiffError:
        return type(x).__name__


def check_floats(primitive: Primitive | None, operands: Sequence[Any],
                 outs: Sequence[Any]) -> None:
    """Raise FloatingPointCheckError when one of ``outs`` holds a NaN (an inf) and none of
    the ``operands`` does: a NaN passed through belongs to the operation that made it.
    ``primitive`` None: ``outs`` are the cotangents of the current backward context."""
    for o in outs:
        if bad_floats(o):
            if not any(bad_floats(a) for a in operands):
                raise float_error(primitive, operands, outs)
            return


def checked_impl(primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
    """``primitive.impl`` with its outputs checked (bind's eager path while checks are on)."""
    out = primitive.impl(*args, **params)
    check_floats(primitive, args, out if primitive.multiple_results else (out,))
    return out


_CAUSES = {"NaN": "A NaN starts where an operation leaves its domain (log or sqrt of a "
                  "negative number, 0/0, inf - inf, 0 * inf)",
           "inf": "An inf starts at a division by zero, a log of 0 or an overflow "
                  "(exp of a large number)"}


def float_error(primitive: Primitive | None, operands: Sequence[Any],
                outs: Sequence[Any]) -> FloatingPointCheckError:
    kind = "NaN" if nans_checked and any(_holds(o, True, False) for o in outs) else "inf"
    free = " and ".join(k for k, on in (("NaN", nans_checked), ("inf", infs_checked)) if on)
    context = float_context[-1] if float_context else None
    line = context.line if context is not None else user_frame()
    if context is None or context.operation is None:
        head = f"{primitive.name} produced {kind} at {line}"
    elif context.cotangent:
        inner = f" in {primitive.name}" if primitive is not None else ""
        head = (f"in the backward pass, the derivative of {context.operation} (applied at "
                f"{line}), given a cotangent {context.cotangent}, produced {kind}{inner}")
    else:
        head = (f"computing the derivative of {context.operation} (applied at {line}), "
                f"{primitive.name} produced {kind}")
    setting = "debug_nans" if kind == "NaN" else "debug_infs"
    return FloatingPointCheckError(
        f"{setting}: {head}, from operands ({', '.join(map(describe_value, operands))}) "
        f"free of {free}. {_CAUSES[kind]}: guard that operation's input (fnp.where on the "
        "input, not only on the output). The check runs because "
        f"fd.config.{setting} is True; fd.config.update({setting!r}, False) turns it off.")


# ---------------------------------------------------------------------------
# Symbolic zeros


class Zero:
    """A tangent or cotangent known to be zero; it is never materialised
    unless a user-facing boundary needs an array."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_value(x: Any) -> "Zero":
        return Zero(tangent_aval(get_aval(x)))

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of float and complex values share their aval; others' are float0 zeros."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0)



def zeros_array(aval: ShapedArray) -> Any:
    """A materialised zero of ``aval`` (built with a primitive so it can be traced)."""
    return BROADCAST.primitive.bind(np.asarray(0, dtype=aval.dtype), shape=aval.shape,
                                    broadcast_dimensions=())


def instantiate(t: Any) -> Any:
    return zeros_array(t.aval) if type(t) is Zero else t


_counter = itertools.count()


def fresh_id() -> int:
    return next(_counter)


__all__ = [
    "ShapedArray", "get_aval", "Primitive", "bind", "Trace", "Tracer", "MainTrace",
    "EvalTrace", "new_main", "find_top_trace", "Zero", "instantiate",
    "concretization_error", "concrete_value", "DifferentiationError",
]
