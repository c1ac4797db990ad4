"""The user-facing transforms: make_jaxpr, jvp, linearize, vjp, grad,
value_and_grad, linear_transpose and vmap.

Everything below this layer works on flat lists of arrays; this layer turns
the user's pytrees into such lists and back (with the argument handling of
``funcdiff.arguments.flattening``), checks what arrived, and raises errors that say how
to fix a call. It is the only layer that sees pytrees. Jacobians, Hessians and
Hessian-vector products, built on these, are in ``funcdiff.jacobians``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcdiff.bridge import boundary
from funcdiff import dtypes
from funcdiff.core import ShapedArray, Tracer, Zero, get_aval
from funcdiff.errors import (BatchingError, DifferentiationError, InvalidArgumentError,
                             NonlinearTransposeError, ShapeError, TreeStructureError)
from funcdiff.interpreters.batching import OutputAxisError, vmap_flat
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters import tape
from funcdiff.interpreters.linearize import LinearFunction, linearize_flat
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.tape_function import TapeFunction, tape_vjp_flat
from funcdiff.interpreters.transpose import UndefinedPrimal, backward_pass
from funcdiff.ir import ClosedJaxpr, Jaxpr, eval_jaxpr
from funcdiff.tree_util import broadcast_prefix, tree_flatten, tree_unflatten
from funcdiff.arguments.flattening import (OutInfo, as_leaf, check_complex_inputs, describe, differentiable_leaves,
                                 flat_fun, flatten_args, materialize, normalize_argnums,
                                 partial_on, wraps, zeros_like_aval)
from funcdiff.arguments.batch import batched_call
from funcdiff.arguments.described import DescribedFunction, function_name, signature_text

# ---------------------------------------------------------------------------
# make_jaxpr


def make_jaxpr(f: Callable, static_argnums: int | Sequence[int] = ()) -> Callable[..., ClosedJaxpr]:
    """Trace ``f`` at the shapes and dtypes of its arguments and return its jaxpr.

    Args:
      f: a function of arrays (pytrees of arrays) returning arrays.
      static_argnums: positions of arguments that are passed as Python values
        (not traced); they are baked into the program.

    Returns:
      A function that takes ``f``'s arguments and returns a ``ClosedJaxpr``,
      whose ``str()`` is the program text and which carries ``in_tree`` and
      ``out_tree``.

    Raises:
      ConcretizationError: if ``f`` uses Python control flow on a traced value.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> print(fd.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3)))
    { lambda ; a:f64[3]. let
        b:f64[3] = sin a
        c:f64[] = reduce_sum[axes=(0,)] b
      in (c,) }
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @wraps(f)
    def make(*args):
        nums = normalize_argnums(static, len(args), "make_jaxpr") if static else ()
        dyn_nums = tuple(i for i in range(len(args)) if i not in nums)
        dyn_args = [args[i] for i in dyn_nums]
        leaves, in_tree = flatten_args(dyn_args, "make_jaxpr")
        out_info = OutInfo()
        f_flat = flat_fun(partial_on(f, args, dyn_nums), in_tree, out_info,
                           transform="make_jaxpr")
        closed = trace_to_jaxpr(f_flat, [get_aval(x) for x in leaves])
        closed.in_tree, closed.out_tree = in_tree, out_info.tree
        return closed
    return make


# ---------------------------------------------------------------------------
# Forward mode


def _check_tangents(primals_flat, tangents_flat, primal_tree, tangent_tree, transform):
    if primal_tree != tangent_tree:
        raise TreeStructureError(
            f"{transform}: tangents must have the same structure as primals, but primals "
            f"are {primal_tree} and tangents are {tangent_tree}.")
    out = []
    for i, (p, t) in enumerate(zip(primals_flat, tangents_flat)):
        pa = get_aval(p)
        if isinstance(t, Zero):
            ta = t.aval
        elif getattr(t, "dtype", None) == dtypes.float0:
            ta = ShapedArray(np.shape(t), dtypes.float0)
        else:
            ta = get_aval(t)
        if not dtypes.is_inexact(pa.dtype):
            if ta.dtype == dtypes.float0 or not np.any(np.asarray(t)):
                out.append(Zero(ShapedArray(pa.shape, dtypes.float0)))
                continue
            raise DifferentiationError(
                f"{transform}: primal leaf {i} has integer dtype {pa.dtype}, which has no "
                "tangent space; pass a float0 or all-zero tangent for it.")
        if ta.shape != pa.shape or ta.dtype != pa.dtype:
            raise ShapeError(
                f"{transform}: tangent leaf {i} is {describe(ta)} but its primal is "
                f"{describe(pa)}; each tangent must have its primal's shape and dtype.")
        out.append(t)
    return out


@boundary
def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """Forward-mode derivative: evaluate ``f`` and its directional derivative.

    Args:
      f: function of ``len(primals)`` positional arguments (pytrees of arrays).
      primals: tuple or list of the arguments.
      tangents: tuple or list of the same structure, shapes and dtypes.
      has_aux: if True, ``f`` returns ``(out, aux)`` and aux is returned undifferentiated.

    Returns:
      ``(out, out_tangent)``, or ``(out, out_tangent, aux)`` with has_aux.

    Raises:
      TreeStructureError, ShapeError: if the tangents do not match the primals.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> y, dy = fd.jvp(fnp.sin, (0.0,), (2.0,))
    >>> float(y), float(dy)
    (0.0, 2.0)
    """
    return _jvp(f, primals, tangents, has_aux, "jvp")


def _jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool,
         name: str) -> tuple:
    """``jvp``, its errors naming the transform ``name`` the user called (jvp, hvp)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise InvalidArgumentError(
            f"{name} expects primals and tangents as tuples or lists of arguments, e.g. "
            f"fd.{name}(f, (x,), (v,)); got "
            f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_flat, p_tree = flatten_args(primals, name, "primal")
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    t_flat = _check_tangents(p_flat, [as_leaf(t, name, "tangent") for t in t_leaves],
                             p_tree, t_tree, name)
    out_info = OutInfo()
    f_flat = flat_fun(lambda *a: f(*a), p_tree, out_info, has_aux, name)
    outs, out_tangents = jvp_flat(f_flat, p_flat, t_flat)
    out_tangents = [materialize(t) for t in out_tangents]
    if has_aux:
        out_tree, aux_tree, n = out_info.tree, out_info.aux_tree, out_info.n
        return (tree_unflatten(out_tree, outs[:n]), tree_unflatten(out_tree, out_tangents[:n]),
                aux_tree.unflatten(outs[n:]))
    return tree_unflatten(out_info.tree, outs), tree_unflatten(out_info.tree, out_tangents)


@boundary
def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """Evaluate ``f`` and return its linearization as a function of tangents.

    Args:
      f: function of the primals.
      *primals: the point to linearize at.

    Returns:
      ``(out, f_jvp)`` where ``f_jvp(*tangents)`` equals ``jvp(f, primals, tangents)[1]``
      and reuses the residuals computed once.

    >>> import funcdiff as fd, funcdiff.numpy as fnp
    >>> y, f_jvp = fd.linearize(fnp.exp, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    p_flat, p_tree = flatten_args(primals, "linearize", "primal")
    out_info = OutInfo()
    outs, lin = linearize_flat(flat_fun(f, p_tree, out_info, transform="linearize"), p_flat)
    out_tree = out_info.tree

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        t_flat = _check_tangents(p_flat, [as_leaf(t, "linearize", "tangent") for t in t_leaves],
                                 p_tree, t_tree, "linearize")
        staged = eval_jaxpr(lin.jaxpr.jaxpr, lin.jaxpr.consts,
                            *[materialize(t) for t, m in zip(t_flat, lin.in_mask) if m])
        it = iter(staged)
        res = [zeros_like_aval(a) if z else next(it) for a, z in zip(lin.out_avals, lin.out_is_zero)]
        return tree_unflatten(out_tree, res)
    text = (f"linearized {function_name(f)} at {signature_text([get_aval(p) for p in p_flat])}: "
            f"tangents -> {signature_text(lin.out_avals)}")
    return tree_unflatten(out_tree, outs), DescribedFunction(f_jvp, text)


# ---------------------------------------------------------------------------
# Reverse mode


def reverse_flat(fun: Callable, primals: Sequence[Any]):
    """Evaluate ``fun`` for reverse mode: on the eager tape when no transform is
    active (the fast path), otherwise by linearize."""
    if tape.usable():
        return tape_vjp_flat(fun, primals)
    return linearize_flat(fun, primals)


def pull_back(lin: "LinearFunction | TapeFunction", cts_out: Sequence[Any],
               release: bool = False) -> list[Any]:
    """Input cotangents (materialised) for output cotangents ``cts_out``
    (``release``: ``lin`` is used this once; a tape may free its residuals as
    it goes)."""
    if type(lin) is TapeFunction:
        cts_in = lin.pull_back(cts_out, release)
    else:
        staged_cts = [ct for ct, z in zip(cts_out, lin.out_is_zero) if not z]
        jaxpr = lin.jaxpr
        undefined = [UndefinedPrimal(v.aval) for v in jaxpr.jaxpr.invars]
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, undefined, staged_cts)
    it = iter(cts_in)
    res = []
    for aval, m in zip(lin.in_avals, lin.in_mask):
        ct = next(it) if m else None
        if ct is None or type(ct) is Zero:
            ct = zeros_like_aval(aval)
        res.append(ct)
    return res


@boundary
def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """Reverse-mode derivative: evaluate ``f`` and return its pullback.

    Args:
      f: function of the primals (pytrees of arrays).
      *primals: the point of evaluation.
      has_aux: if True, ``f`` returns ``(out, aux)``.

    Returns:
      ``(out, vjp_fn)`` or ``(out, vjp_fn, aux)``; ``vjp_fn(ct)`` takes a
      cotangent shaped like ``out`` and returns a tuple with one cotangent per
      primal.

    Raises:
      ShapeError: if ``vjp_fn`` receives a cotangent of the wrong shape or dtype.

    >>> import funcdiff as fd, numpy as np
    >>> y, pullback = fd.vjp(lambda x: x * x, np.array([1.0, 2.0]))
    >>> pullback(np.ones(2))
    (array([2., 4.]),)
    """
    p_flat, p_tree = flatten_args(primals, "vjp", "primal")
    out_info = OutInfo()
    outs, lin = reverse_flat(flat_fun(f, p_tree, out_info, has_aux, "vjp"), p_flat)
    n = out_info.n
    out_tree = out_info.tree
    lin_out = drop_outputs(lin, n) if has_aux else lin

    def vjp_fn(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TreeStructureError(
                f"vjp_fn expects a cotangent with the structure of f's output {out_tree}, "
                f"but got {ct_tree}.")
        checked = []
        for i, (c, aval) in enumerate(zip(ct_leaves, lin_out.out_avals)):
            if (dtypes.is_complex(aval.dtype) and not isinstance(c, Tracer)
                    and np.iscomplexobj(c)):  # a complex output takes a complex cotangent
                c = np.asarray(c)
                dtypes.check_dtype(c.dtype, f"vjp_fn cotangent leaf {i}", allow_complex=True)
            else:
                c = as_leaf(c, "vjp_fn", f"cotangent leaf {i}")
            ca = get_aval(c)
            if not dtypes.is_inexact(aval.dtype):
                checked.append(Zero(aval))
                continue
            if ca.shape != aval.shape:
                raise ShapeError(
                    f"vjp_fn: cotangent leaf {i} has shape {ca.shape}, but the output it "
                    f"pairs with is {describe(aval)}; pass a cotangent of that shape.")
            if dtypes.is_complex(ca.dtype) and not dtypes.is_complex(aval.dtype):
                raise ShapeError(
                    f"vjp_fn: cotangent leaf {i} is complex ({ca.str_short()}), but the "
                    f"output it pairs with is the real {describe(aval)}; pass a real "
                    "cotangent (a complex one is accepted only for a complex output).")
            if ca.dtype != aval.dtype:
                c = c.astype(aval.dtype) if not isinstance(c, Tracer) else c
            checked.append(c)
        return tree_unflatten(p_tree, pull_back(lin_out, checked))
    text = (f"vjp of {function_name(f)}: cotangent {signature_text(lin_out.out_avals)} -> "
            f"{signature_text([get_aval(p) for p in p_flat])}")
    result = (tree_unflatten(out_tree, outs[:n]), DescribedFunction(vjp_fn, text))
    if has_aux:
        return result + (out_info.aux_tree.unflatten(outs[n:]),)
    return result


def drop_outputs(lin, n: int):
    """``lin`` restricted to its first ``n`` outputs (aux outputs dropped)."""
    if type(lin) is TapeFunction:
        return lin.restricted(n)
    staged_before = sum(not z for z in lin.out_is_zero[:n])
    j = lin.jaxpr.jaxpr
    jaxpr = Jaxpr(j.constvars, j.invars, j.eqns, j.outvars[:staged_before])
    return LinearFunction(ClosedJaxpr(jaxpr, lin.jaxpr.consts), lin.in_avals, lin.in_mask,
                          lin.out_avals[:n], lin.out_is_zero[:n])


def grad_output_error(out_tree, has_aux: bool) -> str:
    """Why grad cannot use an output that is not one array, and what to do instead."""
    if out_tree.num_leaves == 0 and str(out_tree) == "PyTreeDef(None)":
        return ("grad requires a scalar output, but f returned None (a missing return "
                "statement?). Return the value to differentiate.")
    text = f"grad requires a scalar output, but f returned a pytree {out_tree}."
    if not has_aux and out_tree.num_leaves >= 2 and str(out_tree).startswith("PyTreeDef((*,"):
        text += (" If f returns (value, aux), pass has_aux=True: grad then differentiates "
                 "the value and returns the aux unchanged.")
    return text + (" Use jacrev(f) for the Jacobian of several outputs, or reduce the output "
                   "to one scalar.")


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Like ``grad``, but the returned function gives ``(value, gradient)``.

    Args:
      f: scalar-valued function.
      argnums: which positional argument(s) to differentiate (int or tuple).
      has_aux: if True, ``f`` returns ``(value, aux)`` and the result is
        ``((value, aux), gradient)``.
      holomorphic: as for ``grad``.

    Returns:
      A function with ``f``'s signature returning ``(value, gradient)``.

    Raises:
      DifferentiationError: for a non-scalar output or an integer argument.

    >>> import funcdiff as fd
    >>> v, g = fd.value_and_grad(lambda x: x ** 2)(3.0)
    >>> float(v), float(g)
    (9.0, 6.0)
    """
    @boundary
    @wraps(f)
    def value_and_grad_f(*args, **kwargs):
        nums = normalize_argnums(argnums, len(args), "grad")
        p_flat, p_tree = differentiable_leaves(args, nums, "grad")
        if holomorphic or any(x.dtype.kind == "c" for x in p_flat):
            check_complex_inputs(p_flat, holomorphic, "grad")
        out_info = OutInfo()
        fk = (lambda *a: f(*a, **kwargs)) if kwargs else f
        f_flat = flat_fun(partial_on(fk, args, nums), p_tree, out_info, has_aux, "grad")
        outs, lin = reverse_flat(f_flat, p_flat)
        out_tree = out_info.tree
        if out_tree.num_leaves != 1:
            raise DifferentiationError(grad_output_error(out_tree, has_aux))
        aval = lin.out_avals[0]
        if aval.shape == () and dtypes.is_complex(aval.dtype) and not holomorphic:
            raise DifferentiationError(
                f"grad requires a real scalar output, but f returned the complex "
                f"{aval.str_short()}. Return a real scalar, e.g. fnp.real(z) or fnp.abs(z) "
                "(or fnp.abs(z) ** 2); for a holomorphic f pass grad(f, holomorphic=True) "
                "to get f'(z); or use vjp(f, z) to pull back a chosen complex cotangent.")
        if holomorphic and not dtypes.is_complex(aval.dtype) and aval.shape == ():
            raise DifferentiationError(
                f"grad(holomorphic=True) requires a complex scalar output, but f returned "
                f"{aval.str_short()}. A real-valued function of complex inputs is not "
                "holomorphic (unless constant): drop holomorphic=True to get its gradient "
                "df/dx - i df/dy.")
        if aval.shape != ():
            raise DifferentiationError(
                f"grad requires a scalar output, but f returned {aval.str_short()}. Use "
                "jacrev(f) for the full Jacobian, vjp(f, x) to pull back a chosen "
                "cotangent, or reduce the output (e.g. .sum()).")
        if not dtypes.is_inexact(aval.dtype):
            raise DifferentiationError(
                f"grad requires a floating-point scalar output, but f returned "
                f"{aval.str_short()}: an integer or boolean result (a count, argmax, a "
                "comparison) has no derivative. Return the float value to differentiate, "
                "and anything else as an aux value with has_aux=True.")
        ct = np.ones((), aval.dtype)
        lin_main = drop_outputs(lin, 1) if has_aux else lin
        cts = pull_back(lin_main, [ct], release=True)
        grads = tree_unflatten(p_tree, cts)
        if isinstance(argnums, int):
            grads = grads[0]
        value = tree_unflatten(out_tree, outs[:1])
        if has_aux:
            return (value, out_info.aux_tree.unflatten(outs[out_info.n:])), grads
        return value, grads
    return value_and_grad_f


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of a scalar-valued function, by reverse mode.

    Complex inputs follow JAX's convention: for a real ``f`` of ``z = x + iy``
    the gradient is ``df/dx - i df/dy`` (so a descent step is
    ``z - lr * conj(g)``); with ``holomorphic=True`` and a complex ``f`` it is
    ``f'(z)``.

    Args:
      f: function returning a real scalar (0-d float array or Python float),
        or a complex one with ``holomorphic=True``.
      argnums: which positional argument(s) to differentiate: an int gives the
        gradient for that argument, a tuple gives a tuple of gradients.
      has_aux: if True, ``f`` returns ``(value, aux)`` and the gradient
        function returns ``(gradient, aux)``.
      holomorphic: ``f`` is holomorphic in its (complex) inputs; return ``f'(z)``.

    Returns:
      A function with ``f``'s signature returning gradients shaped like the
      differentiated arguments.

    Raises:
      DifferentiationError: if ``f``'s output is not a real scalar (a complex
        one without ``holomorphic=True``), or an argument to differentiate is an
        integer or boolean array (or real, with ``holomorphic=True``).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.grad(lambda x: fnp.sum(x ** 2))(np.array([1.0, 2.0]))
    array([2., 4.])
    >>> complex(fd.grad(lambda z: fnp.abs(z) ** 2)(1 + 2j))
    (2-4j)
    >>> complex(fd.grad(fnp.sin, holomorphic=True)(1 + 2j)) == complex(np.cos(1 + 2j))
    True
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    @boundary
    @wraps(f)
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


def linear_transpose(f: Callable, *primals: Any) -> Callable:
    """The transpose of a linear function ``f``, traced at ``primals``' shapes.

    Args:
      f: a function linear in its arguments.
      *primals: example arguments (only their shapes and dtypes are used).

    Returns:
      ``f_t(ct)`` returning a tuple of cotangents, one per primal.

    Raises:
      DifferentiationError: if ``f`` is not linear.

    >>> import funcdiff as fd, numpy as np
    >>> f_t = fd.linear_transpose(lambda x: 2.0 * x, np.zeros(2))
    >>> f_t(np.array([1.0, 3.0]))
    (array([2., 6.]),)
    """
    p_flat, p_tree = flatten_args(primals, "linear_transpose", "primal")
    for i, p in enumerate(p_flat):
        if not dtypes.is_inexact(get_aval(p).dtype):
            raise DifferentiationError(
                f"linear_transpose: primal leaf {i} has dtype {get_aval(p).dtype}; linear "
                "functions are transposed over floating and complex inputs only.")
    out_info = OutInfo()
    closed = trace_to_jaxpr(flat_fun(f, p_tree, out_info, transform="linear_transpose"),
                            [get_aval(x) for x in p_flat], dynamic=False)
    out_tree = out_info.tree

    def f_transpose(ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TreeStructureError(f"linear_transpose: cotangent structure {ct_tree} does "
                                     f"not match the output structure {out_tree}.")
        undefined = [UndefinedPrimal(v.aval) for v in closed.jaxpr.invars]
        try:
            cts = backward_pass(closed.jaxpr, closed.consts, undefined, list(ct_leaves))
        except NonlinearTransposeError as e:
            raise DifferentiationError(
                f"linear_transpose: f is not linear in its inputs, so it has no transpose "
                f"({e.reason}). Only functions built from linear operations of the inputs "
                "(sums, scaling by constants, indexing, reshapes, products with constants) "
                "can be transposed; for a nonlinear f use vjp(f, x), whose pullback is the "
                "transpose of f's derivative at x.") from None
        cts = [zeros_like_aval(get_aval(p)) if c is None or type(c) is Zero else c
               for c, p in zip(cts, p_flat)]
        return tree_unflatten(p_tree, cts)
    return f_transpose


# ---------------------------------------------------------------------------
# vmap


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None) -> Callable:
    """Vectorise ``f`` over a batch axis of its arguments.

    Args:
      f: function of pytrees of arrays.
      in_axes: an int, None, or a tuple with one entry per positional argument
        (each itself a pytree prefix of that argument) giving the batch axis of
        each input; None means the input is shared by the whole batch.
      out_axes: same, for the outputs.
      axis_size: the batch size when no input is batched.

    Returns:
      The batched function. As in JAX, keyword arguments of the call are
      always batched along their axis 0 (``in_axes`` covers the positional
      ones); bind shared values with a closure or pass them positionally with
      an ``in_axes`` entry of None.

    Raises:
      BatchingError: on inconsistent batch sizes, axes out of range, or an
        in_axes structure that does not match the arguments.

    >>> import funcdiff as fd, numpy as np
    >>> fd.vmap(lambda x, y: x @ y, in_axes=(0, None))(np.ones((3, 2)), np.ones(2))
    array([2., 2., 2.])
    >>> fd.vmap(lambda x, scale: x * scale)(np.ones(3), scale=np.arange(3.0))
    array([0., 1., 2.])
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @boundary
    @wraps(f)
    def vmapped(*args, **kwargs):
        fk, leaves, in_tree, dims, size = batched_call(f, args, kwargs, in_axes, axis_size)
        out_info = OutInfo()
        f_flat = flat_fun(fk, in_tree, out_info, transform="vmap")

        def out_dims():
            out_tree = out_info.tree
            template = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
            try:
                return broadcast_prefix(out_axes, template)
            except TreeStructureError as e:
                raise BatchingError(f"vmap out_axes do not match the outputs: {e}") from None
        try:
            outs = vmap_flat(f_flat, size, dims, leaves, out_dims)
        except OutputAxisError as e:  # name the output by its path in f's result
            path = out_info.tree.leaf_paths()[e.index]
            raise BatchingError(f"vmap output{' ' + path if path else ''} {e.problem}") from None
        return tree_unflatten(out_info.tree, outs)
    return vmapped
