"""``fd.config``: the process-wide settings, changed with ``fd.config.update(name, value)``.

- ``log_compiles`` (False): log each jit trace, with the function and the
  argument signature, to the ``funcdiff`` logger at WARNING level (so it shows
  without configuring logging), as JAX's ``jax_log_compiles`` does.
- ``retrace_warning_threshold`` (10): when one jitted function has been traced
  more times than this, warn once, naming the argument whose shape or dtype
  keeps changing (each new signature compiles again).

JAX's spelling with a ``jax_`` prefix is accepted too.
"""

from __future__ import annotations

from typing import Any

from funcdiff.errors import InvalidArgumentError


class Config:
    """The settings; read them as attributes, change them with ``update``.

    >>> import funcdiff as fd
    >>> fd.config.update("log_compiles", True)
    >>> fd.config.log_compiles
    True
    >>> fd.config.update("jax_log_compiles", False)
    """

    DEFAULTS = {"log_compiles": False, "retrace_warning_threshold": 10}

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

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.DEFAULTS) + ")"


config = Config()

__all__ = ["config", "Config"]
