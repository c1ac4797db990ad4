"""Primary matrix functions f(A) (expm, sqrtm, logm) and their Fréchet derivatives.

``matrix_function(name, impl, flops)`` makes the two cards of one function
from the numpy routine ``impl`` computing f on a stack of square matrices:

- ``name``: f(a); its jvp is the Fréchet derivative ``name_frechet(a, e)``.
- ``name_frechet``: L(a, e), the top-right block of f([[a, e], [0, a]]) (the
  block matrix's function holds the derivative there for every primary matrix
  function). It is linear in ``e``, with L(aᵀ, ·) as its transpose (the
  bilinear pairing, never conjugated, as JAX's), and its derivative in ``a``
  along ȧ is the same block of L([[a, e], [0, a]], [[ȧ, 0], [0, ȧ]]), so every
  order of every mode follows from the one impl.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from funcdiff.core import Primitive, Zero, get_aval
from funcdiff.errors import DifferentiationError, ShapeError
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import slicing, structural
from funcdiff.primitives.cards import checked_impl
from funcdiff.primitives.linalg_common import (INEXACT, check_matrix, const, cost,
                                               leading_batch, mT)


def frechet_block(a, e):
    """``[[a, e], [0, a]]`` in funcdiff ops."""
    nd = get_aval(a).ndim
    zeros = ew.mul(a, const(a, 0))
    top = structural.concatenate(a, e, dimension=nd - 1)
    bottom = structural.concatenate(zeros, a, dimension=nd - 1)
    return structural.concatenate(top, bottom, dimension=nd - 2)


def top_right_block(x, n):
    """The top-right (n, n) block of the stacked (2n, 2n) matrices ``x``."""
    shape = get_aval(x).shape
    return slicing.slice(x, start_indices=(0,) * (len(shape) - 2) + (0, n),
                         limit_indices=shape[:-2] + (n, 2 * n))


def square_stack(a) -> np.ndarray:
    """``a`` as an array of square inexact matrices, else ValueError (which
    ``checked_impl`` turns into the shape rule's funcdiff error)."""
    a = np.asarray(a)
    if a.dtype not in INEXACT or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("bad input")
    return a


def matrix_function(name: str, impl: Callable, flops: int) -> tuple[Primitive, Primitive]:
    """The cards ``name`` (f) and ``name_frechet`` (its Fréchet derivative) for the
    primary matrix function computed on stacks of square matrices by ``impl``;
    ``flops`` per n**3 of one matrix."""
    f_p, frechet_p = Primitive(name), Primitive(f"{name}_frechet")

    def f_abstract_eval(a):
        check_matrix(name, a)
        return a

    def frechet_impl(a, e):
        a, e = square_stack(a), np.asarray(e)
        if a.shape != e.shape or a.dtype != e.dtype:
            raise ValueError("mismatched operands")
        n = a.shape[-1]
        block = np.zeros(a.shape[:-2] + (2 * n, 2 * n), a.dtype)
        block[..., :n, :n] = block[..., n:, n:] = a
        block[..., :n, n:] = e
        return impl(block)[..., :n, n:]

    def frechet_abstract_eval(a, e):
        check_matrix(f"{name}_frechet", a)
        if e != a:
            raise ShapeError(f"{name}_frechet needs a direction e shaped like the matrix a, "
                             f"but got {a.str_short()} and {e.str_short()}.")
        return a

    def frechet_jvp(primals, tangents):
        (a, e), (a_dot, e_dot) = primals, tangents
        out = frechet_p.bind(a, e)
        n = get_aval(a).shape[-1]
        terms = []
        if type(a_dot) is not Zero:
            both = frechet_block(a_dot, ew.mul(a_dot, const(a_dot, 0)))
            terms.append(top_right_block(frechet_p.bind(frechet_block(a, e), both), n))
        if type(e_dot) is not Zero:
            terms.append(frechet_p.bind(a, e_dot))
        return out, terms[0] if len(terms) == 1 else ew.add(*terms)

    def frechet_transpose(ct, a, e):
        if is_undefined(a):
            raise DifferentiationError(f"{name}_frechet is linear only in its direction e; it "
                                       "cannot be transposed with respect to the matrix a")
        return [None, frechet_p.bind(mT(a), ct)]

    f_p.abstract_eval = f_abstract_eval
    f_p.impl = checked_impl(lambda a: impl(square_stack(a)), f_abstract_eval)
    f_p.jvp = lambda primals, tangents: (f_p.bind(primals[0]),
                                         frechet_p.bind(primals[0], tangents[0]))
    f_p.batch = leading_batch(f_p)
    f_p.cost = cost(lambda m, n: flops * n ** 3)
    frechet_p.abstract_eval = frechet_abstract_eval
    frechet_p.impl = checked_impl(frechet_impl, frechet_abstract_eval)
    frechet_p.jvp = frechet_jvp
    frechet_p.transpose = frechet_transpose
    frechet_p.batch = leading_batch(frechet_p)
    frechet_p.cost = cost(lambda m, n, e: 8 * flops * n ** 3)
    return f_p, frechet_p
