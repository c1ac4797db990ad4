"""funcdiff.scipy.special: scipy's special functions, differentiable in every mode.

Each function is a composition of funcdiff primitives (``erf``, ``lgamma``,
``digamma``, ``polygamma``, ``logistic`` ...) and ``funcdiff.numpy``, so it is
differentiated to any order, batched and compiled without rules of its own.
Arguments are promoted like scipy's ufuncs: integers become float64, float32
stays float32.

Two kinds of care keep values and derivatives finite where the naive formula
is not:

- *Conventions at singular points* (``xlogy(0, 0) = 0``, ``entr(0) = 0``) are
  taken with a safe input: the singular argument is replaced by a harmless value
  *before* the log, and the result is selected afterwards. A select sends an
  exact zero cotangent to the unselected branch, and singular derivatives are
  formed with ``safe_mul``, so no ``0 * inf`` turns into NaN.
- *Reductions of exponentials* (``logsumexp``, ``softmax``, ``log_softmax``)
  shift by the maximum first. The shift goes through ``stop_gradient``: the
  result does not depend on it mathematically, so its derivative is exactly the
  softmax weights, and it stays finite for inputs of any magnitude.

Derivative conventions: at ``x = 0`` the derivatives of ``xlogy(x, y)`` are
``(log y, 0)`` for ``y > 0`` and ``(0, 0)`` for ``y <= 0``; ``entr'(0)`` is 0
(the one-sided limit is +inf); ``logsumexp`` with ``return_sign=True`` gives the
sign a zero derivative.

The functions live in private modules by concept, and are re-exported here:
``_special_erf`` (error function and normal distribution), ``_special_gamma``
(gamma function and its relatives), ``_special_xlogy`` (x log y and entropy),
``_special_logsumexp`` (logistic function, logsumexp, softmax, log_softmax),
``_special_util`` (argument promotion), and three whose values are scipy.special's
own, bit for bit, with funcdiff's derivative rules (scipy is imported at the first
call, so ``import funcdiff`` does not need it): ``_special_bessel`` (j0 ... kve,
derivatives in x at a static order), ``_special_integrals`` (expi, exp1, spence,
zeta, gammainc, gammaincc, betainc) and ``_special_relatives`` (rgamma, gammasgn,
multigammaln, erfcinv).
"""

from __future__ import annotations

# _floats, _c, _max_shift, _softmax, _log_softmax and _softplus are shared with
# funcdiff.scipy.stats and funcdiff.nn.
from funcdiff.scipy._special_erf import (  # noqa: F401  re-exported
    erf, erfc, erfinv, log_ndtr, ndtr, ndtri)
from funcdiff.scipy._special_gamma import (  # noqa: F401  re-exported
    beta, betaln, digamma, gamma, gammaln, polygamma, psi)
from funcdiff.scipy._special_xlogy import entr, xlog1py, xlogy  # noqa: F401  re-exported
from funcdiff.scipy._special_logsumexp import (  # noqa: F401  re-exported
    _log_softmax, _max_shift, _softmax, _softplus, expit, log_expit, log_softmax, logit,
    logsumexp, softmax)
from funcdiff.scipy._special_bessel import (  # noqa: F401  re-exported
    i0e, i1e, iv, ive, j0, j1, jn, jv, kv, kve, y0, y1, yn, yv)
from funcdiff.scipy._special_integrals import (  # noqa: F401  re-exported
    betainc, exp1, expi, gammainc, gammaincc, spence, zeta)
from funcdiff.scipy._special_relatives import (  # noqa: F401  re-exported
    erfcinv, gammasgn, multigammaln, rgamma)

__all__ = [
    "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "log_expit",
    "gammaln", "digamma", "psi", "polygamma", "gamma", "beta", "betaln", "xlogy", "xlog1py",
    "entr", "logsumexp", "softmax", "log_softmax",
    # values from scipy.special itself (imported at first use), derivatives funcdiff's
    "j0", "j1", "jn", "jv", "y0", "y1", "yn", "yv", "iv", "ive", "i0e", "i1e", "kv", "kve",
    "expi", "exp1", "spence", "erfcinv", "rgamma", "gammasgn", "multigammaln", "zeta",
    "gammainc", "gammaincc", "betainc",
]


def __dir__() -> list[str]:  # dir() shows the public names only, not the imports
    return sorted(__all__)
