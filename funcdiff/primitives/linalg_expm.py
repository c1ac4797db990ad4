"""The matrix exponential ``expm`` and its Fréchet derivative ``expm_frechet``.

``expm`` is scaling and squaring with Padé approximants (Higham 2005), the
degree and the number of squarings chosen per matrix of a stack. Its jvp is
``expm_frechet(a, e)``, the derivative in direction ``e``: the top-right block
of ``exp([[a, e], [0, a]])``. That is linear in ``e``, with the Fréchet
derivative at ``aᵀ`` as its transpose, and its derivative in ``a`` is again a
Fréchet derivative of the block matrix, so every order of every mode follows.
"""

from __future__ import annotations

import numpy as np

from funcdiff.core import Primitive, Zero, get_aval
from funcdiff.errors import DifferentiationError, ShapeError
from funcdiff.interpreters.transpose import is_undefined
from funcdiff.primitives import elementwise as ew
from funcdiff.primitives import slicing, structural
from funcdiff.primitives.cards import checked_impl
from funcdiff import dtypes
from funcdiff.primitives.linalg_common import (INEXACT, const, cost, leading_batch, mT,
                                               check_matrix)


# --- expm and its Fréchet derivative ------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# Padé degrees and the 1-norm bounds up to which each is accurate to unit roundoff.
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
_THETA = {np.dtype(np.float64): ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
                                 (7, 9.504178996162932e-1), (9, 2.097847961257068e0),
                                 (13, 5.371920351148152e0)),
          np.dtype(np.float32): ((3, 4.258730016922831e-1), (5, 1.880152677804762e0),
                                 (7, 3.925724783138660e0))}


def _pade(a, degree):
    """Numerator + denominator pieces ``(U, V)`` of the Padé approximant of ``exp(a)``."""
    b = _PADE[degree]
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    if degree == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
        return u, v
    powers = [eye, a2]
    while len(powers) <= degree // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum(b[2 * i + 1] * powers[i] for i in range(degree // 2 + 1))
    v = sum(b[2 * i] * powers[i] for i in range(degree // 2 + 1))
    return u, v


def _expm_impl(a):
    a = np.asarray(a)
    if a.dtype not in INEXACT or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("bad input")  # checked_impl reports the shape rule's error
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(flat)
    norms = np.abs(flat).sum(axis=-2).max(axis=-1) if flat.size else np.zeros(len(flat))
    thetas = _THETA[dtypes.real_dtype(a.dtype)]  # complex: the bounds of its precision
    degrees = np.full(len(flat), thetas[-1][0])
    squarings = np.zeros(len(flat), np.int64)
    for degree, theta in reversed(thetas):
        degrees[norms <= theta] = degree
    big = norms > thetas[-1][1]
    squarings[big] = np.ceil(np.log2(norms[big] / thetas[-1][1])).astype(np.int64)
    # Matrices sharing (degree, squarings) are computed together.
    for degree, s in set(zip(degrees.tolist(), squarings.tolist())):
        members = (degrees == degree) & (squarings == s)
        x = flat[members] / a.dtype.type(2.0 ** s)
        u, v = _pade(x, degree)
        r = np.linalg.solve(v - u, v + u)
        for _ in range(s):
            r = r @ r
        out[members] = r
    return out.reshape(a.shape)


def _expm_abstract_eval(a):
    check_matrix("expm", a)
    return a


def _block(a, e):
    """``[[a, e], [0, a]]`` in funcdiff ops (its exponential holds L(a, e) top right)."""
    nd = get_aval(a).ndim
    zeros = ew.mul(a, const(a, 0))
    top = structural.concatenate(a, e, dimension=nd - 1)
    bottom = structural.concatenate(zeros, a, dimension=nd - 1)
    return structural.concatenate(top, bottom, dimension=nd - 2)


def _top_right(x, n):
    shape = get_aval(x).shape
    return slicing.slice(x, start_indices=(0,) * (len(shape) - 2) + (0, n),
                            limit_indices=shape[:-2] + (n, 2 * n))


expm_p = Primitive("expm")
expm_p.abstract_eval = _expm_abstract_eval
expm_p.impl = checked_impl(_expm_impl, _expm_abstract_eval)
expm_p.jvp = lambda primals, tangents: (expm_p.bind(primals[0]),
                                        expm_frechet_p.bind(primals[0], tangents[0]))
expm_p.batch = leading_batch(expm_p)
expm_p.cost = cost(lambda m, n: 2 * n ** 3 * 7)  # Padé 13 (+ data-dependent squarings)

expm_frechet_p = Primitive("expm_frechet")


def _expm_frechet_impl(a, e):
    a, e = np.asarray(a), np.asarray(e)
    if a.shape != e.shape or a.dtype != e.dtype:
        raise ValueError("mismatched operands")  # checked_impl reports the shape rule's error
    n = a.shape[-1]
    block = np.zeros(a.shape[:-2] + (2 * n, 2 * n), a.dtype)
    block[..., :n, :n] = block[..., n:, n:] = a
    block[..., :n, n:] = e
    return _expm_impl(block)[..., :n, n:]


def _expm_frechet_abstract_eval(a, e):
    check_matrix("expm_frechet", a)
    if e != a:
        raise ShapeError(f"expm_frechet needs a direction e shaped like the matrix a, but got "
                         f"{a.str_short()} and {e.str_short()}.")
    return a


def _expm_frechet_jvp(primals, tangents):
    # L(A, E) is the top-right block of exp([[A, E], [0, A]]); its derivative in A along
    # Ȧ is the same block of L([[A, E], [0, A]], [[Ȧ, 0], [0, Ȧ]]). Linear in Ė.
    (a, e), (a_dot, e_dot) = primals, tangents
    out = expm_frechet_p.bind(a, e)
    n = get_aval(a).shape[-1]
    terms = []
    if type(a_dot) is not Zero:
        both = _block(a_dot, ew.mul(a_dot, const(a_dot, 0)))
        terms.append(_top_right(expm_frechet_p.bind(_block(a, e), both), n))
    if type(e_dot) is not Zero:
        terms.append(expm_frechet_p.bind(a, e_dot))
    return out, terms[0] if len(terms) == 1 else ew.add(*terms)


def _expm_frechet_transpose(ct, a, e):
    # ⟨C, L(A, E)⟩ = ⟨L(Aᵀ, C), E⟩ in the bilinear pairing ⟨X, Y⟩ = Σ X_ij Y_ij, for real
    # and (JAX's convention: never conjugated) complex matrices alike.
    if is_undefined(a):
        raise DifferentiationError("expm_frechet is linear only in its direction e; it "
                                   "cannot be transposed with respect to the matrix a")
    return [None, expm_frechet_p.bind(mT(a), ct)]


expm_frechet_p.abstract_eval = _expm_frechet_abstract_eval
expm_frechet_p.impl = checked_impl(_expm_frechet_impl, _expm_frechet_abstract_eval)
expm_frechet_p.jvp = _expm_frechet_jvp
expm_frechet_p.transpose = _expm_frechet_transpose
expm_frechet_p.batch = leading_batch(expm_frechet_p)
expm_frechet_p.cost = cost(lambda m, n, e: 16 * n ** 3 * 7)
