"""Tests of funcdiff.scipy.stats beyond log-densities: cdf, logcdf, sf, logsf, ppf, and
the distributions expon, laplace, cauchy, logistic, chi2, binom and nbinom (and t's
cdf family and ppf, the ppf of gamma, chi2, beta and the discrete distributions).

Two tables. GRID rows give one function, its scipy reference, a grid of points
including the edges of the support (where scipy gives 0, 1, -inf, inf or NaN)
and the parameters; values must equal scipy's within the row's relative
tolerance, with scipy's non-finite values exactly. DIFF rows give a function of
float arguments only (the integer ones closed over), one sampler per argument
on the interior of the domain: they drive check_grads to order 2 in both modes
against finite differences, jit against eager and vmap against a loop.
Arguments without a derivative are refused by name (last tests).
"""
import doctest
import importlib
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import DifferentiationError
from funcdiff.scipy import stats as T
from funcdiff.test_util import check_grads

st = pytest.importorskip("scipy.stats")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

CONTINUOUS = ("expon", "laplace", "cauchy", "logistic")
ADDED = CONTINUOUS + ("chi2", "binom", "nbinom")
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
X = np.array([-np.inf, -800.0, -40.0, -3.0, -1.0, -1e-9, 0.0, 1e-9, 0.3, 1.0, 2.5, 40.0, 800.0,
              np.inf])
Q = np.array([-0.5, 0.0, 1e-300, 1e-12, 0.1, 0.5, 0.7, 1 - 1e-12, 1.0, 1.5])


class Grid(NamedTuple):
    name: str
    fun: Callable
    ref: Callable
    rtol: float = 1e-12


# scipy's laplace log-functions are log(pdf), log(cdf), log(sf): -inf once those underflow.
# funcdiff's are exact there; the grid compares them with the closed form instead.
LAPLACE_TAILS = {
    "logpdf": lambda z: -np.abs(z) - np.log(2.0),
    "logcdf": lambda z: z - np.log(2.0),
    "logsf": lambda z: -z - np.log(2.0),
}


def _laplace_exact_where_scipy_underflows(method, ref):
    def fixed(x, loc, scale):
        value = ref(x, loc, scale)
        z = (x - loc) / scale
        underflow = np.isneginf(value) & np.isfinite(z)
        log_scale = np.log(scale) if method == "logpdf" else 0.0
        return np.where(underflow, LAPLACE_TAILS[method](z) - log_scale, value)
    return fixed


def _continuous_rows():
    rows = []
    for dist in CONTINUOUS:
        for method in METHODS + ("ppf",):
            ours, ref = getattr(getattr(T, dist), method), getattr(getattr(st, dist), method)
            if dist == "laplace" and method in LAPLACE_TAILS:
                ref = _laplace_exact_where_scipy_underflows(method, ref)
            points = Q if method == "ppf" else X
            for loc, scale in ((0.0, 1.0), (0.7, 2.5)):
                rows.append(Grid(f"{dist}.{method}[{loc},{scale}]",
                                 lambda o=ours, p=points, l=loc, s=scale: o(p, l, s),
                                 lambda r=ref, p=points, l=loc, s=scale: r(p, l, s)))
    return rows


def _shaped_rows(dist, methods, shapes, points, rtol=1e-12):
    """Rows of ``dist.method(points, *shape, loc, scale)`` for each shape tuple."""
    rows = []
    for method in methods:
        ours, ref = getattr(getattr(T, dist), method), getattr(getattr(st, dist), method)
        for shape in shapes:
            for loc, scale in ((0.0, 1.0), (0.7, 2.5)):
                args = (points, *shape, loc, scale)
                rows.append(Grid(f"{dist}.{method}{list(shape)}[{loc},{scale}]",
                                 lambda o=ours, a=args: o(*a), lambda r=ref, a=args: r(*a),
                                 rtol))
    return rows


XPOS = np.array([-np.inf, -1.0, 0.0, 1e-9, 0.3, 0.7, 1.0, 2.5, 8.0, 40.0, np.inf])
GAMMA_SHAPES = ((0.5,), (1.0,), (2.0,), (7.5,))
def _accurate_log(dist, method):
    """scipy's discrete logcdf/logsf are log(cdf)/log(sf), which lose the digits of a
    probability near 1; the reference is log(p) up to 1/2 and log1p(-complement) above,
    from scipy's cdf and sf."""
    first, second = ("cdf", "sf") if method == "logcdf" else ("sf", "cdf")
    def ref(*args):
        p, q = getattr(st, dist).__getattribute__(first)(*args), getattr(st, dist).__getattribute__(second)(*args)
        with np.errstate(divide="ignore"):
            return np.where(p <= 0.5, np.log(p), np.log1p(-q))
    return ref


def _discrete_rows(dist, shapes, points, rtol=1e-12):
    rows = []
    for method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
        ours = getattr(getattr(T, dist), method)
        ref = _accurate_log(dist, method) if method.startswith("log") and method != "logpmf" \
            else getattr(getattr(st, dist), method)
        for shape in shapes:
            for loc in (0, 2):
                args = (points, *shape, loc)
                rows.append(Grid(f"{dist}.{method}{list(shape)}[{loc}]",
                                 lambda o=ours, a=args: o(*a), lambda r=ref, a=args: r(*a),
                                 rtol))
    return rows


K = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 8.0, 20.0, 60.0])
GRID = _continuous_rows()
GRID += _discrete_rows("poisson", ((0.0,), (0.3,), (2.0,), (12.5,)), K, 1e-11)
GRID += _discrete_rows("binom", ((0, 0.3), (1, 0.5), (5, 0.0), (5, 1.0), (8, 0.3), (20, 0.05)),
                       K, 1e-11)
GRID += _discrete_rows("nbinom", ((1.0, 1.0), (2.0, 0.5), (0.7, 0.2), (6.5, 0.9)), K, 1e-11)
GRID += _shaped_rows("gamma", METHODS, GAMMA_SHAPES, XPOS, 1e-11)
XUNIT = np.array([-np.inf, -0.5, 0.0, 1e-9, 0.1, 0.3, 0.5, 0.9, 1 - 1e-9, 1.0, 2.0, np.inf])
GRID += _shaped_rows("beta", ("cdf", "logcdf", "sf", "logsf"),
                     ((0.5, 0.5), (1.0, 1.0), (2.0, 3.0), (7.5, 0.8)), XUNIT, 1e-11)
GRID += _shaped_rows("chi2", METHODS, ((1.0,), (2.0,), (3.0,), (15.0,)), XPOS, 1e-11)
T_SHAPES = ((0.7,), (1.0,), (3.0,), (12.5,), (200.0,))
GRID += _shaped_rows("t", ("cdf", "logcdf", "sf", "logsf"), T_SHAPES, X, 1e-11)
GRID += _shaped_rows("t", ("ppf",), T_SHAPES, Q, 1e-11)
GRID += _shaped_rows("gamma", ("ppf",), GAMMA_SHAPES, Q, 1e-11)
GRID += _shaped_rows("chi2", ("ppf",), ((1.0,), (2.0,), (15.0,)), Q, 1e-11)
GRID += _shaped_rows("beta", ("ppf",), ((0.5, 0.5), (1.0, 1.0), (2.0, 3.0), (7.5, 0.8)), Q,
                     1e-11)


def _discrete_ppf_rows(dist, shapes):
    ours, ref = getattr(T, dist).ppf, getattr(st, dist).ppf
    return [Grid(f"{dist}.ppf{list(shape)}[{loc}]", lambda s=shape, l=loc: ours(Q, *s, l),
                 lambda s=shape, l=loc: ref(Q, *s, l)) for shape in shapes for loc in (0, 2)]


GRID += _discrete_ppf_rows("poisson", ((0.3,), (2.0,), (12.5,)))
GRID += _discrete_ppf_rows("binom", ((1, 0.5), (8, 0.3), (20, 0.05)))
GRID += _discrete_ppf_rows("nbinom", ((1.0, 1.0), (2.0, 0.5), (6.5, 0.9)))


@pytest.mark.parametrize("row", GRID, ids=[r.name for r in GRID])
def test_values_match_scipy_on_grids_with_edges(row):
    ours, ref = np.asarray(row.fun()), np.asarray(row.ref())
    assert ours.shape == ref.shape and ours.dtype == np.float64
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(ours[~finite], ref[~finite])  # NaN, -inf, inf where scipy's
    np.testing.assert_allclose(ours[finite], ref[finite], rtol=row.rtol, atol=0)


def U(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def N(rng, shape):
    return rng.standard_normal(shape)


class Diff(NamedTuple):
    name: str
    fun: Callable          # of float arguments only
    domain: tuple          # one sampler per argument


LOC_SCALE = (N, U(0.5, 2))
DIFF = [Diff(f"{dist}.{method}", getattr(getattr(T, dist), method), (N,) + LOC_SCALE)
        for dist in CONTINUOUS for method in METHODS if dist != "laplace"]
DIFF += [Diff(f"laplace.{method}", getattr(T.laplace, method), (U(0.3, 2),) + (U(-0.2, 0.2),)
              + LOC_SCALE[1:]) for method in METHODS]
DIFF += [Diff("expon.logpdf_positive", T.expon.logpdf, (U(1.5, 3), U(-0.5, 0.5), U(0.5, 2))),
         Diff("expon.cdf_positive", T.expon.cdf, (U(1.5, 3), U(-0.5, 0.5), U(0.5, 2))),
         Diff("expon.logcdf_positive", T.expon.logcdf, (U(1.5, 3), U(-0.5, 0.5), U(0.5, 2))),
         Diff("expon.logsf_positive", T.expon.logsf, (U(1.5, 3), U(-0.5, 0.5), U(0.5, 2)))]
DIFF = [d for d in DIFF if not d.name.startswith("expon.") or d.name.endswith("_positive")]
DIFF += [Diff(f"{dist}.ppf", getattr(T, dist).ppf, (U(0.2, 0.8),) + LOC_SCALE)
         for dist in CONTINUOUS]
SHAPED_X = (U(1.0, 3.0), U(0.5, 3.0), U(-0.3, 0.3), U(0.8, 1.5))  # x, shape, loc, scale
DIFF += [Diff(f"{dist}.{method}", getattr(getattr(T, dist), method), SHAPED_X)
         for dist in ("gamma", "chi2") for method in ("logpdf", "pdf")]
DIFF += [Diff(f"{dist}.{method}", lambda x, loc, scale, f=getattr(getattr(T, dist), method):
              f(x, 2.5, loc, scale), SHAPED_X[:1] + SHAPED_X[2:])
         for dist in ("gamma", "chi2") for method in ("cdf", "logcdf", "sf", "logsf")]
KS = np.array([0.0, 1.0, 3.0, 6.0])
for method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
    DIFF += [
        Diff(f"poisson.{method}", lambda mu, f=getattr(T.poisson, method): f(KS, mu),
             (U(0.5, 5),)),
        Diff(f"binom.{method}", lambda p, f=getattr(T.binom, method): f(KS, 7, p),
             (U(0.2, 0.8),)),
        Diff(f"nbinom.{method}", lambda p, f=getattr(T.nbinom, method): f(KS, 2.5, p),
             (U(0.2, 0.8),)),
    ]
DIFF += [Diff("nbinom.logpmf_in_n", lambda n, p: T.nbinom.logpmf(KS, n, p),
              (U(0.5, 4), U(0.2, 0.8))),
         Diff("nbinom.pmf_in_n", lambda n, p: T.nbinom.pmf(KS, n, p), (U(0.5, 4), U(0.2, 0.8)))]
DIFF += [Diff(f"beta.{method}", lambda x, loc, scale, f=getattr(T.beta, method):
              f(x, 2.5, 1.5, loc, scale), (U(0.4, 0.6), U(-0.05, 0.05), U(0.95, 1.05)))
         for method in ("cdf", "logcdf", "sf", "logsf")]
DIFF += [Diff(f"t.{method}", getattr(T.t, method), (N, U(1.5, 8)) + LOC_SCALE)
         for method in ("cdf", "logcdf", "sf", "logsf")]
Q_SHAPE_LOC_SCALE = (U(0.2, 0.8), U(0.8, 4.0), U(-0.3, 0.3), U(0.8, 1.5))
DIFF += [Diff(f"{dist}.ppf", getattr(T, dist).ppf, Q_SHAPE_LOC_SCALE)
         for dist in ("t", "gamma", "chi2")]
DIFF += [Diff("beta.ppf", T.beta.ppf, Q_SHAPE_LOC_SCALE[:2] + Q_SHAPE_LOC_SCALE[1:])]
DIFF_IDS = [d.name for d in DIFF]


def args_of(row, seed=0, shape=(4,)):
    rng = np.random.default_rng(seed)
    return tuple(sample(rng, shape) for sample in row.domain)


@pytest.mark.parametrize("row", DIFF, ids=DIFF_IDS)
def test_derivatives_order_2_both_modes(row):
    check_grads(row.fun, args_of(row, seed=1), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("row", DIFF, ids=DIFF_IDS)
def test_jit_matches_eager(row):
    args = args_of(row, seed=2)
    np.testing.assert_allclose(fd.jit(row.fun)(*args), row.fun(*args), rtol=1e-14, atol=1e-14)
    g = fd.grad(lambda *a: np.sum(row.fun(*a)), argnums=tuple(range(len(args))))
    for got, want in zip(fd.jit(g)(*args), g(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("row", DIFF, ids=DIFF_IDS)
def test_vmap_matches_loop(row):
    rng = np.random.default_rng(3)
    batched = tuple(np.stack([s(rng, (4,)) for _ in range(3)]) for s in row.domain)
    out = fd.vmap(row.fun)(*batched)
    loop = np.stack([row.fun(*[b[i] for b in batched]) for i in range(3)])
    np.testing.assert_allclose(out, loop, rtol=1e-13, atol=1e-13)
    g = fd.vmap(fd.grad(lambda *a: np.sum(row.fun(*a))))(*batched)
    g_loop = np.stack([fd.grad(lambda *a: np.sum(row.fun(*a)))(*[b[i] for b in batched])
                       for i in range(3)])
    np.testing.assert_allclose(g, g_loop, rtol=1e-12, atol=1e-12)


def test_derivatives_in_x_are_the_density():
    x = np.array([-1.3, 0.2, 2.0])
    for dist in CONTINUOUS:
        d = getattr(T, dist)
        dx = fd.vmap(fd.grad(d.cdf))(x)
        np.testing.assert_allclose(dx, d.pdf(x), rtol=1e-12, err_msg=dist)
        np.testing.assert_allclose(fd.vmap(fd.grad(d.sf))(x), -d.pdf(x), rtol=1e-12)


def test_quantiles_invert_the_cdfs_and_their_derivatives():
    q = np.array([0.05, 0.4, 0.93])
    for dist, params in (("t", (3.5,)), ("gamma", (2.5,)), ("chi2", (4.0,)),
                         ("beta", (2.5, 1.5))):
        d = getattr(T, dist)
        axes = (0,) + (None,) * len(params)
        x = d.ppf(q, *params)
        np.testing.assert_allclose(d.cdf(x, *params), q, rtol=1e-12, err_msg=dist)
        # dx/dq = 1 / pdf(x), and dx/dtheta = -(dF/dtheta) / pdf(x)
        np.testing.assert_allclose(fd.vmap(fd.grad(d.ppf), in_axes=axes)(q, *params), 1 / d.pdf(x, *params),
                                   rtol=1e-10, err_msg=dist)
        dppf = fd.vmap(fd.grad(d.ppf, argnums=1), in_axes=axes)(q, *params)
        dcdf = fd.vmap(fd.grad(d.cdf, argnums=1), in_axes=axes)(x, *params)
        np.testing.assert_allclose(dppf, -dcdf / d.pdf(x, *params), rtol=1e-9, err_msg=dist)


def test_discrete_quantiles_are_steps_with_zero_derivatives():
    for f, args in ((T.poisson.ppf, (0.4, 3.0)), (T.binom.ppf, (0.4, 10.0, 0.3)),
                    (T.nbinom.ppf, (0.4, 2.5, 0.3))):
        grads = fd.grad(f, argnums=tuple(i for i in range(len(args)) if f is not T.binom.ppf
                                         or i != 1))(*args)
        assert all(float(g) == 0.0 for g in grads)
    with pytest.raises(DifferentiationError, match="argument n\\b"):
        fd.grad(T.binom.ppf, argnums=1)(0.4, 10.0, 0.3)


def test_derivatives_finite_off_the_support():
    for f in (T.expon.logpdf, T.expon.cdf, T.expon.sf, T.expon.logsf):
        for g in fd.grad(f, argnums=(0, 1, 2))(-1.0, 0.0, 1.0):
            assert float(g) == 0.0, f


def test_far_tails_stay_finite_with_finite_derivatives():
    assert float(T.laplace.logcdf(-1e4)) == -1e4 - np.log(2)
    assert float(fd.grad(T.laplace.logcdf)(-1e4)) == 1.0
    assert float(fd.grad(T.logistic.logsf)(1e4)) == -1.0
    assert np.isfinite(float(fd.grad(T.cauchy.logpdf)(1e200)))


def test_modules_import_by_name_and_show_public_names_only():
    for name in ADDED:
        module = importlib.import_module(f"funcdiff.scipy.stats.{name}")
        assert getattr(T, name) is module and name in T.__all__
        assert sorted(dir(module)) == sorted(module.__all__)


@pytest.mark.parametrize("name", ADDED + ("gamma", "beta", "poisson", "t"))
def test_docstring_examples(name):
    module = importlib.import_module(f"funcdiff.scipy.stats.{name}")
    result = doctest.testmod(module, extraglobs={"np": np}, report=True,
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("f, argnum, argument", [
    (T.poisson.logpmf, 0, "k"), (T.poisson.pmf, 0, "k"), (T.poisson.cdf, 0, "k"),
    (T.poisson.logsf, 0, "k"), (T.binom.logpmf, 0, "k"), (T.binom.logpmf, 1, "n"),
    (T.binom.cdf, 0, "k"), (T.binom.sf, 1, "n"), (T.binom.logcdf, 1, "n"),
    (T.nbinom.logpmf, 0, "k"), (T.nbinom.cdf, 0, "k"),
])
def test_missing_derivatives_are_refused_by_name(f, argnum, argument):
    dist = f.__module__.rsplit(".", 1)[1]
    args, other = {"poisson": ([2.0, 1.5, 0.0], 1), "binom": ([2.0, 5.0, 0.3, 0.0], 2),
                   "nbinom": ([2.0, 5.0, 0.3, 0.0], 2),
                   "beta": ([0.3, 2.0, 3.0], 0)}.get(dist, ([1.5, 2.5, 0.0, 1.0], 0))
    for transform in (lambda g: fd.grad(g, argnums=argnum),
                      lambda g: fd.jacfwd(g, argnums=argnum)):
        with pytest.raises(DifferentiationError, match=f"argument {argument}\\b"):
            transform(f)(*args)
    stopped = lambda *a: f(*a[:argnum], fd.stop_gradient(a[argnum]), *a[argnum + 1:])  # noqa
    g = fd.grad(stopped, argnums=(other, argnum))(*args)
    assert float(g[1]) == 0.0 and float(g[0]) != 0.0  # with stop_gradient: the others only


def test_shape_derivative_of_the_density_matches_finite_differences():
    """d/da of gamma.logpdf and d/ddf of chi2.logpdf: central differences."""
    for f, shape in ((T.gamma.logpdf, 2.5), (T.chi2.logpdf, 3.0)):
        h = 1e-6
        fd_value = (f(1.7, shape + h) - f(1.7, shape - h)) / (2 * h)
        np.testing.assert_allclose(fd.grad(f, argnums=1)(1.7, shape), fd_value, rtol=1e-7)
