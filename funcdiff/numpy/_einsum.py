"""einsum for funcdiff.numpy: parse the subscripts, then contract the operands pairwise.

Subscripts in either calling convention (a string, or numpy's interleaved
operand/sublist form), with ``'...'`` and implicit output, become integer axis
labels; the parse is cached per subscripts and operand ranks. Repeated labels
within one operand become diagonals, labels no other operand or the output
needs are summed first, and the operands are then contracted two at a time in
a greedy order (as opt_einsum's greedy path: the pair whose product is
smallest relative to its inputs, preferring pairs that share a label), each
pair one ``dot_general`` through ``_contraction``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from funcdiff.errors import DTypeError, FunctionalDiffError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._contraction import (_arrange, _bool_in, _bool_out, _contract_pair,
                                         _diagonal_last, _label_sizes, _shape, _squeeze_labels,
                                         _sum_labels)


class EinsumSubscriptError(FunctionalDiffError, ValueError):
    """einsum subscripts are malformed or disagree with the operands."""


# ---------------------------------------------------------------------------
# einsum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_to_term(sublist) -> str:
    term = []
    for s in sublist:
        if s is Ellipsis:
            term.append("...")
        elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
            term.append(_LETTERS[int(s)])
        else:
            raise EinsumSubscriptError(
                f"einsum: subscript lists may hold ints in [0, 52) and Ellipsis, got {s!r}")
    return "".join(term)


def _einsum_operands(args) -> tuple[str, list]:
    """Subscripts and operands from either calling convention of numpy.einsum."""
    if not args:
        raise EinsumSubscriptError("einsum needs subscripts and at least one operand")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    rest = list(args)
    out = _sublist_to_term(rest.pop()) if len(rest) % 2 == 1 else None  # trailing output
    operands, terms = rest[0::2], [_sublist_to_term(s) for s in rest[1::2]]
    subscripts = ",".join(terms) + ("->" + out if out is not None else "")
    return subscripts, operands


def _parse_term(term: str, ndim: int, where: str) -> tuple[list, int]:
    """Labels (ord of letters; Ellipsis placeholder) of one input term and its
    number of ellipsis axes."""
    if term.count("...") > 1 or term.replace("...", "").count(".") > 0:
        raise EinsumSubscriptError(f"einsum: {where} '{term}' has a malformed ellipsis")
    letters = term.replace("...", "")
    for c in letters:
        if c not in _LETTERS:
            raise EinsumSubscriptError(
                f"einsum: {where} '{term}' contains {c!r}; subscripts are letters a-z, A-Z "
                "and '...'")
    if "..." in term:
        n_ellipsis = ndim - len(letters)
        if n_ellipsis < 0:
            raise EinsumSubscriptError(
                f"einsum: {where} '{term}' has more subscripts than the operand has "
                f"dimensions ({ndim})")
        before, after = term.split("...")
        labels = [ord(c) for c in before] + [Ellipsis] + [ord(c) for c in after]
        return labels, n_ellipsis
    if len(letters) != ndim:
        raise EinsumSubscriptError(
            f"einsum: {where} '{term}' has {len(letters)} subscripts but the operand has "
            f"{ndim} dimensions")
    return [ord(c) for c in letters], 0


def _expand_ellipsis(labels: list, n: int) -> tuple:
    """Replace the Ellipsis placeholder by ``n`` labels -n..-1 (right-aligned, so
    ellipsis axes of different operands broadcast against each other)."""
    out = []
    for l in labels:
        out.extend(range(-n, 0) if l is Ellipsis else [l])
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _parse_einsum(subscripts: str, ndims: tuple[int, ...]) -> tuple[list[tuple], tuple]:
    subscripts = subscripts.replace(" ", "")
    if subscripts.count("->") > 1:
        raise EinsumSubscriptError(f"einsum: subscripts {subscripts!r} contain '->' twice")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise EinsumSubscriptError(
            f"einsum: subscripts {subscripts!r} describe {len(terms)} operands but "
            f"{len(ndims)} were given")
    parsed = [_parse_term(t, n, f"operand {i} subscripts") for i, (t, n) in
              enumerate(zip(terms, ndims))]
    n_ellipsis = max((n for _, n in parsed), default=0)
    in_labels = [_expand_ellipsis(labels, n) for labels, n in parsed]
    counts: dict = {}
    for labels in in_labels:
        for l in labels:
            counts[l] = counts.get(l, 0) + 1
    if not arrow:  # implicit mode: ellipsis axes, then letters seen once, sorted
        out = tuple(range(-n_ellipsis, 0)) + tuple(
            sorted(l for l, c in counts.items() if c == 1 and l > 0))
        return tuple(in_labels), out
    if "..." in output:
        out_raw, _ = _parse_term(output, len(output.replace("...", "")) + n_ellipsis,
                                 "output subscripts")
        out = _expand_ellipsis(out_raw, n_ellipsis)
    else:
        out, _ = _parse_term(output, len(output), "output subscripts")
        out = tuple(out)
        if n_ellipsis and any(l < 0 for l in counts):
            raise EinsumSubscriptError(
                "einsum: the operands have '...' axes but the output subscripts "
                f"{output!r} have no '...' to place them")
    if len(set(out)) != len(out):
        raise EinsumSubscriptError(f"einsum: output subscripts {output!r} repeat a label")
    for l in out:
        if l not in counts:
            raise EinsumSubscriptError(
                f"einsum: output subscript {chr(l)!r} does not appear in any operand")
    return tuple(in_labels), out


def _take_diagonals(x, labels: tuple) -> tuple[Any, tuple]:
    """Collapse repeated labels of one operand onto their diagonal (``ii`` -> ``i``)."""
    while len(set(labels)) != len(labels):
        p = next(i for i, l in enumerate(labels) if labels.index(l) != i)
        q = labels.index(labels[p])  # first occurrence: q < p
        shape = _shape(x)
        if shape[p] != shape[q]:
            raise ShapeError(f"einsum: the repeated subscript {chr(labels[p])!r} labels axes of "
                             f"sizes {shape[q]} and {shape[p]} in an operand of shape {shape}; "
                             "a diagonal needs equal sizes")
        x = _diagonal_last(x, 0, q, p)
        labels = tuple(l for i, l in enumerate(labels) if i not in (p, q)) + (labels[p],)
    return x, labels


def _pick_pair(ops: list, out_labels: tuple, sizes: dict) -> tuple[int, int]:
    """Greedy order: the pair whose product is smallest relative to its inputs,
    preferring pairs that share a label (as opt_einsum's greedy path does)."""
    if len(ops) == 2:
        return 0, 1

    def size(labels):
        return math.prod(sizes[l] for l in labels)

    best = None
    for i in range(len(ops)):
        for j in range(i + 1, len(ops)):
            li, lj = set(ops[i][1]), set(ops[j][1])
            others = set(out_labels).union(*[set(o[1]) for k, o in enumerate(ops)
                                             if k not in (i, j)])
            key = (not (li & lj), size((li | lj) & others) - size(li) - size(lj), i, j)
            if best is None or key < best:
                best = key
    return best[2], best[3]


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation (numpy.einsum).

    Supports explicit (``'ij,jk->ik'``) and implicit (``'ij,jk'``) output,
    ``'...'`` with broadcasting, repeated subscripts in one operand (diagonals
    and traces, ``'ii->i'``, ``'ii'``), subscripts summed within one operand,
    any number of operands (contracted pairwise in a greedy order, each pair one
    ``dot_general``) and numpy's interleaved form ``einsum(x, [0, 1], y, [1, 2])``.
    ``optimize`` is accepted and ignored; ``order`` is irrelevant (funcdiff
    returns fresh arrays); ``casting`` governs ``dtype=`` as in numpy.

    Args:
      *operands: the subscripts string followed by the arrays (or the
        interleaved form).
      dtype: compute and return in this dtype.
      casting: how operands may be cast to ``dtype`` (numpy's rules; default 'safe').

    Returns:
      The contracted array.

    Raises:
      EinsumSubscriptError: malformed subscripts or a count mismatch.
      DTypeError: an operand that ``casting`` does not allow to become ``dtype``.
      ShapeError: axes with one label but different sizes.

    >>> import numpy as np, funcdiff.numpy as fnp
    >>> fnp.einsum('ij,j->i', np.array([[1., 2.], [3., 4.]]), np.array([1., 1.]))
    array([3., 7.])
    >>> float(fnp.einsum('ii', np.array([[1., 2.], [3., 4.]])))
    5.0
    """
    _util.reject("einsum", out=out)
    subscripts, arrays = _einsum_operands(operands)
    arrays = [_util.asarray(a, "einsum") for a in arrays]
    if dtype is not None:
        dtype = np.dtype(dtype)
        for a in arrays:
            if not np.can_cast(_util.dtype_of(a), dtype, casting=casting):
                raise DTypeError(f"einsum cannot cast an operand of dtype {_util.dtype_of(a)} "
                                 f"to dtype={dtype} under casting={casting!r}; pass "
                                 "casting='same_kind' (or 'unsafe') to allow it.")
        arrays = [_util.cast(a, dtype) for a in arrays]
    else:
        arrays = _util.promote("einsum", *arrays)
    in_labels, out_labels = _parse_einsum(subscripts, tuple(len(_shape(a)) for a in arrays))
    sizes = _label_sizes(f"einsum {subscripts!r}",
                         [(_shape(a), l) for a, l in zip(arrays, in_labels)])
    out_shape = tuple(sizes[l] for l in out_labels)
    arrays, was_bool = _bool_in(arrays)
    ops = []
    for x, labels in zip(arrays, in_labels):
        x, labels = _take_diagonals(x, labels)
        ops.append((x, labels))
    # Squeeze broadcast size-1 axes, then sum labels nobody else needs.
    ops = [_squeeze_labels(x, labels, sizes) for x, labels in ops]
    for k, (x, labels) in enumerate(ops):
        elsewhere = set(out_labels).union(*[set(o[1]) for i, o in enumerate(ops) if i != k])
        ops[k] = _sum_labels(x, labels, {l for l in labels if l not in elsewhere})
    while len(ops) > 1:
        i, j = _pick_pair(ops, out_labels, sizes)
        rest = [o for k, o in enumerate(ops) if k not in (i, j)]
        keep = list(out_labels) + [l for o in rest for l in o[1] if l not in out_labels]
        product = _contract_pair(ops[i][0], ops[i][1], ops[j][0], ops[j][1], keep)
        ops = rest + [product]
    x, labels = ops[0]
    x, labels = _sum_labels(x, labels, {l for l in labels if l not in out_labels})
    return _bool_out(_arrange(x, labels, out_labels, out_shape), was_bool)


__all__ = ["einsum"]
