"""fd.lax: structured control flow that jit, grad and vmap see through.

Python ``if``, ``for`` and ``while`` on traced values cannot be staged by jit
or make_jaxpr: the trace only sees one path. These functions take the
branches and loop bodies as functions instead, trace them once at the
operands' shapes and dtypes, and stage one ``cond``, ``while`` or ``scan``
primitive holding the traced sub-programs. The signatures are JAX's; carries
and operands are pytrees, and every branch or body output is checked at trace
time to have exactly the structure, shapes and dtypes required.

Differentiation: forward mode works through all of them. Reverse mode works
through ``cond``, ``switch``, ``scan`` and ``fori_loop`` (which becomes a
``scan`` when its bounds are Python ints), saving each iteration's residuals.
Reverse mode through ``while_loop``, which JAX refuses, works too. When
the loop runs on concrete values (eager ``grad``, also under ``vmap``) it runs
forward, records the residuals of each of its n iterations (memory: n times
one iteration's residuals, as for a scan of length n) and is differentiated
as that scan. Under ``jit`` the trip count is unknown when the backward
program is built: the backward pass reruns the loop at run time, keeping the
n carries it passes through (memory: n carries, during the backward pass
only; compute: one extra forward loop). Second derivatives in reverse mode of
a ``while_loop`` under ``jit`` are not supported (they are eagerly).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff import dtypes
from funcdiff.core import ShapedArray, Tracer, bind, get_aval
from funcdiff.errors import (ConcretizationError, ControlFlowTypeError, InvalidArgumentError,
                             ShapeError)
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.ir import ClosedJaxpr, Jaxpr, Var
from funcdiff.primitives import elementwise
from funcdiff.primitives.control_flow import cond_p, scan_p, while_p
from funcdiff.primitives.elementwise import convert_element_type
from funcdiff.primitives.gradient_control import stop_gradient
from funcdiff.primitives.slicing import dynamic_slice, dynamic_update_slice
from funcdiff.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from funcdiff import lax_operations  # its names are bound at the end of this module

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "select",
           "stop_gradient", "dynamic_slice", "dynamic_update_slice", "convert_element_type",
           "cond_p", "while_p", "scan_p", "custom_root",
           "custom_linear_solve"] + lax_operations.__all__

# ---------------------------------------------------------------------------
# Tracing branches and bodies


def _as_array(x: Any, fn: str, where: str) -> Any:
    if isinstance(x, Tracer):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        dtypes.check_dtype(x.dtype, f"{fn}'s {where}", allow_complex=True)
        return x
    if type(x) in (bool, int, float, complex):
        return np.asarray(x)
    raise InvalidArgumentError(
        f"{fn}: {where} is a {type(x).__name__} ({x!r:.60}); operands and carries must be "
        "arrays, Python scalars or pytrees of them. Close over other values instead.")


def _flatten(tree: Any, fn: str, what: str) -> tuple[list, PyTreeDef]:
    leaves, treedef = tree_flatten(tree)
    return [_as_array(x, fn, f"{what} leaf {i}") for i, x in enumerate(leaves)], treedef


def _trace(fun: Callable, in_avals: Sequence[ShapedArray], fn: str, what: str):
    """Stage ``fun`` (flat leaves in, a pytree out) at ``in_avals``.

    Returns the program, the tracers of enclosing transforms it closes over
    (they become the program's leading inputs, so the primitive's rules see
    them as operands) and the output's tree structure.
    """
    out_tree = None

    def flat(*leaves):
        nonlocal out_tree
        out_leaves, out_tree = tree_flatten(fun(*leaves))
        return [_as_array(o, fn, f"the output of {what}, leaf {i},")
                for i, o in enumerate(out_leaves)]
    closed = trace_to_jaxpr(flat, list(in_avals))
    j = closed.jaxpr
    lifted = [(v, c) for v, c in zip(j.constvars, closed.consts) if isinstance(c, Tracer)]
    kept = [(v, c) for v, c in zip(j.constvars, closed.consts) if not isinstance(c, Tracer)]
    jaxpr = Jaxpr([v for v, _ in kept], [v for v, _ in lifted] + list(j.invars), j.eqns,
                  j.outvars)
    return ClosedJaxpr(jaxpr, [c for _, c in kept]), [c for _, c in lifted], out_tree


def _unflattened(fun: Callable, *trees: PyTreeDef) -> Callable:
    """``fun`` of pytrees as a function of their leaves."""
    def f(*leaves):
        args, start = [], 0
        for t in trees:
            args.append(tree_unflatten(t, leaves[start:start + t.num_leaves]))
            start += t.num_leaves
        return fun(*args)
    return f


def _check_same(fn: str, names: tuple[str, str], trees: tuple, avals: tuple, hint: str) -> None:
    (a_name, b_name), (a_tree, b_tree), (a_avals, b_avals) = names, trees, avals
    if a_tree != b_tree:
        raise ControlFlowTypeError(
            f"{fn}: {a_name} and {b_name} must have the same pytree structure, but "
            f"{a_name} is {a_tree} and {b_name} is {b_tree}. {hint}")
    for k, (a, b) in enumerate(zip(a_avals, b_avals)):
        if a != b:
            raise ControlFlowTypeError(
                f"{fn}: {a_name} and {b_name} must have the same shapes and dtypes, but "
                f"leaf {k} is {a.str_short()} in {a_name} and {b.str_short()} in {b_name}. "
                f"{hint}")


_CARRY_HINT = ("Give the initial value the type the body produces (e.g. 0.0 rather than "
               "0, or .astype(...)), or cast inside the body.")


# ---------------------------------------------------------------------------
# cond and switch


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, stageable.

    Both branches are traced; with a concrete ``pred`` only the chosen one runs.
    Under vmap with a batched ``pred`` both run and the results are selected.

    Args:
      pred: a boolean scalar (Python bool, numpy bool or a traced one).
      true_fun, false_fun: functions of ``operands`` returning pytrees of arrays
        with identical structure, shapes and dtypes.
      *operands: pytrees of arrays passed to the chosen branch.

    Returns:
      The chosen branch's output.

    Raises:
      ControlFlowTypeError: if pred is not a boolean scalar or the branches'
        outputs differ in structure, shape or dtype.

    >>> import funcdiff as fd, numpy as np
    >>> f = lambda x: fd.lax.cond(x > 0, lambda v: v * 2.0, lambda v: -v, x)
    >>> float(f(3.0)), float(fd.grad(f)(-1.0)), float(fd.jit(f)(-1.5))
    (6.0, -1.0, 1.5)
    """
    _check_callable("cond", true_fun=true_fun, false_fun=false_fun)
    pred = _as_array(pred, "cond", "pred")
    aval = get_aval(pred)
    if aval.shape != () or aval.dtype != np.bool_:
        what = "scalar" if aval.shape != () else "boolean"
        raise ControlFlowTypeError(
            f"cond needs a {what} predicate, but pred is {aval.str_short()}. "
            "Reduce or compare it first (e.g. fnp.all(x > 0), x[0] > 0 or x != 0); to "
            "choose elementwise use fd.lax.select or fd.numpy.where.")
    index = convert_element_type(pred, np.dtype(np.int64))
    return _cond("cond", index, (false_fun, true_fun), ("false_fun", "true_fun"), operands)


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """``branches[index](*operands)``, with ``index`` clamped to the valid range.

    Args:
      index: an integer scalar (Python int, numpy or traced integer).
      branches: a sequence of functions of ``operands`` with identical output
        structure, shapes and dtypes.
      *operands: pytrees of arrays.

    Returns:
      The chosen branch's output.

    Raises:
      ControlFlowTypeError: for a non-integer or non-scalar index, or branches
        whose outputs disagree.

    >>> import funcdiff as fd, numpy as np
    >>> fs = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    >>> [float(fd.lax.switch(i, fs, 2.0)) for i in (0, 1, 2, 7)]
    [3.0, 20.0, -2.0, -2.0]
    """
    branches = tuple(branches)
    if not branches:
        raise InvalidArgumentError("switch needs at least one branch function")
    _check_callable("switch", **{f"branches[{i}]": b for i, b in enumerate(branches)})
    index = _as_array(index, "switch", "index")
    aval = get_aval(index)
    if aval.shape != () or aval.dtype.kind not in "iu":
        raise ControlFlowTypeError(
            f"switch needs a scalar integer index, but index is {aval.str_short()}. Convert "
            "a float with .astype(int) or a boolean with fd.lax.cond.")
    if len(branches) == 1:
        return branches[0](*operands)
    last = np.asarray(len(branches) - 1, aval.dtype)
    index = elementwise.max(elementwise.min(index, last), np.asarray(0, aval.dtype))
    names = tuple(f"branches[{i}]" for i in range(len(branches)))
    return _cond("switch", index, branches, names, operands)


def _check_callable(fn: str, **funs: Any) -> None:
    for name, f in funs.items():
        if not callable(f):
            raise InvalidArgumentError(f"{fn}: {name} must be a function, got "
                                       f"{type(f).__name__}")


def _cond(fn: str, index: Any, branches: tuple, names: tuple, operands: tuple) -> Any:
    leaves, tree = _flatten(operands, fn, "operand")
    avals = [get_aval(x) for x in leaves]
    traced = [_trace(_unflattened(lambda ops, b=b: b(*ops), tree), avals, fn, name)
              for b, name in zip(branches, names)]
    for i in range(1, len(traced)):
        a, b = (i, 0) if fn == "cond" else (0, i)  # cond: true_fun first, as written
        _check_same(fn, (f"{names[a]}'s output", f"{names[b]}'s output"),
                    (traced[a][2], traced[b][2]), (traced[a][0].out_avals, traced[b][0].out_avals),
                    "Every branch must return the same types (cast with .astype(...)).")
    # every branch takes the closed-over tracers of all branches
    consts, position = [], {}
    for _, cs, _ in traced:
        for c in cs:
            if id(c) not in position:
                position[id(c)] = len(consts)
                consts.append(c)
    programs = []
    for j, cs, _ in traced:
        own = {id(c): v for c, v in zip(cs, j.jaxpr.invars)}
        invars = [own.get(id(c)) or Var(get_aval(c)) for c in consts] + \
            list(j.jaxpr.invars[len(cs):])
        programs.append(ClosedJaxpr(Jaxpr(j.jaxpr.constvars, invars, j.jaxpr.eqns,
                                          j.jaxpr.outvars), j.consts))
    outs = bind(cond_p, index, *consts, *leaves, branches=tuple(programs))
    return tree_unflatten(traced[0][2], outs)


# ---------------------------------------------------------------------------
# Loops


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``; return the final ``val``.

    Differentiable in both modes: eagerly the iterations are recorded and
    differentiated like a scan (memory grows with the trip count); under jit
    the backward pass reruns the loop, keeping each iteration's carry.

    Args:
      cond_fun: function of the carry returning a boolean scalar.
      body_fun: function of the carry returning a carry of the same structure,
        shapes and dtypes.
      init_val: the initial carry (a pytree of arrays).

    Returns:
      The carry after the last iteration.

    Raises:
      ControlFlowTypeError: if cond_fun does not return a boolean scalar or
        body_fun changes the carry's structure, shapes or dtypes.

    >>> import funcdiff as fd
    >>> def sqrt_newton(a):  # x <- (x + a / x) / 2 until converged
    ...     step = lambda x: 0.5 * (x + a / x)
    ...     return fd.lax.while_loop(lambda x: abs(step(x) - x) > 1e-12, step, a)
    >>> round(float(sqrt_newton(2.0)), 12), round(float(fd.grad(sqrt_newton)(4.0)), 6)
    (1.414213562373, 0.25)
    """
    _check_callable("while_loop", cond_fun=cond_fun, body_fun=body_fun)
    leaves, tree = _flatten(init_val, "while_loop", "init_val")
    avals = [get_aval(x) for x in leaves]
    cond_j, cond_consts, cond_tree = _trace(_unflattened(cond_fun, tree), avals,
                                            "while_loop", "cond_fun")
    pred = cond_j.out_avals
    if cond_tree.num_leaves != 1 or pred[0] != ShapedArray((), np.dtype(np.bool_)):
        got = pred[0].str_short() if cond_tree.num_leaves == 1 else f"the pytree {cond_tree}"
        raise ControlFlowTypeError(
            f"while_loop: cond_fun must return a boolean scalar, but it returned {got}. "
            "Reduce it (e.g. fnp.any(err > tol)) or compare (e.g. i < n).")
    body_j, body_consts, body_tree = _trace(_unflattened(body_fun, tree), avals,
                                            "while_loop", "body_fun")
    _check_same("while_loop", ("init_val", "body_fun's output"), (tree, body_tree),
                (avals, body_j.out_avals), _CARRY_HINT)
    outs = bind(while_p, *cond_consts, *body_consts, *leaves, cond_jaxpr=cond_j,
                body_jaxpr=body_j, cond_nconsts=len(cond_consts),
                body_nconsts=len(body_consts))
    return tree_unflatten(tree, outs)


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; return ``val``.

    With concrete (Python or numpy) integer bounds the loop is a ``scan`` of
    ``upper - lower`` steps, differentiable in both modes everywhere, jit
    included; with traced bounds it is a ``while_loop``.

    Args:
      lower, upper: integer scalars.
      body_fun: function ``(i, val) -> val`` keeping val's structure and types;
        ``i`` is an integer scalar of the bounds' dtype.
      init_val: the initial value (a pytree of arrays).

    Returns:
      The final value.

    Raises:
      ControlFlowTypeError: for non-integer bounds or a body changing val's types.

    >>> import funcdiff as fd
    >>> power = lambda x: fd.lax.fori_loop(0, 5, lambda i, acc: acc * x, 1.0)
    >>> float(power(2.0)), float(fd.jit(fd.grad(power))(2.0))
    (32.0, 80.0)
    """
    _check_callable("fori_loop", body_fun=body_fun)
    lower, upper = _as_array(lower, "fori_loop", "lower"), _as_array(upper, "fori_loop", "upper")
    for name, b in (("lower", lower), ("upper", upper)):
        a = get_aval(b)
        if a.shape != () or a.dtype.kind not in "iu":
            raise ControlFlowTypeError(
                f"fori_loop needs integer scalar bounds, but {name} is {a.str_short()}.")
    dtype = dtypes.result_type(lower, upper)
    val_leaves, val_tree = _flatten(init_val, "fori_loop", "init_val")
    val_avals = [get_aval(x) for x in val_leaves]

    def body(i, val):
        out = body_fun(i, val)
        out_leaves, out_tree = tree_flatten(out)
        _check_same("fori_loop", ("init_val", "body_fun's output"), (val_tree, out_tree),
                    (val_avals, [get_aval(_as_array(o, "fori_loop", "output"))
                                 for o in out_leaves]), _CARRY_HINT)
        return out

    lo, hi = _concrete_int(lower), _concrete_int(upper)
    init_val = tree_unflatten(val_tree, val_leaves)
    if lo is not None and hi is not None:
        def step(carry, _):
            i, val = carry
            return (i + np.asarray(1, dtype), body(i, val)), None
        (_, out), _ = scan(step, (np.asarray(lo, dtype), init_val), None,
                           length=hi - lo if hi > lo else 0)  # (lax's max shadows)
        return out
    lower, upper = convert_element_type(lower, dtype), convert_element_type(upper, dtype)
    _, _, out = while_loop(lambda c: c[0] < c[1],
                           lambda c: (c[0] + np.asarray(1, dtype), c[1], body(c[0], c[2])),
                           (lower, upper, init_val))
    return out


def _concrete_int(x: Any) -> int | None:
    if isinstance(x, Tracer):
        try:
            x = x.to_concrete("fori_loop bound")
        except ConcretizationError:
            return None
    return int(x)


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; stack the ys.

    Equivalent to::

        ys = []
        for x in (reversed(xs) if reverse else xs):
            carry, y = f(carry, x)
            ys.append(y)
        return carry, stack(ys)   # ys in the order of xs, also when reverse

    Reverse mode saves each iteration's residuals (stacked along a new axis)
    and runs the transposed body as a scan in the opposite direction.

    Args:
      f: function ``(carry, x) -> (carry, y)``; the carry keeps its structure,
        shapes and dtypes; y is any pytree of arrays (or None).
      init: the initial carry (a pytree of arrays).
      xs: a pytree of arrays sharing the leading size, or None (then ``length``
        is required and ``x`` is None).
      length: the number of iterations (optional when ``xs`` is given).
      reverse: run from the last element of xs to the first.
      unroll: accepted for JAX compatibility; funcdiff's loop is compiled
        Python, which unrolling would not speed up.

    Returns:
      ``(final carry, stacked ys)``.

    Raises:
      ShapeError: if xs leaves have different leading sizes, are scalars, or
        disagree with ``length``.
      ControlFlowTypeError: if f does not return a pair or changes the carry's types.

    >>> import funcdiff as fd, numpy as np
    >>> cumsum = lambda xs: fd.lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)
    >>> total, partial_sums = cumsum(np.array([1.0, 2.0, 3.0]))
    >>> float(total), partial_sums
    (6.0, array([1., 3., 6.]))
    >>> fd.grad(lambda xs: cumsum(xs)[1].sum())(np.array([1.0, 2.0, 3.0]))
    array([3., 2., 1.])
    """
    _check_callable("scan", f=f)
    init_leaves, init_tree = _flatten(init, "scan", "init")
    xs_leaves, xs_tree = _flatten(xs, "scan", "xs")
    xs_avals = [get_aval(x) for x in xs_leaves]
    for i, a in enumerate(xs_avals):
        if a.ndim == 0:
            raise ShapeError(f"scan: xs leaf {i} is the scalar {a.str_short()}; xs leaves "
                             "need a leading axis to scan over.")
    sizes = sorted({a.shape[0] for a in xs_avals})
    listing = ", ".join(f"leaf {i}: {a.str_short()}" for i, a in enumerate(xs_avals))
    if len(sizes) > 1:
        raise ShapeError(f"scan: all xs leaves must have the same leading size, but they "
                         f"are {listing}.")
    if length is not None:
        length = operator.index(length)
        if sizes and sizes[0] != length:
            raise ShapeError(f"scan got length={length}, but the xs have leading size "
                             f"{sizes[0]} ({listing}).")
    elif not sizes:
        raise InvalidArgumentError("scan needs xs to scan over, or length= when xs is None.")
    else:
        length = sizes[0]
    if length < 0:
        raise ShapeError(f"scan needs a non-negative length, got {length}")
    carry_avals = [get_aval(x) for x in init_leaves]
    x_avals = [ShapedArray(a.shape[1:], a.dtype) for a in xs_avals]
    carry_tree = y_tree = None  # the trees body returns, known once it has run

    def body(carry, x):
        nonlocal carry_tree, y_tree
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise ControlFlowTypeError(
                f"scan: f must return a pair (carry, y), but it returned {_describe(out)}. "
                "Return (carry, None) when there is nothing to stack.")
        carry_out, y = out
        carry_tree, y_tree = tree_flatten(carry_out)[1], tree_flatten(y)[1]
        return list(tree_flatten(carry_out)[0]) + list(tree_flatten(y)[0])
    jaxpr, consts, _ = _trace(_unflattened(body, init_tree, xs_tree), carry_avals + x_avals,
                              "scan", "f")
    _check_same("scan", ("init", "the carry f returns"), (init_tree, carry_tree),
                (carry_avals, jaxpr.out_avals[:len(carry_avals)]), _CARRY_HINT)
    outs = bind(scan_p, *consts, *init_leaves, *xs_leaves, jaxpr=jaxpr, num_consts=len(consts),
                num_carry=len(init_leaves), length=length, reverse=bool(reverse))
    n = len(init_leaves)
    return tree_unflatten(init_tree, outs[:n]), tree_unflatten(y_tree, outs[n:])


def _describe(out: Any) -> str:
    if isinstance(out, (tuple, list)):
        return f"a {type(out).__name__} of length {len(out)}"
    if isinstance(out, (Tracer, np.ndarray, np.generic)):
        return f"one array {get_aval(out).str_short()}"
    return f"a {type(out).__name__}"


def map(f: Callable, xs: Any) -> Any:  # noqa: A001  (the JAX name)
    """``f`` applied to each slice of ``xs`` along the leading axis, results stacked.

    A scan without a carry: one traced program runs per slice (unlike vmap,
    which runs one batched program).

    Args:
      f: function of one slice, returning a pytree of arrays.
      xs: a pytree of arrays sharing their leading size.

    Returns:
      ``f``'s outputs stacked along a new leading axis.

    Raises:
      ShapeError: if the leaves of ``xs`` differ in leading size.

    >>> import funcdiff as fd, numpy as np
    >>> fd.lax.map(lambda row: row.sum(), np.arange(6.0).reshape(3, 2))
    array([1., 5., 9.])
    """
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """Elementwise ``on_true`` where ``pred`` else ``on_false`` (both are computed).

    Args:
      pred: boolean array, broadcasting against the others.
      on_true, on_false: arrays of one dtype.

    Returns:
      The broadcast elementwise choice. Derivatives flow only to the chosen side.

    >>> import funcdiff as fd, numpy as np
    >>> fd.lax.select(np.array([True, False]), np.ones(2), np.zeros(2))
    array([1., 0.])
    """
    return elementwise.select(pred, on_true, on_false)


# The primitives under JAX's names (lax.add, lax.dot_general, lax.slice, ...). Bound
# last: max, min and slice shadow the builtins in this module from here on.
from funcdiff.lax_operations import (  # noqa: E402,A004
    add, associative_scan, broadcast_in_dim, concatenate, conv, conv_dimension_numbers,
    conv_general_dilated, conv_with_general_padding, cos, cumsum, div, dot, dot_general, exp,
    log, max, min, mul, neg, pad, reduce_max, reduce_sum, reduce_window, reduce_window_max,
    reduce_window_min, reduce_window_sum, rem, reshape, sin, slice, sort, sort_key_val, sub, tanh,
    top_k, transpose)
from funcdiff.lax_solvers import custom_linear_solve, custom_root  # noqa: E402


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
