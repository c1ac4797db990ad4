"""The matrix exponential ``expm`` and its Fréchet derivative ``expm_frechet``.

``expm`` is scaling and squaring with Padé approximants (Higham 2005), the
degree and the number of squarings chosen per matrix of a stack. Its cards, and
the Fréchet derivative's (the top-right block of ``exp([[a, e], [0, a]])``,
differentiable to every order), come from ``matrix_functions``.
"""

from __future__ import annotations

import numpy as np

from funcdiff import dtypes
from funcdiff.primitives.matrix_functions import matrix_function


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


# expm costs 7 matrix products of Padé 13 (plus data-dependent squarings)
expm_p, expm_frechet_p = matrix_function("expm", _expm_impl, flops=2 * 7)
