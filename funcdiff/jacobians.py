"""Jacobians (jacfwd, jacrev, jacobian with its choice of mode), Hessians and
Hessian-vector products, built on the transforms of ``funcdiff.api``.

jacfwd is one vmap of jvp over the standard basis of the inputs, jacrev one
vmap of the pullback over the basis of the outputs (on the eager tape when no
transform is active); the basis stays symbolic (``interpreters.batching.
StdBasis``), so neither mode multiplies an identity through a layer.
``chunk_size`` processes the basis a block of rows at a time to bound memory.
``jacobian(mode="auto")`` picks forward mode when the inputs are no larger
than the outputs, and says which mode it used in ``.last_mode``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from funcdiff.bridge import boundary
from funcdiff import dtypes
from funcdiff.arguments.flattening import (OutInfo, check_complex_inputs, differentiable_leaves, flat_fun,
                                 materialize, normalize_argnums, partial_on, wraps)
from funcdiff.api import drop_outputs, _jvp, pull_back, reverse_flat, grad
from funcdiff.core import ShapedArray, get_aval, is_array_like
from funcdiff.errors import DifferentiationError, InvalidArgumentError
from funcdiff.interpreters import tape
from funcdiff.interpreters.batching import StdBasis, vmap_flat
from funcdiff.interpreters.jvp import jvp_flat
from funcdiff.interpreters.staging import trace_to_jaxpr
from funcdiff.interpreters.tape_function import TapeFunction
from funcdiff.interpreters.tape_batched import pull_back_batched
from funcdiff.primitives import slicing, structural
from funcdiff.tree_util import (PyTreeDef, PyTreeRegistrationError, tree_flatten,
                                tree_unflatten, treedef_is_leaf)

def _std_basis(avals: Sequence[ShapedArray]) -> tuple[list[StdBasis], int]:
    """The standard basis of leaves with these avals together, one symbolic
    slice per leaf: leaf i gets the batch ``(n_total,) + shape_i`` of its
    columns of the n_total x n_total identity (kept symbolic by vmap, see
    ``StdBasis``)."""
    sizes = [math.prod(a.shape) for a in avals]
    n = sum(sizes)
    out, offset = [], 0
    for a, size in zip(avals, sizes):
        out.append(StdBasis(n, 0, offset, a.shape, a.dtype))
        offset += size
    return out, n


def _slice_axis(x: Any, axis: int, start: int, stop: int) -> Any:
    """``x[..., start:stop, ...]`` along ``axis``, traceable (``x`` itself when whole)."""
    shape = get_aval(x).shape
    if (start, stop) == (0, shape[axis]):
        return x
    return slicing.slice(x, start_indices=tuple(start if i == axis else 0
                                                   for i in range(len(shape))),
                            limit_indices=tuple(stop if i == axis else s
                                                for i, s in enumerate(shape)))


def _reshaped(x: Any, shape: tuple) -> Any:
    return x if get_aval(x).shape == shape else structural.reshape(x, new_sizes=shape)


def _jacobian(f: Callable, argnums, has_aux: bool, mode: str, chunk_size: int | None,
              name: str, holomorphic: bool = False) -> Callable:
    @boundary
    @wraps(f)
    def jac_f(*args, **kwargs):
        nums = normalize_argnums(argnums, len(args), name)
        p_flat, p_tree = differentiable_leaves(args, nums, name)
        if holomorphic or any(x.dtype.kind == "c" for x in p_flat):
            check_complex_inputs(p_flat, holomorphic, name, complex_allowed=mode == "rev")
        in_avals = [get_aval(x) for x in p_flat]
        out_info = OutInfo()
        fk = (lambda *a: f(*a, **kwargs)) if kwargs else f
        f_flat = flat_fun(partial_on(fk, args, nums), p_tree, out_info, has_aux, name)
        blocks = []
        if mode == "fwd":
            # one batched jvp: column k of the Jacobian is J @ e_k. The batch axis
            # goes last, where the Jacobian wants it (no transpose of the result).
            basis, n = _std_basis(in_avals)

            def push(*t):
                primals_out, tangents_out = jvp_flat(f_flat, p_flat, list(t))
                n_main = out_info.n
                _check_outputs([get_aval(p) for p in primals_out[:n_main]], name, mode,
                               holomorphic)
                return [materialize(x) for x in tangents_out[:n_main]] + primals_out[n_main:]

            def out_dims():
                n_main = out_info.n
                n_aux = out_info.aux_tree.num_leaves if has_aux else 0
                return [-1] * n_main + [None] * n_aux
            results = _chunked(lambda chunk, size: vmap_flat(push, size, [0] * len(chunk),
                                                             chunk, out_dims),
                               basis, n, chunk_size, out_dims)
            out_tree = out_info.tree
            n_out = out_info.n
            cols, aux_leaves = results[:n_out], results[n_out:]
            for j in cols:
                aval = get_aval(j)
                out_shape, last = aval.shape[:-1], aval.ndim - 1
                row, offset = [], 0
                for ia in in_avals:
                    size = math.prod(ia.shape)
                    piece = _slice_axis(j, last, offset, offset + size)
                    row.append(_reshaped(piece, out_shape + ia.shape))
                    offset += size
                blocks.append(tree_unflatten(p_tree, row))
        else:
            outs, lin = reverse_flat(f_flat, p_flat)
            out_tree = out_info.tree
            n_out = out_info.n
            lin_main = drop_outputs(lin, n_out) if has_aux else lin
            out_avals = lin.out_avals[:n_out]
            aux_leaves = outs[n_out:]
            _check_outputs(out_avals, name, mode, holomorphic)
            # one batched vjp: row k of the Jacobian is e_k^T J
            basis, m = _std_basis(out_avals)
            if type(lin_main) is TapeFunction:  # eager: the tape batches its own pullback
                def pull(chunk, size):
                    rows = pull_back_batched(lin_main, chunk, size)
                    return [np.zeros((size,) + a.shape, a.dtype) if r is None else r
                            for r, a in zip(rows, in_avals)]
            else:
                def pull(chunk, size):
                    return vmap_flat(lambda *ct: pull_back(lin_main, list(ct)), size,
                                     [0] * len(chunk), chunk, 0)
            rows = _chunked(pull, basis, m, chunk_size, 0)
            if (type(argnums) is int and len(rows) == 1 and not has_aux
                    and treedef_is_leaf(out_tree)):  # one array in, one out: the rows are it
                return _reshaped(rows[0], out_avals[0].shape + in_avals[0].shape)
            offset = 0
            for a in out_avals:
                size = math.prod(a.shape)
                blocks.append(tree_unflatten(p_tree, [
                    _reshaped(_slice_axis(r, 0, offset, offset + size), a.shape + ia.shape)
                    for r, ia in zip(rows, in_avals)]))
                offset += size
        if isinstance(argnums, int):
            blocks = [b[0] for b in blocks]
        jac = tree_unflatten(out_tree, blocks)
        if has_aux:
            return jac, out_info.aux_tree.unflatten(aux_leaves)
        return jac
    return jac_f


def _check_outputs(avals: Sequence[ShapedArray], name: str, mode: str,
                   holomorphic: bool) -> None:
    """Outputs a Jacobian can have: floating or complex; complex outputs in reverse
    mode only with ``holomorphic=True`` (a row of a complex output would need a
    complex structure the function may not have), and with it, complex only."""
    for i, a in enumerate(avals):
        if not dtypes.is_inexact(a.dtype):
            raise DifferentiationError(
                f"{name}: output leaf {i} has dtype {a.dtype}; Jacobians need floating "
                "outputs (an integer or boolean result, such as argmax or a comparison, has "
                "no derivative). Return it as an aux value with has_aux=True, or convert "
                "it with .astype(float) if it should be differentiated as a float.")
        if holomorphic and not dtypes.is_complex(a.dtype):
            raise DifferentiationError(
                f"{name}(holomorphic=True): output leaf {i} is real ({a.str_short()}); a "
                "holomorphic function has complex outputs. Drop holomorphic=True.")
        if mode == "rev" and dtypes.is_complex(a.dtype) and not holomorphic:
            raise DifferentiationError(
                f"{name} needs real outputs without holomorphic=True, but output leaf {i} "
                f"is {a.str_short()}. For a holomorphic function pass holomorphic=True; "
                "otherwise return the real and imaginary parts (fnp.real, fnp.imag) as "
                "separate outputs, or use jacfwd.")


def _chunked(run: Callable, basis: list[StdBasis], n: int, chunk_size: int | None,
             out_dims: Any) -> list:
    """``run(basis rows, number of rows)`` over the basis, ``chunk_size`` basis
    vectors at a time; the chunks' results are joined along their batch axes
    (``out_dims``: one int for all results, or a callable giving them)."""
    if n == 0:
        raise InvalidArgumentError("Jacobians of functions with empty inputs or outputs "
                                   "are not supported")
    if chunk_size is None or chunk_size >= n:
        return run(basis, n)
    if chunk_size < 1:
        raise InvalidArgumentError(f"chunk_size must be a positive integer, got {chunk_size}")
    pieces = []
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        pieces.append(run([b.rows(start, stop) for b in basis], stop - start))
    dims = out_dims() if callable(out_dims) else [out_dims] * len(pieces[0])
    return [pieces[0][i] if d is None else
            structural.concatenate(*[p[i] for p in pieces],
                                   dimension=d % get_aval(pieces[0][i]).ndim)
            for i, d in enumerate(dims)]


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           chunk_size: int | None = None, holomorphic: bool = False) -> Callable:
    """The Jacobian by forward mode: one batched jvp over the input basis.

    Args:
      f: function of pytrees of arrays.
      argnums: argument(s) to differentiate.
      has_aux: if True, ``f`` returns ``(out, aux)``; returns ``(jac, aux)``.
      chunk_size: process at most this many basis vectors per batched pass,
        to bound memory.
      holomorphic: ``f`` is holomorphic in its complex inputs: the Jacobian of
        complex derivatives ``f'(z)``. Without it, inputs must be real (the
        outputs may be complex).

    Returns:
      A function returning the Jacobian: for each output leaf, an entry per
      input leaf of shape ``out.shape + in.shape``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    return _jacobian(f, argnums, has_aux, "fwd", chunk_size, "jacfwd", holomorphic)


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           chunk_size: int | None = None, holomorphic: bool = False) -> Callable:
    """The Jacobian by reverse mode: one batched vjp over the output basis.

    Args:
      f: function of pytrees of arrays.
      argnums: argument(s) to differentiate.
      has_aux: if True, ``f`` returns ``(out, aux)``; returns ``(jac, aux)``.
      chunk_size: process at most this many cotangent basis vectors per pass.
      holomorphic: ``f`` is holomorphic in its complex inputs: ``f'(z)``, as for
        jacfwd. Without it, outputs must be real; complex inputs get rows
        ``df/dx - i df/dy``, grad's convention.

    Returns:
      A function returning the Jacobian with blocks of shape ``out.shape + in.shape``.

    >>> import funcdiff as fd, numpy as np
    >>> fd.jacrev(lambda x: x[0] * x)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [2., 1.]])
    """
    return _jacobian(f, argnums, has_aux, "rev", chunk_size, "jacrev", holomorphic)


def jacobian(f: Callable, argnums: int | Sequence[int] = 0, mode: str = "auto",
             has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """The Jacobian, choosing forward or reverse mode by the input and output sizes.

    Forward mode costs one pass per input element, reverse mode one per
    output element; ``mode="auto"`` picks forward when the inputs are no
    larger than the outputs (at equal sizes forward mode is cheaper: it
    keeps no residuals and needs no backward pass). The chosen mode is stored on the returned
    function as ``.last_mode`` after each call.

    Args:
      f: function of pytrees of arrays.
      argnums: argument(s) to differentiate.
      mode: "auto", "fwd" or "rev".
      has_aux, holomorphic: as for jacfwd.

    Returns:
      A function returning the Jacobian, like jacfwd/jacrev.

    Raises:
      InvalidArgumentError: for an unknown mode.

    >>> import funcdiff as fd, numpy as np
    >>> J = fd.jacobian(lambda x: x.sum(keepdims=True))
    >>> J(np.ones(3)), J.last_mode
    (array([[1., 1., 1.]]), 'rev')
    """
    if mode not in ("auto", "fwd", "rev"):
        raise InvalidArgumentError(f"jacobian mode must be 'auto', 'fwd' or 'rev', not {mode!r}")
    modes = {m: _jacobian(f, argnums, has_aux, m, None, "jacobian", holomorphic)
             for m in ("fwd", "rev")}
    # Total output size per input signature (tree and avals), so that staging f
    # to find it happens once per signature rather than on every call. It only
    # steers the choice of mode, never the result.
    out_sizes: dict = {}

    @boundary
    @wraps(f)
    def jac_f(*args, **kwargs):
        chosen = mode
        if mode == "auto":
            nums = normalize_argnums(argnums, len(args), "jacobian")
            p_flat, p_tree = differentiable_leaves(args, nums, "jacobian")
            p_avals = [get_aval(x) for x in p_flat]
            n_in = sum(math.prod(a.shape) for a in p_avals)
            key = _signature((args, kwargs))
            n_out = None if key is None else out_sizes.get(key)
            if n_out is None:
                fk = (lambda *a: f(*a, **kwargs)) if kwargs else f
                n_out = sum(math.prod(a.shape) for a in
                            _eval_shape(partial_on(fk, args, nums), p_tree, p_avals, has_aux))
                if key is not None:
                    if len(out_sizes) >= _MAX_SIGNATURES:
                        out_sizes.clear()
                    out_sizes[key] = n_out
            chosen = "fwd" if n_in <= n_out else "rev"
        jac_f.last_mode = chosen
        return modes[chosen](*args, **kwargs)
    jac_f.last_mode = None
    return jac_f


_MAX_SIGNATURES = 64  # output sizes jacobian(mode="auto") remembers per function


def _signature(value: Any) -> tuple | None:
    """A hashable key of ``value``'s pytree structure and its leaves' avals (other
    leaves as they are), or None when some part of it cannot be hashed."""
    try:
        leaves, tree = tree_flatten(value)
        key = (tree, tuple(get_aval(x) if is_array_like(x) else x for x in leaves))
        hash(key)
    except (PyTreeRegistrationError, TypeError):  # unhashable static data: not cached
        return None
    return key


def _eval_shape(f: Callable, tree: PyTreeDef, avals: Sequence[ShapedArray],
                has_aux: bool) -> list[ShapedArray]:
    """The avals of ``f``'s (main) outputs, found by staging without computing."""
    out_info = OutInfo()
    closed = trace_to_jaxpr(flat_fun(f, tree, out_info, has_aux, "jacobian"), list(avals))
    n = out_info.n
    return closed.out_avals[:n]


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian of a scalar function: ``jacfwd(jacrev(f))``.

    Args:
      f: scalar-valued function.
      argnums: argument(s) to differentiate.
      has_aux: if True, ``f`` returns ``(value, aux)``; the Hessian function
        then returns ``(hessian, aux)``, with ``aux`` as ``f`` computed it.
      holomorphic: ``f`` is holomorphic in its complex inputs: ``f''(z)``.
        Without it, inputs must be real.

    Returns:
      A function returning the Hessian with blocks of shape ``in.shape + in.shape``.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.hessian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    >>> h, aux = fd.hessian(lambda x: (fnp.sum(x ** 3), x.shape[0]), has_aux=True)(np.ones(2))
    >>> h.shape, aux
    ((2, 2), 2)
    """
    hess = jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)

    @boundary
    @wraps(f)
    def hessian_f(*args, **kwargs):
        if not holomorphic:  # name hessian, not its inner jacfwd, in the error
            nums = normalize_argnums(argnums, len(args), "hessian")
            leaves, _ = differentiable_leaves(args, nums, "hessian")
            if any(x.dtype.kind == "c" for x in leaves):
                check_complex_inputs(leaves, holomorphic, "hessian", complex_allowed=False)
        return hess(*args, **kwargs)
    return hessian_f


@boundary
def hvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product, without forming the Hessian.

    With no transform active it is the gradient of the directional derivative,
    ``grad(lambda *x: jvp(f, x, tangents)[1])`` (reverse over forward), which runs
    on the eager tape; under a transform (jit, vmap, an outer derivative) it is
    forward over reverse, ``jvp(grad(f), primals, tangents)[1]``. For an ``f``
    with continuous second derivatives the two are the same product.

    Args:
      f: scalar-valued function of the primals.
      primals: tuple of arguments.
      tangents: tuple of vectors shaped like the primals.

    Returns:
      The Hessian-vector product, shaped like the primals (a tuple when
      ``f`` takes several arguments, the bare value for one argument).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> fd.hvp(lambda z: 0.5 * z @ A @ z, (np.ones(2),), (np.array([1.0, 0.0]),))
    array([2., 1.])
    """
    if not isinstance(primals, (tuple, list)):
        raise InvalidArgumentError(
            "hvp expects primals and tangents as tuples or lists of arguments, e.g. "
            f"fd.hvp(f, (x,), (v,)); got {type(primals).__name__}.")
    argnums = tuple(range(len(primals)))
    f = _scalar_valued(f, "hvp")
    if tape.usable():
        # Eager, with no transform active: the gradient of the directional derivative
        # (reverse over forward), which runs on the tape; for an f whose second
        # derivatives are continuous the Hessian is symmetric and this is the same
        # product. Under a transform, where the tape is not used: forward over reverse.
        def directional(*xs):
            return _jvp(f, xs, tangents, False, "hvp")[1]
        out = grad(directional, argnums=argnums)(*primals)
    else:
        out = _jvp(grad(f, argnums=argnums), tuple(primals), tangents, False, "hvp")[1]
    return out[0] if len(primals) == 1 else out


def _scalar_valued(f: Callable, transform: str) -> Callable:
    """``f``, raising an error that names ``transform`` when it returns anything but
    one scalar (the products of the Hessian need a scalar function)."""
    @wraps(f)
    def scalar_f(*args):
        out = f(*args)
        if not is_array_like(out) or get_aval(out).shape != ():
            what = get_aval(out).str_short() if is_array_like(out) else type(out).__name__
            raise DifferentiationError(
                f"{transform} needs f to return one scalar, but f returned {what}. Reduce the "
                "output to the scalar whose curvature you want (e.g. .sum()), or use "
                "jacfwd(jacrev(f)) for the second derivatives of every output.")
        return out
    return scalar_f


def elementwise_grad(f: Callable, argnums: int | Sequence[int] = 0,
                     has_aux: bool = False) -> Callable:
    """The gradient of ``sum(f(x))``: for an elementwise ``f``, each output's derivative
    with respect to its own input (autograd's ``elementwise_grad``).

    It is one reverse pass pulling back a cotangent of ones, ``vjp(f, x)[1](ones)``:
    for any ``f`` with one array output, the sum of the Jacobian's rows. It nests
    (``elementwise_grad(elementwise_grad(f))`` is the second derivative of an
    elementwise ``f``) and composes with every transform.

    Args:
      f: function returning one floating-point array (of any shape).
      argnums: which positional argument(s) to differentiate (int or tuple).
      has_aux: if True, ``f`` returns ``(value, aux)`` and the result is
        ``(gradient, aux)``.

    Returns:
      A function with ``f``'s signature returning arrays shaped like the
      differentiated arguments.

    Raises:
      DifferentiationError: if ``f`` returns a pytree or an integer or boolean
        array, or an argument to differentiate is an integer or boolean array.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> fd.elementwise_grad(fnp.sin)(np.array([0.0, np.pi]))           # cos x
    array([ 1., -1.])
    >>> fd.elementwise_grad(fd.elementwise_grad(lambda x: x ** 3))(np.array([1.0, 2.0]))
    array([ 6., 12.])
    """
    name = "elementwise_grad"

    @boundary
    @wraps(f)
    def elementwise_grad_f(*args, **kwargs):
        nums = normalize_argnums(argnums, len(args), name)
        p_flat, p_tree = differentiable_leaves(args, nums, name)
        out_info = OutInfo()
        fk = (lambda *a: f(*a, **kwargs)) if kwargs else f
        f_flat = flat_fun(partial_on(fk, args, nums), p_tree, out_info, has_aux, name)
        outs, lin = reverse_flat(f_flat, p_flat)
        if out_info.tree.num_leaves != 1:
            raise DifferentiationError(
                f"elementwise_grad requires f to return one array, but it returned the "
                f"pytree {out_info.tree}. Apply it to each output, or use jacrev(f) or "
                "vjp(f, x) for a function of several outputs.")
        aval = lin.out_avals[0]
        if not dtypes.is_float(aval.dtype):
            raise DifferentiationError(
                f"elementwise_grad requires a floating-point output, but f returned "
                f"{aval.str_short()}: an integer or boolean result has no derivative. "
                "Return the float values to differentiate, and anything else as an aux "
                "value with has_aux=True.")
        ones = np.ones(aval.shape, aval.dtype)
        cts = pull_back(drop_outputs(lin, 1) if has_aux else lin, [ones], release=True)
        grads = tree_unflatten(p_tree, cts)
        if isinstance(argnums, int):
            grads = grads[0]
        if has_aux:
            return grads, out_info.aux_tree.unflatten(outs[out_info.n:])
        return grads
    return elementwise_grad_f


__all__ = ["jacfwd", "jacrev", "jacobian", "hessian", "hvp", "elementwise_grad"]
