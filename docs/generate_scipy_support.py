"""Generate docs/scipy-support.md: every funcdiff.scipy function and the arguments it differentiates.

The page is measured, not written: for each public function of
funcdiff.scipy.special, .stats (each distribution), .linalg, .signal and
.integrate, ``SAMPLES`` gives arguments at which it is defined, and each
positional argument (each floating leaf of it) is probed in forward mode
(``fd.jvp``) and reverse mode (``fd.vjp``). An argument is listed as
differentiable when both succeed, as not differentiable when funcdiff refuses
the derivative (a DifferentiationError, whose message the user sees), and as
static when it cannot be traced at all (an order or a flag). A public function
missing from ``SAMPLES`` is an error, so new functions cannot be left off.

Run ``python docs/generate_scipy_support.py`` after adding a function (the
test ``tests/test_scipy_support_page.py`` fails while the page is out of
date), or ``--check`` to see whether it is.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import funcdiff as fd  # noqa: E402
from funcdiff.errors import DifferentiationError  # noqa: E402

PAGE = os.path.join(ROOT, "docs", "scipy-support.md")

_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_SQUARE = np.array([[1.0, 0.4, 0.2], [0.3, 2.0, 0.1], [0.2, 0.5, 1.5]])
_VECTOR = np.array([1.0, 2.0, 0.5])

# funcdiff.scipy.special: name -> positional arguments
SPECIAL = {
    "erf": (0.3,), "erfc": (0.3,), "erfinv": (0.3,), "ndtr": (0.3,), "ndtri": (0.3,),
    "log_ndtr": (0.3,), "expit": (0.3,), "logit": (0.3,), "log_expit": (0.3,),
    "gammaln": (2.5,), "digamma": (2.5,), "psi": (2.5,), "polygamma": (1, 2.5),
    "gamma": (2.5,), "beta": (2.0, 3.0), "betaln": (2.0, 3.0), "xlogy": (2.0, 3.0),
    "xlog1py": (2.0, 0.5), "entr": (0.3,), "logsumexp": (_VECTOR,), "softmax": (_VECTOR,),
    "log_softmax": (_VECTOR,), "j0": (1.5,), "j1": (1.5,), "jn": (2, 1.5), "jv": (2.5, 1.5),
    "y0": (1.5,), "y1": (1.5,), "yn": (2, 1.5), "yv": (2.5, 1.5), "iv": (2.5, 1.5),
    "ive": (2.5, 1.5), "i0e": (1.5,), "i1e": (1.5,), "kv": (2.5, 1.5), "kve": (2.5, 1.5),
    "expi": (1.5,), "exp1": (1.5,), "spence": (1.5,), "erfcinv": (0.3,), "rgamma": (2.5,),
    "gammasgn": (2.5,), "multigammaln": (3.0, 2), "zeta": (2.5, 1.5), "gammainc": (2.0, 1.5),
    "gammaincc": (2.0, 1.5), "betainc": (2.0, 3.0, 0.4),
}

# funcdiff.scipy.stats: distribution -> (point, shape parameters); every function of the
# distribution is probed at (point, *shapes), its ppf at (0.3, *shapes)
DISTRIBUTIONS = {
    "norm": (0.3, ()), "t": (0.3, (3.5,)), "gamma": (1.5, (2.5,)), "beta": (0.3, (2.0, 3.0)),
    "chi2": (1.5, (3.0,)), "expon": (0.3, ()), "laplace": (0.3, ()), "cauchy": (0.3, ()),
    "logistic": (0.3, ()), "poisson": (2.0, (1.5,)), "binom": (2.0, (5.0, 0.3)),
    "nbinom": (2.0, (5.0, 0.3)),
    "multivariate_normal": (_VECTOR, (np.zeros(3), _SPD)),
    "dirichlet": (np.array([0.2, 0.3, 0.5]), (np.array([1.5, 2.0, 3.0]),)),
}
# stats functions whose arguments are not (point, *shapes)
STATS_SPECIAL_CASES = {
    "multivariate_normal.entropy": (np.zeros(3), _SPD),
    "dirichlet.entropy": (np.array([1.5, 2.0, 3.0]),),
    "dirichlet.mean": (np.array([1.5, 2.0, 3.0]),),
    "dirichlet.var": (np.array([1.5, 2.0, 3.0]),),
}

LINALG = {
    "solve_triangular": (np.triu(_SQUARE), _VECTOR), "cho_factor": (_SPD,),
    "cho_solve": ((np.linalg.cholesky(_SPD).T, False), _VECTOR), "lu_factor": (_SQUARE,),
    "lu_solve": (None, _VECTOR),  # filled below from lu_factor
    "lu": (_SQUARE,), "expm": (_SQUARE,), "expm_frechet": (_SQUARE, _SPD), "inv": (_SQUARE,),
    "det": (_SQUARE,), "solve": (_SQUARE, _VECTOR), "cholesky": (_SPD,), "eigh": (_SPD,),
    "toeplitz": (_VECTOR, _VECTOR), "circulant": (_VECTOR,),
    "block_diag": (_SQUARE, np.array([[2.0]])),
    "solve_banded": ((1, 1), np.array([[0.0, 1.0, 0.5], [4.0, 3.0, 2.0], [1.0, 0.2, 0.0]]),
                     _VECTOR),
    "solve_sylvester": (_SQUARE, _SPD, _SQUARE), "solve_continuous_lyapunov": (_SQUARE, _SPD),
    "sqrtm": (_SPD,), "logm": (_SPD,), "schur": (_SPD,),
    "eigh_tridiagonal": (np.array([2.0, 3.0, 4.0]), np.array([0.5, 0.7])),
}

SIGNAL = {
    "convolve": (_VECTOR, np.array([1.0, -1.0])), "correlate": (_VECTOR, np.array([1.0, -1.0])),
    "fftconvolve": (_VECTOR, np.array([1.0, -1.0])),
    "convolve2d": (_SQUARE, np.array([[1.0, -1.0]])),
    "correlate2d": (_SQUARE, np.array([[1.0, -1.0]])),
}


def _decay(y, t, k):
    return -k * y


def _decay_ivp(t, y, k):
    return -k * y


INTEGRATE = {
    "odeint": ((_decay, np.array([1.0, 2.0]), np.array([0.0, 0.5, 1.0]), 0.7), (0,)),
    "solve_ivp": ((_decay_ivp, (0.0, 1.0), np.array([1.0, 2.0])), (0,)),
}
INTEGRATE_KEYWORDS = {"solve_ivp": {"args": (0.7,), "t_eval": np.array([0.0, 0.5, 1.0])}}


def _float_leaves(tree):
    return [leaf for leaf in fd.tree_util.tree_leaves(tree)
            if np.asarray(leaf).dtype.kind in "fc" and not isinstance(leaf, bool)]


def _outputs(value):
    """The floating arrays of a function's result (a solver's result object: its t and y)."""
    if hasattr(value, "y") and hasattr(value, "t"):
        value = (value.t, value.y)
    return [leaf for leaf in fd.tree_util.tree_leaves(value)
            if hasattr(leaf, "dtype") and np.dtype(leaf.dtype).kind in "fc"]


def _probe(f, args, index, keywords) -> str:
    """"yes", "no" or "static" for argument ``index`` of ``f(*args)``."""
    leaves, treedef = fd.tree_util.tree_flatten(args[index])
    float_positions = [i for i, leaf in enumerate(leaves)
                       if not isinstance(leaf, (bool, int)) and np.asarray(leaf).dtype.kind in "fc"]
    if not float_positions:
        return "static"
    outcomes = set()
    for position in float_positions:
        def g(leaf, position=position):
            new = list(leaves)
            new[position] = leaf
            moved = list(args)
            moved[index] = fd.tree_util.tree_unflatten(treedef, new)
            return _outputs(f(*moved, **keywords))
        primal = np.asarray(leaves[position], np.float64)
        try:
            fd.jvp(g, (primal,), (np.ones_like(primal),))
            out, pullback = fd.vjp(g, primal)
            pullback([np.ones(np.shape(o), np.result_type(o)) for o in out])
            outcomes.add("yes")
        except DifferentiationError:
            outcomes.add("no")
        except Exception:  # an order, a count or a flag that cannot be traced
            outcomes.add("static")
    return "yes" if outcomes == {"yes"} else "no" if "no" in outcomes else "static"


def _parameter_names(f, count):
    names = [p.name for p in inspect.signature(f).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    if len(names) < count:  # *arrs
        names = names[:-1] + [f"{names[-1]}[{i}]" for i in range(count - len(names) + 1)]
    return names[:count]


def _row(qualified, f, args, keywords=None, indices=None) -> list[str]:
    keywords = keywords or {}
    names = _parameter_names(f, len(args))
    yes, no, static = [], [], []
    for i, name in enumerate(names):
        if indices is not None and i not in indices:
            continue
        {"yes": yes, "no": no, "static": static}[_probe(f, args, i, keywords)].append(f"`{name}`")
    return [f"`{qualified}`", ", ".join(yes) or "—", ", ".join(no + static) or "—"]


def _public(module):
    return [name for name in module.__all__
            if callable(getattr(module, name)) and not inspect.isclass(getattr(module, name))]


def rows_by_section() -> dict[str, list[list[str]]]:
    sections: dict[str, list[list[str]]] = {}
    missing = []

    special = importlib.import_module("funcdiff.scipy.special")
    rows = []
    for name in _public(special):
        if name not in SPECIAL:
            missing.append(f"special.{name}")
            continue
        rows.append(_row(f"special.{name}", getattr(special, name), SPECIAL[name]))
    sections["funcdiff.scipy.special"] = rows

    stats = importlib.import_module("funcdiff.scipy.stats")
    rows = []
    for dist in stats.__all__:
        module = getattr(stats, dist)
        if dist not in DISTRIBUTIONS:
            missing.append(f"stats.{dist}")
            continue
        point, shapes = DISTRIBUTIONS[dist]
        for name in _public(module):
            qualified = f"{dist}.{name}"
            if qualified in STATS_SPECIAL_CASES:
                args = STATS_SPECIAL_CASES[qualified]
            else:
                args = ((0.3 if name == "ppf" else point),) + shapes
            rows.append(_row(f"stats.{qualified}", getattr(module, name), args))
    sections["funcdiff.scipy.stats"] = rows

    linalg = importlib.import_module("funcdiff.scipy.linalg")
    samples = dict(LINALG)
    samples["lu_solve"] = (linalg.lu_factor(_SQUARE), _VECTOR)
    rows = []
    for name in _public(linalg):
        if name not in samples:
            missing.append(f"linalg.{name}")
            continue
        rows.append(_row(f"linalg.{name}", getattr(linalg, name), samples[name]))
    sections["funcdiff.scipy.linalg"] = rows

    signal = importlib.import_module("funcdiff.scipy.signal")
    rows = []
    for name in _public(signal):
        if name not in SIGNAL:
            missing.append(f"signal.{name}")
            continue
        rows.append(_row(f"signal.{name}", getattr(signal, name), SIGNAL[name]))
    sections["funcdiff.scipy.signal"] = rows

    try:
        integrate = importlib.import_module("funcdiff.scipy.integrate")
    except ImportError:
        integrate = None
    if integrate is not None:
        rows = []
        for name in _public(integrate):
            if name not in INTEGRATE:
                missing.append(f"integrate.{name}")
                continue
            args, skip = INTEGRATE[name]
            rows.append(_row(f"integrate.{name}", getattr(integrate, name), args,
                             INTEGRATE_KEYWORDS.get(name),
                             indices=[i for i in range(len(args)) if i not in skip]))
        sections["funcdiff.scipy.integrate"] = rows
    if missing:
        raise SystemExit("docs/generate_scipy_support.py has no sample arguments for: "
                         + ", ".join(missing) + " (add them to its tables)")
    return sections


HEADER = """# funcdiff.scipy: what is supported, and what it differentiates

Generated by `python docs/generate_scipy_support.py` (a test keeps it in sync):
each public function of `funcdiff.scipy` was called at sample arguments and
differentiated in each positional argument with `fd.jvp` (forward mode) and
`fd.vjp` (reverse mode). "Differentiable in" lists the arguments where both
modes work; the last column lists the arguments that have no derivative (an
integer order, a count, a flag, or a refusal with a `DifferentiationError`
whose message names the argument, never a silent zero). Values are scipy's own
functions (`pip install funcdiff[scipy]`); every function also runs under
`fd.jit` and `fd.vmap`.

Keyword arguments (`loc`, `scale`, `mode=`, `lower=`, tolerances) are not
probed here; `loc` and `scale` of the distributions are differentiable.
"""


def render() -> str:
    parts = [HEADER]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        sections = rows_by_section()
    for title, rows in sections.items():
        parts.append(f"\n## {title}\n\n| function | differentiable in | not differentiable |\n"
                     "|---|---|---|\n")
        parts.extend(f"| {' | '.join(row)} |\n" for row in rows)
    return "".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/scipy-support.md is out of date, writing nothing")
    args = parser.parse_args(argv)
    text = render()
    current = open(PAGE).read() if os.path.exists(PAGE) else ""
    if args.check:
        if text != current:
            print("docs/scipy-support.md is out of date: run python docs/generate_scipy_support.py")
            return 1
        return 0
    with open(PAGE, "w") as fh:
        fh.write(text)
    print("wrote docs/scipy-support.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
