"""funcdiff.scipy: a negative-binomial fit's value and gradient, against autograd and by hand.

Workload: the negative log-likelihood of ``counts`` (``size`` draws) under
nbinom(r, p) with r = exp(theta[0]), p = sigmoid(theta[1]), written once with
``funcdiff.scipy.special.gammaln``: the form a scientist writes. Compared:
funcdiff eager ``value_and_grad``, ``jit(value_and_grad)``, HIPS autograd's
``value_and_grad`` of the same code (when autograd is installed; it calls
scipy.special), and the gradient written by hand in numpy with scipy's gammaln
and digamma. Reported: microseconds per call and the ratio to the hand-written
gradient.

Run: ``python benchmarks/bench_scipy.py [--quick]``; writes
``benchmarks/results/scipy.json``.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.special as sp

try:  # optional comparison target
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.special as asp
except ImportError:
    autograd = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_time, quick_main, table  # noqa: E402

import funcdiff as fd  # noqa: E402
import funcdiff.numpy as fnp  # noqa: E402
from funcdiff.scipy import special as fsp  # noqa: E402


def make_nll(np_, special):
    """The negative log-likelihood written against a numpy and a scipy.special."""
    def nll(theta, counts):
        r = np_.exp(theta[0])
        p = 1.0 / (1.0 + np_.exp(-theta[1]))
        terms = (special.gammaln(counts + r) - special.gammaln(r) - special.gammaln(counts + 1)
                 + r * np_.log(p) + counts * np_.log1p(-p))
        return -np_.sum(terms)
    return nll


def hand_value_and_grad(theta, counts):
    r = np.exp(theta[0])
    p = 1.0 / (1.0 + np.exp(-theta[1]))
    value = -np.sum(sp.gammaln(counts + r) - sp.gammaln(r) - sp.gammaln(counts + 1)
                    + r * np.log(p) + counts * np.log1p(-p))
    d_r = -np.sum(sp.digamma(counts + r) - sp.digamma(r) + np.log(p))
    d_p = -np.sum(r / p - counts / (1 - p))
    return value, np.array([d_r * r, d_p * p * (1 - p)])


def run(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    theta = np.array([np.log(3.0), 0.2])
    rows = []
    for size in ((1_000,) if quick else (100, 10_000, 1_000_000)):
        counts = rng.negative_binomial(3.0, 0.45, size).astype(np.float64)
        f = make_nll(fnp, fsp)
        eager = fd.value_and_grad(f)
        jitted = fd.jit(fd.value_and_grad(f))
        want = hand_value_and_grad(theta, counts)
        for got in (eager(theta, counts), jitted(theta, counts)):
            np.testing.assert_allclose(got[1], want[1], rtol=1e-9)
        hand = best_time(lambda: hand_value_and_grad(theta, counts))
        row = {"size": size, "hand_us": hand * 1e6,
               "funcdiff_eager": best_time(lambda: eager(theta, counts)) / hand,
               "funcdiff_jit": best_time(lambda: jitted(theta, counts)) / hand}
        if autograd is not None:
            ag = autograd.value_and_grad(make_nll(anp, asp))
            np.testing.assert_allclose(ag(theta, counts)[1], want[1], rtol=1e-9)
            row["autograd"] = best_time(lambda: ag(theta, counts)) / hand
        rows.append(row)
    header = ["size", "hand_us", "funcdiff_eager", "funcdiff_jit", "autograd"]
    print(table([[r.get(h, "-") for h in header] for r in rows], header))
    return {"nbinom_value_and_grad": rows}


def main(argv=None) -> dict:
    return quick_main("scipy", run, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
