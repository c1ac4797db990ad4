"""fd.random: JAX's functional, key-based random numbers on numpy's Philox generator.

There is no global state: every sampler takes a *key* and the same key always
gives the same numbers, in every process and under every transform (eager,
jit, vmap, grad). Use a key once; make new keys with ``split`` or ``fold_in``.

- A key is a ``numpy.uint32`` array of shape ``(2,)``: ``key(seed)`` and the
  legacy ``PRNGKey(seed)`` both give ``[seed >> 32, seed & 0xFFFFFFFF]`` (JAX's
  legacy key layout). ``split(key, n)`` gives ``uint32[n, 2]``; map over such
  an array with ``fd.vmap`` or index it.
- The bits of a key are those of ``numpy.random.Philox`` keyed by the key's 64
  bits (one ``random_bits`` primitive, ``funcdiff/primitives/random_bits.py``).
  Sampling, splitting and folding in read disjoint parts of Philox's counter.
  Values differ from JAX's (which uses Threefry); the distributions do not.
- Every sampler is written in funcdiff operations on those bits, so under jit
  it is staged (each call of the compiled function draws from the key it is
  given) and under vmap a batch of keys gives independent draws.
- Samples are reparameterised where JAX's are: ``uniform`` in ``minval`` and
  ``maxval``, ``truncated_normal`` in its bounds, ``multivariate_normal`` in
  ``mean`` and ``cov``, ``gamma``/``beta``/``dirichlet``/``t`` in their shape
  parameters (implicit reparameterisation, see ``gamma``); scale and location
  enter as ordinary arithmetic (``mu + sigma * normal(key)``).

>>> import funcdiff as fd
>>> k1, k2 = fd.random.split(fd.random.key(0))
>>> x = fd.random.normal(k1, (3,))
>>> bool((x == fd.random.normal(k1, (3,))).all()), bool((x != fd.random.normal(k2, (3,))).all())
(True, True)
"""

from funcdiff.random._continuous import (cauchy, exponential, gumbel, laplace, logistic,
                                         multivariate_normal, normal, truncated_normal,
                                         uniform)
from funcdiff.random._discrete import bernoulli, categorical, choice, permutation, randint
from funcdiff.random._gamma import beta, dirichlet, gamma, t
from funcdiff.random._keys import PRNGKey, bits, fold_in, key, random_bits, split

__all__ = [
    "key", "PRNGKey", "split", "fold_in", "bits", "random_bits", "uniform", "normal",
    "bernoulli", "categorical", "randint", "permutation", "choice", "truncated_normal",
    "exponential", "laplace", "logistic", "gumbel", "cauchy", "gamma", "beta", "dirichlet",
    "t", "multivariate_normal",
]


def __dir__() -> list[str]:  # dir() shows the public names only, not the submodules
    return sorted(__all__)
