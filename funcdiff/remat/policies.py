"""Checkpoint policies: which values a checkpoint keeps for the backward pass.

Policies (``checkpoint_policies``): ``nothing_saveable`` (the default: keep
only the inputs), ``everything_saveable`` (no recomputation),
``dots_saveable`` (keep matrix products, recompute elementwise work),
``dots_with_no_batch_dims_saveable``, ``save_only_these_names(*names)`` and
``save_anything_except_these_names(*names)`` for values tagged with
``checkpoint_name(x, name)``; or any ``policy(prim, *avals, **params) -> bool``.

A ``Policy`` judges one equation of the forward program at a time; the tags
of ``checkpoint_name`` are equations of the ``name`` primitive, an identity,
so the name policies can pick the tagged values out.
"""

from __future__ import annotations

import types
from typing import Any, Callable

from funcdiff.core import Primitive, bind
from funcdiff.errors import InvalidArgumentError
from funcdiff.ir import Eqn
from funcdiff.primitives.dot import dot_general_p
from funcdiff.tree_util import tree_map


name_p = Primitive("name")
name_p.impl = lambda x, *, name: x
name_p.abstract_eval = lambda x, *, name: x
name_p.jvp = lambda primals, tangents, *, name: (bind(name_p, primals[0], name=name),
                                                 tangents[0])
name_p.batch = lambda vals, dims, *, name: (bind(name_p, vals[0], name=name), dims[0])
name_p.cost = lambda x, *, name: {"flops": 0, "bytes": 0}


def checkpoint_name(x: Any, name: str) -> Any:
    """Tag ``x`` with ``name`` for checkpoint policies.

    Inside ``checkpoint(f, policy=save_only_these_names(name))`` the tagged
    value is kept for the backward pass instead of recomputed.

    Args:
      x: an array or pytree of arrays.
      name: a string.

    Returns:
      ``x`` unchanged (each leaf passes through the ``name`` primitive).

    Raises:
      InvalidArgumentError: if ``name`` is not a string.

    >>> import funcdiff as fd, numpy as np
    >>> fd.checkpoint_name(np.ones(2), "h")
    array([1., 1.])
    """
    if not isinstance(name, str):
        raise InvalidArgumentError(f"checkpoint_name needs a string name, got {name!r}")
    return tree_map(lambda leaf: bind(name_p, leaf, name=name), x)


class Policy:
    """Which equations' results a checkpoint keeps; ``fn(prim, *avals, **params) -> bool``."""

    def __init__(self, name: str, fn: Callable[..., bool]):
        self.name = name
        self.fn = fn

    def saveable(self, eqn: Eqn) -> bool:
        return bool(self.fn(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params))

    def __repr__(self) -> str:
        return self.name


def _is_dot(prim, *avals, **params) -> bool:
    return prim is dot_general_p


def _is_dot_without_batch(prim, *avals, **params) -> bool:
    return prim is dot_general_p and not params["dimension_numbers"][1][0]


def save_only_these_names(*names: str) -> Policy:
    """Keep exactly the values tagged by ``checkpoint_name`` with one of ``names``."""
    wanted = frozenset(names)
    return Policy(f"save_only_these_names{tuple(names)}",
                  lambda prim, *avals, **params: prim is name_p and params["name"] in wanted)


def save_anything_except_these_names(*names: str) -> Policy:
    """Keep everything except the values tagged with one of ``names``."""
    unwanted = frozenset(names)
    return Policy(f"save_anything_except_these_names{tuple(names)}",
                  lambda prim, *avals, **params: not (prim is name_p
                                                      and params["name"] in unwanted))


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=Policy("everything_saveable", lambda prim, *a, **p: True),
    nothing_saveable=Policy("nothing_saveable", lambda prim, *a, **p: False),
    dots_saveable=Policy("dots_saveable", _is_dot),
    dots_with_no_batch_dims_saveable=Policy("dots_with_no_batch_dims_saveable",
                                            _is_dot_without_batch),
    save_only_these_names=save_only_these_names,
    save_anything_except_these_names=save_anything_except_these_names,
)

_NAMED_POLICIES = ("everything_saveable", "nothing_saveable", "dots_saveable",
                   "dots_with_no_batch_dims_saveable")


def resolve_policy(policy: Any) -> Policy:
    if policy is None:
        return checkpoint_policies.nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, str):
        if policy in _NAMED_POLICIES:
            return getattr(checkpoint_policies, policy)
        raise InvalidArgumentError(
            f"checkpoint got the unknown policy {policy!r}. Valid policies are "
            f"{', '.join(_NAMED_POLICIES)} (by name or as fd.checkpoint_policies.<name>), "
            "save_only_these_names(*names) and save_anything_except_these_names(*names), "
            "or a function policy(prim, *avals, **params) -> bool.")
    if callable(policy):
        return Policy(getattr(policy, "__name__", "custom_policy"), policy)
    raise InvalidArgumentError(
        f"checkpoint policy must be a policy name, a checkpoint_policies entry or a function "
        f"(prim, *avals, **params) -> bool; got {type(policy).__name__}. Valid names: "
        f"{', '.join(_NAMED_POLICIES)}.")
