"""``fd.config``: the process-wide settings, changed with ``fd.config.update(name, value)``.

- ``log_compiles`` (False): log each jit trace, with the function and the
  argument signature, to the ``funcdiff`` logger at WARNING level (so it shows
  without configuring logging), as JAX's ``jax_log_compiles`` does.
- ``retrace_warning_threshold`` (10): when one jitted function has been traced
  more times than this, warn once, naming the argument whose shape or dtype
  keeps changing (each new signature compiles again).
- ``debug_nans`` (False): the first operation whose output holds a NaN that its
  operands did not raises ``FloatingPointCheckError``, naming the operation, its
  operands and the user's source line; in a backward pass it names the forward
  operation whose derivative produced the NaN; a jitted function whose output
  holds a NaN is re-run unoptimised, one operation at a time, to find it, as
  JAX's ``jax_debug_nans`` does. ``debug_nans()`` turns it on for a ``with`` block.
- ``debug_infs`` (False): the same for infinities (``debug_infs()``).
- ``jit_numexpr`` (True): when numexpr is installed (``pip install
  funcdiff[fast]``), jit runs each chain of elementwise arithmetic on large
  arrays as one numexpr expression (``compiler.elementwise_fusion``;
  ``jit(f).lower(x).fused_chains`` lists them). It applies to programs
  compiled after the change: call ``clear_cache()`` on a jitted function to
  compile it again.

JAX's spelling with a ``jax_`` prefix is accepted too.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from funcdiff import core
from funcdiff.errors import InvalidArgumentError


class Config:
    """The settings; read them as attributes, change them with ``update``.

    >>> import funcdiff as fd
    >>> fd.config.update("log_compiles", True)
    >>> fd.config.log_compiles
    True
    >>> fd.config.update("jax_log_compiles", False)
    """

    DEFAULTS = {"log_compiles": False, "retrace_warning_threshold": 10, "debug_nans": False,
                "debug_infs": False, "jit_numexpr": True}

    def __init__(self):
        self.__dict__.update(self.DEFAULTS)

    def update(self, name: str, value: Any) -> None:
        """Set the setting ``name`` (see the module's list) to ``value``."""
        key = name[4:] if name.startswith("jax_") else name
        if key not in self.DEFAULTS:
            raise InvalidArgumentError(
                f"fd.config has no setting {name!r}; the settings are "
                f"{', '.join(sorted(self.DEFAULTS))}.")
        default = self.DEFAULTS[key]
        if type(default) is bool and not isinstance(value, bool):
            raise InvalidArgumentError(f"fd.config.update({name!r}, ...) takes True or False, "
                                       f"got {value!r}.")
        setattr(self, key, value)
        if key in ("debug_nans", "debug_infs"):  # the flags bind's eager path reads
            core.nans_checked, core.infs_checked = self.debug_nans, self.debug_infs
            core.float_checks = self.debug_nans or self.debug_infs

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.DEFAULTS) + ")"


config = Config()


@contextlib.contextmanager
def debug_nans(enabled: bool = True) -> Iterator[None]:
    """Turn ``fd.config.debug_nans`` on (or, with ``enabled=False``, off) for a ``with``
    block, restoring the previous setting after it.

    Args:
      enabled: the setting inside the block.

    Raises:
      FloatingPointCheckError: inside the block, from the first operation that
        produces a NaN from operands free of NaN (see the module's list).

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> with fd.debug_nans():
    ...     fnp.log(np.array([1.0, -1.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    funcdiff.errors.FloatingPointCheckError: debug_nans: log produced NaN at <doctest ...>:2, ...
    >>> fd.config.debug_nans
    False
    """
    with _setting("debug_nans", enabled):
        yield


@contextlib.contextmanager
def debug_infs(enabled: bool = True) -> Iterator[None]:
    """Turn ``fd.config.debug_infs`` on (or off) for a ``with`` block, like ``debug_nans``.

    Args:
      enabled: the setting inside the block.

    Raises:
      FloatingPointCheckError: inside the block, from the first operation that
        produces an inf from finite operands.

    >>> import funcdiff as fd, funcdiff.numpy as fnp, numpy as np
    >>> with fd.debug_infs():
    ...     fnp.exp(np.array([1000.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    funcdiff.errors.FloatingPointCheckError: debug_infs: exp produced inf at <doctest ...>:2, ...
    """
    with _setting("debug_infs", enabled):
        yield


@contextlib.contextmanager
def _setting(name: str, value: Any) -> Iterator[None]:
    previous = getattr(config, name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, previous)


__all__ = ["config", "Config", "debug_nans", "debug_infs"]
