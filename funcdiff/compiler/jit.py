"""jit: trace a function once per input signature and replay it compiled.

``Jitted`` caches, per (pytree structure, shapes, dtypes, static values), the
traced program and its compiled form (``evaluator.compiled``: optimised, then
compiled by ``compile.py``). Called on plain arrays it runs the compiled
program directly; called on tracers of an enclosing transform it binds the
call primitive (``interpreters.call``), whose rules transform the inner
program, so jit composes with every transform in every order.

This module holds ``jit`` and ``Jitted``: checking and splitting the arguments
(static ones are part of the cache key), tracing with closure conversion, and
calling. The cache entries and the per-call fast path that finds one without
tracing are in ``funcdiff.compiler.cache``; ``Lowered``, what ``Jitted.lower``
returns, is in ``funcdiff.compiler.lowered``.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import re
import sys
import warnings
from typing import Any, Callable, Sequence

from funcdiff.bridge import call_at_boundary
from funcdiff import core as _core
from funcdiff.arguments.flattening import OutInfo, as_leaf, check_output, raise_conversion_cause
from funcdiff.compiler.cache import MISS, CacheEntry, compile_guard, fast_flatten
from funcdiff.compiler.evaluator import compiled
from funcdiff.compiler.lowered import Lowered
from funcdiff.core import ShapedArray, Tracer, get_aval, lock_arguments
from funcdiff.configuration import config
from funcdiff.errors import ConcretizationError, InvalidArgumentError, RetraceWarning
from funcdiff.interpreters.call import call_p
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.ir import ClosedJaxpr, Jaxpr
from funcdiff.tree_util import tree_flatten, tree_unflatten

logger = logging.getLogger("funcdiff")


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by its caller name the user's line."""
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _argument_of(path: str) -> str:
    """A leaf path of jit's ``(args, kwargs)`` tree, in words: ``[0][1]['w']`` is
    argument 1's leaf ``['w']``, ``[1]['k']`` keyword argument k."""
    match = re.match(r"\[(0|1)\]\[([^\]]+)\](.*)", path)
    if match is None:
        return path or "argument"
    kind, key, rest = match.groups()
    name = f"argument {key}" if kind == "0" else f"keyword argument {key}"
    return name + (f" leaf {rest}" if rest else "")


def _describe_avals(avals: Sequence[ShapedArray]) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ("," if len(avals) == 1 else "") + ")"


class Jitted:
    """A function compiled per input signature; see ``jit``.

    Attributes:
      trace_count: how many times ``f`` has been traced (once per new signature).
    """

    def __init__(self, f: Callable, static_argnums: Sequence[int], static_argnames: Sequence[str]):
        self.f = f
        self.trace_count = 0
        self._cache: dict = {}
        self._fast: dict = {}
        self._guard: Callable[[tuple], Any] | None = None  # the last signature, as code
        self._name = getattr(f, "__name__", type(f).__name__)
        self._last_signature = None  # (tree, avals) of the last trace, for RetraceWarning
        self._warned_retrace = False
        functools.update_wrapper(self, f, updated=())  # never copy f's __dict__ (f may be Jitted)
        try:
            self._params = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):  # builtins and some callables have no signature
            self._params = None
        self.static_argnums, self.static_argnames = self._check_static(static_argnums,
                                                                        static_argnames)
        self._static_for: dict[int, frozenset] = {}

    # -- argument checking ---------------------------------------------------------

    def _positional_names(self) -> list[str] | None:
        """Names of the positional parameters, or None if f takes *args."""
        if self._params is None:
            return None
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in self._params):
            return None
        return [p.name for p in self._params if p.kind in kinds]

    def _check_static(self, nums, names):
        for i in nums:
            if type(i) is not int:
                raise InvalidArgumentError(
                    f"jit({self._name}): static_argnums must be ints, but got {i!r}. Pass "
                    "positions of arguments, e.g. static_argnums=(1,).")
        for n in names:
            if type(n) is not str:
                raise InvalidArgumentError(
                    f"jit({self._name}): static_argnames must be strings, but got {n!r}. "
                    "Pass parameter names, e.g. static_argnames=('mode',).")
        positional = self._positional_names()
        nums, names = tuple(nums), tuple(names)
        if self._params is not None and not any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in self._params):
            known = [p.name for p in self._params]
            for n in names:
                if n not in known:
                    raise InvalidArgumentError(
                        f"jit({self._name}): static_argnames contains {n!r}, but "
                        f"{self._name} has no parameter of that name (its parameters: "
                        f"{', '.join(known) or 'none'}). Fix the name.")
        if positional is not None:
            for i in nums:
                if not -len(positional) <= i < len(positional):
                    raise InvalidArgumentError(
                        f"jit({self._name}): static_argnums contains {i}, but {self._name} "
                        f"takes {len(positional)} positional argument(s) "
                        f"({', '.join(positional) or 'none'}); static_argnums must be in "
                        f"[{-len(positional)}, {len(positional)}).")
            # a parameter named in either list is static however it is passed
            nums = tuple(sorted({i % len(positional) for i in nums}
                                | {positional.index(n) for n in names if n in positional}))
            names = tuple(dict.fromkeys(names + tuple(positional[i] for i in nums)))
        return nums, names

    def _static_positions(self, nargs: int) -> frozenset:
        static = self._static_for.get(nargs)
        if static is None and self._positional_names() is not None:
            # checked against the signature already; a static parameter not passed
            # positionally was passed by name (static_argnames) or takes its default
            static = frozenset(i for i in self.static_argnums if i < nargs)
            self._static_for[nargs] = static
        if static is None:
            for i in self.static_argnums:
                if not -nargs <= i < nargs:
                    raise InvalidArgumentError(
                        f"jit({self._name}): static_argnums contains {i}, but "
                        f"{self._name} was called with {nargs} positional argument(s). "
                        "Pass that argument positionally, or fix static_argnums.")
            static = self._static_for[nargs] = frozenset(i % nargs for i in self.static_argnums)
        return static

    def _arg_name(self, i: int) -> str:
        positional = self._positional_names()
        if positional is not None and i < len(positional):
            return f"argument {i} ({positional[i]!r})"
        return f"argument {i}"

    def _unhashable(self, what: str, v: Any) -> InvalidArgumentError:
        return InvalidArgumentError(
            f"jit({self._name}): static {what} is an unhashable {type(v).__name__}: {v!r:.60}. "
            "Static arguments are cache keys and must be hashable: pass a tuple instead of "
            "a list, a frozenset instead of a set, or make it a non-static (array) argument.")

    def _non_array(self, what: str, fix: str, leaf: Any) -> InvalidArgumentError:
        kind = type(leaf).__name__
        return InvalidArgumentError(
            f"jit({self._name}): {what} is {'an' if kind[0] in 'aeiou' else 'a'} {kind} "
            f"({leaf!r:.60}), but "
            "non-static arguments must be arrays, Python scalars or pytrees of them, "
            f"because jit traces them as abstract arrays. {fix}")

    def _check_leaves(self, args: tuple, static: frozenset, dyn_kw: dict) -> None:
        """Raise an error naming the first dynamic argument with a non-array leaf."""
        dyn = [(self._arg_name(i), f"static_argnums={i}", a)
               for i, a in enumerate(args) if i not in static]
        dyn += [(f"argument {k!r}", f"static_argnames={k!r}", v) for k, v in dyn_kw.items()]
        for what, how, value in dyn:
            sub, _ = tree_flatten(value)
            for leaf in sub:
                try:
                    as_leaf(leaf, "jit", what)
                except InvalidArgumentError:
                    whole = len(sub) == 1 and sub[0] is value
                    fix = (f"Mark it static (jit({self._name}, {how})) if it is a setting "
                           "rather than data, or close over it." if whole else
                           "Convert that leaf with numpy.asarray, or close over it.")
                    raise self._non_array(what if whole else f"a leaf of {what}", fix,
                                          leaf) from None

    # -- tracing and caching ---------------------------------------------------

    def _split(self, args: tuple, kwargs: dict):
        static = self._static_positions(len(args))
        static_vals = []
        for i in sorted(static):
            v = args[i]
            try:
                hash(v)
            except TypeError:
                raise self._unhashable(self._arg_name(i), v) from None
            static_vals.append((i, type(v), v))
        static_kw, dyn_kw = {}, {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                try:
                    hash(v)
                except TypeError:
                    raise self._unhashable(f"argument {k!r}", v) from None
                static_kw[k] = v
            else:
                dyn_kw[k] = v
        dyn_args = [a for i, a in enumerate(args) if i not in static]
        return static, tuple(static_vals), static_kw, dyn_args, dyn_kw

    def _note_retrace(self, in_tree, avals) -> None:
        """Warn once when this function keeps being traced for new shapes or dtypes."""
        previous, self._last_signature = self._last_signature, (in_tree, avals)
        if (self._warned_retrace or previous is None
                or self.trace_count <= config.retrace_warning_threshold):
            return
        self._warned_retrace = True
        changed = ""
        if previous[0] == in_tree:
            paths = in_tree.leaf_paths()
            diffs = [f"{_argument_of(paths[i])}: {a.str_short()} -> {b.str_short()}"
                     for i, (a, b) in enumerate(zip(previous[1], avals)) if a != b]
            changed = " The last change: " + "; ".join(diffs[:3]) + "."
        warnings.warn(
            f"jit({self._name}) has been traced {self.trace_count} times: every new "
            f"argument shape or dtype compiles it again.{changed} Keep the shapes fixed "
            "(pad to a few sizes), or pass the changing value as a static argument "
            "(static_argnums) if it is small and few-valued. Set "
            "fd.config.update('retrace_warning_threshold', n) to change when this warns.",
            RetraceWarning, stacklevel=_user_stacklevel())

    def _entry(self, args: tuple, kwargs: dict):
        static, static_vals, static_kw, dyn_args, dyn_kw = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((tuple(dyn_args), dyn_kw))
        try:
            leaves = [as_leaf(x, "jit", "an argument leaf") for x in leaves]
        except InvalidArgumentError:
            self._check_leaves(args, static, dyn_kw)
            raise
        avals = tuple(get_aval(x) for x in leaves)
        key = (in_tree, avals, static_vals,
               tuple(sorted((k, type(v), v) for k, v in static_kw.items())))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, static, static_kw, in_tree, avals)
            if not entry.closed_over:
                self._cache[key] = entry
        if not entry.closed_over and not kwargs:
            fast = self._fast_key(args)
            if fast is not None:
                self._fast[fast[0]] = entry  # (hashable: the static values were checked)
                if not static and entry.program is not None:
                    self._guard = compile_guard(args, entry)
        return entry, leaves

    def _trace(self, args, static, static_kw, in_tree, avals) -> CacheEntry:
        self.trace_count += 1
        if config.log_compiles:
            logger.warning("funcdiff: tracing jit(%s) for arguments %s (trace %d of it)",
                           self._name, _describe_avals(avals), self.trace_count)
        self._note_retrace(in_tree, avals)
        out_info = OutInfo()
        try:
            closed = trace_to_jaxpr(self._flat_function(args, static, static_kw, in_tree,
                                                        out_info), list(avals))
        except ConcretizationError as e:
            raise ConcretizationError(
                f"jit({self._name}) traced {self._name} at abstract arguments "
                f"{_describe_avals(avals)}, and {e}") from None
        # Closure conversion: tracers of enclosing transforms that f closed over
        # become leading inputs, passed at each call.
        j = closed.jaxpr
        outer = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
        closed_over = [closed.consts[i] for i in outer]
        if outer:
            keep = [i for i in range(len(j.constvars)) if i not in set(outer)]
            closed = ClosedJaxpr(Jaxpr([j.constvars[i] for i in keep],
                                       [j.constvars[i] for i in outer] + list(j.invars),
                                       j.eqns, j.outvars),
                                 [closed.consts[i] for i in keep])
            program = None  # runs only through the call primitive, under the outer trace
        else:
            program = compiled(closed, self._name)
        return CacheEntry(closed, out_info.tree, program, closed_over)

    def _flat_function(self, args, static, static_kw, in_tree, out_info) -> Callable:
        """``f`` as a function of the dynamic leaves, returning its output leaves
        (their structure goes to ``out_info``)."""
        def f_flat(*leaves):
            lock_arguments(leaves, f"jit({self._name})")
            dyn_args, dyn_kw = tree_unflatten(in_tree, leaves)
            it = iter(dyn_args)
            full = [args[i] if i in static else next(it) for i in range(len(args))]
            try:
                out = self.f(*full, **dyn_kw, **static_kw)
            except ValueError as e:
                raise_conversion_cause(e)
                raise
            out_leaves, out_tree = tree_flatten(out)
            out_info.tree, out_info.n = out_tree, len(out_leaves)
            return [check_output(o, f"jit({self._name})", i) for i, o in enumerate(out_leaves)]
        return f_flat

    def _checked_call_of(self, *args, **kwargs):
        return self._checked_call(args, kwargs)

    def _checked_call(self, args: tuple, kwargs: dict):
        """``__call__`` while ``fd.config`` debug_nans or debug_infs is on: the compiled
        program runs; when an output holds a NaN (an inf), ``f`` is traced again with
        each equation's source line and the unoptimised program re-run eagerly with
        the checks, so that the first equation making one raises, naming its line.
        (When none does, the NaN came in with the arguments: the outputs return.)"""
        entry, leaves = self._entry(args, kwargs)
        if (entry.program is None or _core.dynamic[-1].level != 0
                or any(isinstance(x, Tracer) for x in leaves)):
            return entry.unflatten(_core.bind(call_p, *entry.closed_over, *leaves,
                                              jaxpr=entry.jaxpr, name=self._name))
        outs = entry.program(*leaves)
        if any(_core.bad_floats(o) for o in outs):
            static, _, static_kw, dyn_args, dyn_kw = self._split(args, kwargs)
            _, in_tree = tree_flatten((tuple(dyn_args), dyn_kw))
            f_flat = self._flat_function(args, static, static_kw, in_tree, OutInfo())
            closed = trace_to_jaxpr(f_flat, [get_aval(x) for x in leaves], sources=True)
            closed(*leaves)
        return entry.unflatten(outs)

    def _fast_key(self, args: tuple):
        """(key, leaves) for the fast cache, or None where only the general path can
        tell (kwargs, tracers, unregistered containers, a first call)."""
        static = self._static_for.get(len(args))
        if static is None:
            return None
        leaves: list = []
        key: list = [len(args)]
        if not static:
            return (tuple(key), leaves) if fast_flatten(args, leaves, key) else None
        for i, a in enumerate(args):
            if i in static:
                key.append((type(a), a))
            elif not fast_flatten(a, leaves, key):
                return None
        return tuple(key), leaves  # (hashable unless a static value is not: callers check)

    def __call__(self, *args, **kwargs):
        if _core.float_checks:  # fd.config's debug_nans / debug_infs
            return call_at_boundary(self._checked_call_of, args, kwargs, f"jit({self._name})")
        if not kwargs and _core.dynamic[-1].level == 0:
            # the fast paths: a known signature of plain arrays runs its program directly
            if self._guard is not None:
                out = self._guard(args)
                if out is not MISS:
                    return out
            fast = self._fast_key(args)
            if fast is not None:
                try:
                    entry = self._fast.get(fast[0])
                except TypeError:  # an unhashable static argument: the slow path explains
                    entry = None
                if entry is not None:
                    return entry.unflatten(entry.program.fn(*fast[1]))
        # the general path, at the boundary: dask, torch, array_api_strict ... arguments
        return call_at_boundary(self._general_call, args, kwargs, f"jit({self._name})")

    def _general_call(self, *args, **kwargs):
        entry, leaves = self._entry(args, kwargs)
        if (entry.program is not None and _core.dynamic[-1].level == 0
                and not any(isinstance(x, Tracer) for x in leaves)):
            outs = entry.program(*leaves)
        else:
            outs = _core.bind(call_p, *entry.closed_over, *leaves, jaxpr=entry.jaxpr,
                              name=self._name)
        return entry.unflatten(outs)

    def lower(self, *args, **kwargs) -> Lowered:
        """The traced jaxpr, optimised jaxpr and generated source for these arguments.

        >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
        >>> low = fd.jit(lambda x: fnp.sin(x) * 1.0 + 0.0).lower(np.ones(3))
        >>> print(low.optimized_jaxpr)
        { lambda ; a:f64[3]. let
            b:f64[3] = sin a
          in (b,) }
        >>> compiled = low.compile()
        >>> compiled
        Compiled(jit(<lambda>) for (f64[3]) -> (f64[3]))
        >>> compiled(np.zeros(3)).tolist()
        [0.0, 0.0, 0.0]
        """
        entry, _ = self._entry(args, kwargs)
        if entry.program is None:
            entry.program = compiled(entry.jaxpr, self._name)
        p = entry.program
        return Lowered(entry.jaxpr, p.jaxpr, p.source, p.scalar_source, run=self,
                       name=self._name, fused_chains=p.fused_chains)

    def clear_cache(self) -> None:
        """Forget every traced signature (the next call traces again)."""
        self._cache.clear()
        self._fast.clear()
        self._guard = None

    def __get__(self, obj, objtype=None):
        # a jitted method: bind the instance as the first (usually static) argument
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"jit({self._name})"


def jit(f: Callable, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        donate_argnames: str | Sequence[str] = ()) -> Jitted:
    """Compile ``f``: trace it once per input signature and replay compiled Python.

    The traced program is optimised (inlined inner jits, identity ops, algebraic
    identities, symbolic zeros, constant folding, common subexpressions, the
    vanishing cotangent of a softmax's max shift, dead code) and compiled to
    one line of numpy per operation (indexing along an axis and its gradient
    as one numpy advanced-indexing call); programs of 0-d floats run as
    Python-float code. The cache key is the pytree structure,
    shapes and dtypes of the arguments and the values of the static ones.
    jit composes with every transform in every order.

    Memory: arrays of 16 KiB or more are written into buffers recycled across
    calls: intermediates, and the arrays a call returned once nothing (no name,
    container or view) refers to them any more, so repeated calls allocate no
    fresh memory. Between calls a jitted function keeps such buffers: about
    one call's intermediates, and the results of its last two calls (shared
    with the caller while the caller holds them); ``clear_cache()`` lets them
    go. A weak reference to a returned array may see it rewritten by a later call.

    Args:
      f: a pure function of arrays (pytrees of arrays).
      static_argnums: positions of arguments passed as Python values; they
        are part of the cache key (must be hashable) and baked into the program.
      static_argnames: the same, by parameter name (however the argument is passed).
      donate_argnums, donate_argnames: accepted for JAX's signature. In JAX they
        let the compiled program reuse the donated arguments' buffers; funcdiff
        takes them as a hint it may use to reuse buffers, and today never writes
        into an argument (donating is always safe, and frees nothing).

    Returns:
      A ``Jitted`` function with ``f``'s signature, plus ``.lower(*args)`` to
      see the optimised program and its source, and ``.trace_count``.

    Raises:
      ConcretizationError: if ``f`` branches in Python on a traced value.
      InvalidArgumentError: for unhashable static arguments, out-of-range
        static_argnums, or non-array arguments in non-static positions.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> f = fd.jit(lambda x: fnp.sum(fnp.tanh(x) ** 2))
    >>> round(float(f(np.ones(3))), 6)
    1.740077
    >>> f.trace_count
    1
    >>> power = fd.jit(lambda x, n: x ** n, static_argnums=1)
    >>> float(power(2.0, 3)), power.trace_count
    (8.0, 1)
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    return Jitted(f, nums, names)
