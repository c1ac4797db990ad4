"""fd.random: keys, every sampler against its distribution, transforms and derivatives.

Keys are fixed, so every statistical check is deterministic; its tolerance
is loose enough for any key (a Kolmogorov-Smirnov p-value above 1e-4).
"""

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError

r = fd.random
KEY = r.key(2024)
N = 4000


def test_keys_are_uint32_pairs_and_legacy_keys_are_the_same():
    assert r.key(42).dtype == np.uint32 and r.key(42).tolist() == [0, 42]
    assert r.key(2**40 + 5).tolist() == [256, 5]
    assert r.key(-1).tolist() == [2**32 - 1, 2**32 - 1]
    assert np.array_equal(r.PRNGKey(7), r.key(7))
    assert np.array_equal(fd.jit(r.key)(np.int64(2**40 + 5)), r.key(2**40 + 5))


def test_same_key_same_numbers_other_keys_other_numbers():
    x = r.normal(KEY, (100,))
    assert np.array_equal(x, r.normal(r.key(2024), (100,)))
    children = list(r.split(KEY, 3)) + [r.fold_in(KEY, 0), r.fold_in(KEY, 1)]
    streams = [x] + [r.normal(k, (100,)) for k in children]
    for i in range(len(streams)):
        for j in range(i):
            assert not np.any(streams[i] == streams[j])
            assert abs(np.corrcoef(streams[i], streams[j])[0, 1]) < 0.35
    assert np.array_equal(r.split(KEY), r.split(KEY))
    assert np.array_equal(r.fold_in(KEY, 3), r.fold_in(KEY, 3 + 2**32))  # data modulo 2**32
    # split's keys are not the bits sampling reads
    assert not np.array_equal(r.split(KEY, 1)[0], r.bits(KEY, (2,)))


def test_reproducible_across_processes():
    # the bits are numpy's Philox-4x64-10 keyed by the key's 64 bits (a specified
    # counter-based generator: the same numbers on every platform and in every process)
    words = np.random.Philox(key=(5 << 32) | 7, counter=0).random_raw(2)
    halves = [int(w) >> s & 0xFFFFFFFF for w in words for s in (0, 32)]
    assert r.bits(np.array([5, 7], np.uint32), (3,)).tolist() == halves[:3]
    assert r.bits(np.array([5, 7], np.uint32), (2,), np.uint64).tolist() == words.tolist()


def test_shapes_and_dtypes():
    assert r.normal(KEY).shape == () and r.normal(KEY).dtype == np.float64
    assert r.uniform(KEY, (2, 3), np.float32).dtype == np.float32
    assert r.gamma(KEY, np.ones(3)).shape == (3,)
    assert r.gamma(KEY, np.ones(3), (2, 3)).shape == (2, 3)
    assert r.beta(KEY, 2.0, np.ones((2, 1)), (2, 4)).shape == (2, 4)
    assert r.dirichlet(KEY, np.ones(4), (5,)).shape == (5, 4)
    assert r.multivariate_normal(KEY, np.zeros(3), np.eye(3)).shape == (3,)
    assert r.multivariate_normal(KEY, np.zeros((2, 3)), np.eye(3), (4, 2)).shape == (4, 2, 3)
    assert r.categorical(KEY, np.zeros((2, 5)), axis=1, shape=(3, 2)).shape == (3, 2)
    assert r.categorical(KEY, np.zeros((5, 2)), axis=0).shape == (2,)
    assert r.randint(KEY, (3,), 0, 5, np.int32).dtype == np.int32
    assert r.bernoulli(KEY, 0.5, (3,)).dtype == np.bool_
    assert r.bits(KEY, (2,), np.uint16).dtype == np.uint16
    assert r.random_bits(KEY, (2,), np.uint64).dtype == np.uint64
    assert r.choice(KEY, np.arange(12.0).reshape(3, 4), (2,), axis=1).shape == (3, 2)
    assert r.split(KEY, (2, 3)).shape == (2, 3, 2)


def _ks(samples, cdf):
    return st.kstest(np.ravel(samples), cdf).pvalue


CONTINUOUS = [  # (id, sampler, reference cdf, mean, variance)
    ("uniform", lambda k: r.uniform(k, (N,), minval=-1.0, maxval=3.0),
     st.uniform(-1, 4).cdf, 1.0, 16 / 12),
    ("normal", lambda k: r.normal(k, (N,)), st.norm.cdf, 0.0, 1.0),
    ("normal32", lambda k: r.normal(k, (N,), np.float32), st.norm.cdf, 0.0, 1.0),
    ("truncated_normal", lambda k: r.truncated_normal(k, -0.5, 2.0, (N,)),
     st.truncnorm(-0.5, 2.0).cdf, st.truncnorm(-0.5, 2.0).mean(), st.truncnorm(-0.5, 2.0).var()),
    ("truncated_normal_tail", lambda k: r.truncated_normal(k, 3.0, 5.0, (N,)),
     st.truncnorm(3.0, 5.0).cdf, st.truncnorm(3.0, 5.0).mean(), st.truncnorm(3.0, 5.0).var()),
    ("exponential", lambda k: r.exponential(k, (N,)), st.expon.cdf, 1.0, 1.0),
    ("laplace", lambda k: r.laplace(k, (N,)), st.laplace.cdf, 0.0, 2.0),
    ("logistic", lambda k: r.logistic(k, (N,)), st.logistic.cdf, 0.0, np.pi ** 2 / 3),
    ("gumbel", lambda k: r.gumbel(k, (N,)), st.gumbel_r.cdf, np.euler_gamma, np.pi ** 2 / 6),
    ("cauchy", lambda k: r.cauchy(k, (N,)), st.cauchy.cdf, None, None),
    ("gamma_small", lambda k: r.gamma(k, 0.3, (N,)), st.gamma(0.3).cdf, 0.3, 0.3),
    ("gamma_1", lambda k: r.gamma(k, 1.0, (N,)), st.gamma(1.0).cdf, 1.0, 1.0),
    ("gamma_large", lambda k: r.gamma(k, 25.0, (N,)), st.gamma(25.0).cdf, 25.0, 25.0),
    ("gamma32", lambda k: r.gamma(k, 2.5, (N,), np.float32), st.gamma(2.5).cdf, 2.5, 2.5),
    ("beta", lambda k: r.beta(k, 2.0, 5.0, (N,)), st.beta(2, 5).cdf, 2 / 7, st.beta(2, 5).var()),
    ("beta_small", lambda k: r.beta(k, 0.5, 0.5, (N,)), st.beta(0.5, 0.5).cdf, 0.5, 0.125),
    ("dirichlet_marginal", lambda k: r.dirichlet(k, np.array([1.0, 2.0, 3.0]), (N,))[:, 2],
     st.beta(3, 3).cdf, 0.5, st.beta(3, 3).var()),
    ("t", lambda k: r.t(k, 5.0, (N,)), st.t(5).cdf, 0.0, 5 / 3),
    ("mvn_projection", lambda k: r.multivariate_normal(
        k, np.array([1.0, -1.0]), np.array([[2.0, 0.6], [0.6, 1.0]]), (N,)) @ np.array([1.0, 2.0]),
     st.norm(-1.0, np.sqrt(2.0 + 4 * 0.6 + 4.0)).cdf, -1.0, 8.4),
]


@pytest.mark.parametrize("sampler,cdf,mean,var", [c[1:] for c in CONTINUOUS],
                         ids=[c[0] for c in CONTINUOUS])
def test_samples_follow_the_distribution(sampler, cdf, mean, var):
    x = np.asarray(sampler(KEY), dtype=np.float64)
    assert np.all(np.isfinite(x))
    assert _ks(x, cdf) > 1e-4
    if mean is not None:
        assert abs(x.mean() - mean) < 5 * np.sqrt(var / x.size)
        assert abs(x.var() / var - 1) < 0.15


def test_discrete_samplers_match_their_probabilities():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    for counts in (np.bincount(r.categorical(KEY, np.log(p), shape=(N,)), minlength=4),
                   np.bincount(r.choice(KEY, 4, (N,), p=p), minlength=4)):
        assert st.chisquare(counts, N * p).pvalue > 1e-4
    ints = r.randint(KEY, (N,), -2, 3)
    assert set(ints.tolist()) == {-2, -1, 0, 1, 2}
    assert st.chisquare(np.bincount(ints + 2), np.full(5, N / 5)).pvalue > 1e-4
    b = r.bernoulli(KEY, np.array([0.1, 0.9]), (N, 2))
    assert np.all(np.abs(b.mean(axis=0) - [0.1, 0.9]) < 0.03)
    assert r.bernoulli(KEY, 0.0, (100,)).sum() == 0 and r.bernoulli(KEY, 1.0, (100,)).all()
    # each position of a permutation is uniform over the values
    first = np.array([r.permutation(k, 4)[0] for k in r.split(KEY, 400)])
    assert st.chisquare(np.bincount(first, minlength=4)).pvalue > 1e-4


def test_permutation_and_choice_without_replacement():
    x = np.arange(20.0).reshape(4, 5)
    assert np.array_equal(np.sort(r.permutation(KEY, x, axis=1), axis=1), x)
    rows = r.permutation(KEY, x, axis=0)
    assert sorted(map(tuple, rows)) == sorted(map(tuple, x))
    indep = r.permutation(KEY, x, axis=1, independent=True)
    assert np.array_equal(np.sort(indep, axis=1), x)
    assert len({tuple(np.argsort(row)) for row in indep}) > 1   # rows permuted differently
    c = r.choice(KEY, 10, (10,), replace=False)
    assert sorted(c.tolist()) == list(range(10))
    p = np.array([0.0, 0.5, 0.5, 0.0])
    assert sorted(r.choice(KEY, 4, (2,), replace=False, p=p).tolist()) == [1, 2]
    # the first draw without replacement follows p
    firsts = [r.choice(k, 3, (2,), replace=False, p=np.array([0.2, 0.3, 0.5]))[0]
              for k in r.split(KEY, 400)]
    assert st.chisquare(np.bincount(firsts), 400 * np.array([0.2, 0.3, 0.5])).pvalue > 1e-4


TRANSFORMED = [  # (id, function of a key)
    ("normal", lambda k: r.normal(k, (3,))),
    ("uniform", lambda k: r.uniform(k, (3,), minval=-1.0, maxval=2.0)),
    ("gamma", lambda k: r.gamma(k, np.array([0.5, 2.0, 10.0]))),
    ("beta", lambda k: r.beta(k, 2.0, 3.0, (3,))),
    ("dirichlet", lambda k: r.dirichlet(k, np.array([0.5, 2.0, 10.0]))),
    ("t", lambda k: r.t(k, 4.0, (3,))),
    ("multivariate_normal", lambda k: r.multivariate_normal(
        k, np.zeros(2), np.array([[2.0, 0.5], [0.5, 1.0]]), (2,))),
    ("truncated_normal", lambda k: r.truncated_normal(k, -1.0, 2.0, (3,))),
    ("permutation", lambda k: r.permutation(k, np.arange(5.0))),
    ("choice", lambda k: r.choice(k, 5, (3,), replace=False, p=np.full(5, 0.2))),
    ("categorical", lambda k: r.categorical(k, np.zeros((2, 4)))),
    ("bernoulli", lambda k: r.bernoulli(k, 0.3, (4,))),
    ("randint", lambda k: r.randint(k, (4,), -3, 5, dtype=np.int32)),
    ("bits", lambda k: r.bits(k, (3,), np.uint8)),
    ("exponential-laplace-logistic-gumbel-cauchy", lambda k: np.stack(
        [f(kk, (2,)) for f, kk in zip((r.exponential, r.laplace, r.logistic, r.gumbel,
                                       r.cauchy), r.split(k, 5))])),
    ("split-fold_in", lambda k: r.fold_in(r.split(k, 3)[1], 7)),
]


@pytest.mark.parametrize("f", [c[1] for c in TRANSFORMED], ids=[c[0] for c in TRANSFORMED])
def test_jit_equals_eager_and_vmap_equals_a_loop(f):
    keys = r.split(KEY, 4)
    jf = fd.jit(f)
    assert np.array_equal(jf(KEY), f(KEY)) and jf(KEY).dtype == f(KEY).dtype
    assert not np.array_equal(jf(keys[0]), jf(keys[1]))        # staged, not a constant
    loop = np.stack([f(k) for k in keys])
    assert np.array_equal(fd.vmap(f)(keys), loop)
    assert np.array_equal(fd.jit(fd.vmap(f))(keys), loop)


def test_jit_stages_the_draw():
    jaxpr = str(fd.make_jaxpr(lambda k: r.normal(k, (3,)))(KEY))
    assert "random_bits" in jaxpr
    assert "random_bits" in str(fd.make_jaxpr(lambda k: r.gamma(k, 2.0, (3,)))(KEY))


def test_fold_in_with_traced_data_in_a_loop():
    def body(i, acc):
        return acc + r.normal(r.fold_in(KEY, i), (2,))
    expected = sum(r.normal(r.fold_in(KEY, i), (2,)) for i in range(3))
    assert np.allclose(fd.lax.fori_loop(0, 3, body, np.zeros(2)), expected)
    assert np.allclose(fd.jit(lambda n: fd.lax.fori_loop(0, n, body, np.zeros(2)))(3), expected)
    data = np.arange(3)
    assert np.array_equal(fd.vmap(lambda d: r.fold_in(KEY, d))(data),
                          np.stack([r.fold_in(KEY, int(d)) for d in data]))


def _central(f, x, h=1e-6):
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape + np.shape(f(x)))
    for i in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return out


REPARAMETERISED = [  # (id, f(key, theta) differentiable in theta, theta)
    ("uniform", lambda k, th: r.uniform(k, (4,), minval=th[0], maxval=th[1]),
     np.array([-0.5, 2.0])),
    ("normal_loc_scale", lambda k, th: th[0] + th[1] * r.normal(k, (4,)), np.array([0.3, 1.7])),
    ("truncated_normal", lambda k, th: r.truncated_normal(k, th[0], th[1], (4,)),
     np.array([-0.7, 1.3])),
    ("truncated_normal_upper_tail", lambda k, th: r.truncated_normal(k, th[0], th[1], (4,)),
     np.array([1.5, 3.0])),
    ("exponential_rate", lambda k, th: r.exponential(k, (4,)) / th[0], np.array([2.0])),
    ("laplace_scale", lambda k, th: th[0] * r.laplace(k, (4,)), np.array([0.7])),
    ("gumbel_scale", lambda k, th: th[0] + th[1] * r.gumbel(k, (4,)), np.array([0.1, 2.0])),
    ("logistic_scale", lambda k, th: th[0] * r.logistic(k, (4,)), np.array([1.5])),
    ("multivariate_normal_cholesky", lambda k, th: r.multivariate_normal(
        k, th[:2], np.array([[1.0, 0.0], [0.0, 0.0]]) * th[2] + np.array([[0.0, 0.3], [0.3, 1.0]])
        + np.array([[0.0, 1.0], [1.0, 0.0]]) * th[3], (3,)), np.array([0.5, -1.0, 2.0, 0.2])),
    ("multivariate_normal_eigh", lambda k, th: r.multivariate_normal(
        k, th[:2], fnp.stack([th[2:], fnp.stack([th[3], 1.0])]), (3,), method="eigh"),
     np.array([0.5, -1.0, 2.0, 0.2])),
]


@pytest.mark.parametrize("f,theta", [c[1:] for c in REPARAMETERISED],
                         ids=[c[0] for c in REPARAMETERISED])
def test_reparameterised_derivatives_match_finite_differences(f, theta):
    g = lambda th: f(KEY, th)  # noqa: E731
    expected = np.moveaxis(_central(g, theta), 0, -1)        # d out / d theta
    assert np.allclose(fd.jacrev(g)(theta), expected, rtol=1e-6, atol=1e-7)
    assert np.allclose(fd.jacfwd(g)(theta), expected, rtol=1e-6, atol=1e-7)
    assert np.allclose(fd.jit(fd.jacrev(g))(theta), expected, rtol=1e-6, atol=1e-7)


def _gamma_implicit_reference(x, a, h=1e-6):
    """-(dP/da) / (dP/dx) by central differences of scipy's regularised incomplete gamma."""
    dp_da = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    return -dp_da / np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))


@pytest.mark.parametrize("a", [0.2, 1.0, 3.5, 40.0])
def test_gamma_derivative_is_the_implicit_reparameterisation(a):
    keys = r.split(KEY, 40)
    x = fd.vmap(lambda k: r.gamma(k, a))(keys)
    dx = fd.vmap(fd.grad(lambda a_, k: r.gamma(k, a_)), in_axes=(None, 0))(a, keys)
    assert np.allclose(dx, _gamma_implicit_reference(x, a), rtol=1e-5)
    # forward mode and jit agree; and on average dx/da = d E[x] / da = 1
    assert np.allclose(fd.jvp(lambda a_: r.gamma(keys[0], a_), (a,), (1.0,))[1], dx[0])
    assert np.allclose(fd.jit(fd.grad(lambda a_: r.gamma(keys[0], a_)))(a), dx[0])
    mean_grad = fd.grad(lambda a_: r.gamma(KEY, a_, (N,)).mean())(a)
    assert abs(mean_grad - 1) < 0.1


def test_gamma_second_derivative_matches_differences_of_the_first():
    k = r.split(KEY)[0]
    first = fd.grad(lambda a: r.gamma(k, a))
    x0 = r.gamma(k, 2.0)
    # at a fixed quantile u = P(a, x), x(a) moves along the implicit curve
    h = 1e-4
    u = sp.gammainc(2.0, x0)
    xs = sp.gammaincinv(np.array([2.0 - h, 2.0 + h]), u)
    slopes = [float(_gamma_implicit_reference(x, a)) for x, a in zip(xs, (2.0 - h, 2.0 + h))]
    assert np.isclose(fd.grad(first)(2.0), (slopes[1] - slopes[0]) / (2 * h), rtol=1e-3)


def test_beta_dirichlet_t_derivatives_follow_from_gamma():
    # on average the derivative of the sample is the derivative of the mean
    a, b = 2.0, 3.0
    ga = fd.grad(lambda a_: r.beta(KEY, a_, b, (N,)).mean())(a)
    assert abs(ga - b / (a + b) ** 2) < 0.01
    alpha = np.array([1.0, 2.0, 3.0])
    jac = fd.jacrev(lambda al: r.dirichlet(KEY, al, (N,)).mean(axis=0))(alpha)
    expected = (np.eye(3) * alpha.sum() - alpha[:, None]) / alpha.sum() ** 2
    assert np.allclose(jac, expected, atol=0.01)
    # E|t| for df: differentiate the sample mean of |t| against differences of the closed form
    mean_abs = lambda df: 2 * np.sqrt(df) * np.exp(sp.gammaln((df + 1) / 2) - sp.gammaln(df / 2)) \
        / (np.sqrt(np.pi) * (df - 1))  # noqa: E731
    d = fd.grad(lambda df: np.abs(r.t(KEY, df, (N,))).mean())(6.0)
    assert abs(d - (mean_abs(6.0 + 1e-5) - mean_abs(6.0 - 1e-5)) / 2e-5) < 0.01


def test_gamma_derivative_beyond_the_series_is_nan_not_wrong():
    assert np.isnan(fd.grad(lambda a: r.gamma(KEY, a))(5000.0))


def test_the_key_has_no_derivative():
    assert fd.grad(lambda s: r.normal(KEY, (3,)).sum() * s)(2.0) == r.normal(KEY, (3,)).sum()
    with pytest.raises(fd.FunctionalDiffError):
        fd.grad(lambda k: r.normal(k).sum())(KEY)


BAD = [  # (id, call, error, words the message must contain)
    ("float key", lambda: r.normal(np.array([0.0, 1.0])), DTypeError, "uint32"),
    ("int64 key", lambda: r.uniform(np.array([0, 1])), DTypeError, "key"),
    ("wrong shape key", lambda: r.normal(np.zeros(3, np.uint32)), ShapeError, "shape"),
    ("batch of keys", lambda: r.normal(r.split(KEY, 3)), ShapeError, "vmap"),
    ("float seed", lambda: r.key(1.5), DTypeError, "seed"),
    ("p above 1", lambda: r.bernoulli(KEY, 1.5), InvalidArgumentError, "p"),
    ("p below 0", lambda: r.bernoulli(KEY, np.array([0.5, -0.1])), InvalidArgumentError, "p"),
    ("minval >= maxval", lambda: r.uniform(KEY, minval=1.0, maxval=1.0), InvalidArgumentError,
     "minval"),
    ("randint empty", lambda: r.randint(KEY, (2,), 5, 3), InvalidArgumentError, "maxval"),
    ("truncated bounds", lambda: r.truncated_normal(KEY, 2.0, 1.0), InvalidArgumentError,
     "lower"),
    ("cov not PD", lambda: r.multivariate_normal(KEY, np.zeros(2), np.array([[1.0, 2.0],
                                                                              [2.0, 1.0]])),
     InvalidArgumentError, "cov"),
    ("cov not PSD eigh", lambda: r.multivariate_normal(KEY, np.zeros(2), -np.eye(2),
                                                       method="eigh"), InvalidArgumentError, "cov"),
    ("method", lambda: r.multivariate_normal(KEY, np.zeros(2), np.eye(2), method="lu"),
     InvalidArgumentError, "method"),
    ("gamma a", lambda: r.gamma(KEY, -1.0), InvalidArgumentError, "a > 0"),
    ("beta b", lambda: r.beta(KEY, 1.0, 0.0), InvalidArgumentError, "b > 0"),
    ("choice too many", lambda: r.choice(KEY, 3, (4,), replace=False), InvalidArgumentError,
     "replacement"),
    ("shape", lambda: r.normal(KEY, (2, -1)), InvalidArgumentError, "shape"),
    ("dtype", lambda: r.normal(KEY, (2,), np.int32), DTypeError, "float"),
    ("broadcast", lambda: r.gamma(KEY, np.ones(3), (2,)), ShapeError, "broadcast"),
]


@pytest.mark.parametrize("call,error,words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_gets_a_funcdiff_error_naming_the_argument(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_checks_of_values_wait_for_concrete_values_under_jit():
    # under jit the bounds are abstract: no check, and no error for valid values
    f = fd.jit(lambda lo, hi: r.uniform(KEY, (3,), minval=lo, maxval=hi))
    assert np.array_equal(f(0.0, 1.0), r.uniform(KEY, (3,)))
