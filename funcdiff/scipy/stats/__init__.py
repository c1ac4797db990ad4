"""funcdiff.scipy.stats: densities, cdfs and quantiles of common distributions, differentiable.

Each distribution is a module with scipy's method names and arguments
(``norm.logpdf(x, loc=0, scale=1)``, ``gamma.logpdf(x, a, loc=0, scale=1)``,
...), so ``from funcdiff.scipy.stats import norm`` and ``import
funcdiff.scipy.stats.norm as norm`` (autograd's spelling) both work. Every function
is a composition of ``funcdiff.scipy.special`` and funcdiff primitives, so derivatives with respect to the data *and* the parameters come
for free, to any order, under ``vmap`` and ``jit``. Arguments broadcast against
each other and are promoted like scipy's (integers become float64, float32
stays float32).

Values outside a distribution's support are ``-inf`` (log-densities) or 0
(densities), computed from a safe in-support stand-in and selected afterwards,
so their derivatives are exact zeros rather than NaN. Parameters are assumed
valid (positive scales, shapes and degrees of freedom); scipy returns NaN for
invalid parameters, funcdiff returns whatever the formula gives.

The cdf and sf of gamma, chi2, beta, poisson, binom and nbinom are the
regularized incomplete gamma and beta functions of ``funcdiff.scipy.special``,
differentiable in x, loc, scale and every shape (gamma's ``a``, chi2's ``df``,
beta's ``a`` and ``b``, nbinom's ``n``, t's ``df``); a derivative in a count
(``k``, binom's ``n``) raises a DifferentiationError naming it. Log-cdfs and
log-sfs take ``log1p`` of the complement above 1/2, so they keep their digits
near 0. Every distribution has a ppf: scipy's values, with the implicit
function theorem's derivatives (dx/dq = 1 / pdf) for the continuous ones, and
zero derivatives for the discrete ones, which are steps.

``norm.logcdf`` stays accurate and finite far into the left tail (it uses
``special.log_ndtr``). ``multivariate_normal.logpdf`` factors the covariance
by Cholesky and solves the triangular system (``funcdiff.numpy.linalg`` and
``funcdiff.scipy.linalg``), or, with ``allow_singular``, by ``eigh`` with
scipy's rank cutoff; ``multivariate_normal.entropy`` and ``dirichlet``
(logpdf, pdf, mean, var, entropy) complete the set.
"""

from funcdiff.scipy.stats import (beta, binom, cauchy, chi2, dirichlet, expon, gamma, laplace,
                                 logistic, multivariate_normal, nbinom, norm, poisson, t)

__all__ = ["norm", "t", "gamma", "beta", "poisson", "multivariate_normal", "expon", "laplace",
           "cauchy", "logistic", "chi2", "binom", "nbinom", "dirichlet"]
