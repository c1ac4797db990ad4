"""einsum for funcdiff.numpy: parse the subscripts, then contract the operands pairwise.

Subscripts in either calling convention (a string, or numpy's interleaved
operand/sublist form), with ``'...'`` and implicit output, become integer axis
labels; the parse is cached per subscripts and operand ranks. Repeated labels
within one operand become diagonals, labels no other operand or the output
needs are summed first, and the operands are then contracted two at a time in
a greedy order (as opt_einsum's greedy path: the pair whose product is
smallest relative to its inputs, preferring pairs that share a label), each
pair one ``dot_general`` through ``_contraction``. All of this is decided from
static data, so it is planned once per call signature into a cached program
(``einsum_program``) that each call merely runs.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from funcdiff import dtypes
from funcdiff.errors import DTypeError, FunctionalDiffError, ShapeError
from funcdiff.numpy import _util
from funcdiff.numpy._contraction import (NONZERO, arrange_plan, diagonal_plan, label_sizes,
                                         pair_plan, squeeze_plan, sum_plan)
from funcdiff.primitives import elementwise as ew


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


def _take_diagonals(shape: tuple, labels: tuple) -> tuple[tuple, tuple, tuple]:
    """Steps collapsing repeated labels of one operand onto their diagonal
    (``ii`` -> ``i``), and the shape and labels left."""
    steps: tuple = ()
    while len(set(labels)) != len(labels):
        p = next(i for i, l in enumerate(labels) if labels.index(l) != i)
        q = labels.index(labels[p])  # first occurrence: q < p
        if shape[p] != shape[q]:
            raise ShapeError(f"einsum: the repeated subscript {chr(labels[p])!r} labels axes of "
                             f"sizes {shape[q]} and {shape[p]} in an operand of shape {shape}; "
                             "a diagonal needs equal sizes")
        diagonal, shape = diagonal_plan(shape, 0, q, p)
        steps += diagonal
        labels = tuple(l for i, l in enumerate(labels) if i not in (p, q)) + (labels[p],)
    return steps, shape, labels


def _pick_pair(labels: list, out_labels: tuple, sizes: dict) -> tuple[int, int]:
    """Greedy order: the pair whose product is smallest relative to its inputs,
    preferring pairs that share a label (as opt_einsum's greedy path does)."""
    if len(labels) == 2:
        return 0, 1

    def size(ls):
        return math.prod(sizes[l] for l in ls)

    best = None
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            li, lj = set(labels[i]), set(labels[j])
            others = set(out_labels).union(*[set(o) for k, o in enumerate(labels)
                                             if k not in (i, j)])
            key = (not (li & lj), size((li | lj) & others) - size(li) - size(lj), i, j)
            if best is None or key < best:
                best = key
    return best[2], best[3]


# ---------------------------------------------------------------------------
# The program of one einsum call signature
#
# Every decision einsum makes (promotion, diagonals, squeezes, sums, the
# contraction order, the final layout) depends only on the subscripts, the
# operands' shapes and dtypes and the dtype/casting settings, so it is planned
# once per signature into a straight-line program over operand slots and
# cached; a call only checks its arguments and runs the program. Each
# instruction is (operation, slot, second slot or None, params); a binary
# operation leaves its result in the first slot.


_SHAPE_AND_DTYPE = operator.attrgetter("shape", "dtype")


@functools.lru_cache(maxsize=256)
def einsum_program(subscripts: str, operands: tuple, dtype, casting) -> tuple:
    """The instructions computing einsum on operands of the given (shape, dtype)
    pairs, in the order the operations bind, and the slot holding the result.
    Raises the errors of malformed calls."""
    shapes, in_dtypes = zip(*operands) if operands else ((), ())
    program: list = []
    if dtype is not None:
        for d in in_dtypes:
            if not np.can_cast(d, dtype, casting=casting):
                raise DTypeError(f"einsum cannot cast an operand of dtype {d} "
                                 f"to dtype={dtype} under casting={casting!r}; pass "
                                 "casting='same_kind' (or 'unsafe') to allow it.")
    else:
        dtype = dtypes.result_type(*in_dtypes)
    for k, d in enumerate(in_dtypes):
        if d != dtype:
            program.append((ew.convert_element_type, k, None, {"new_dtype": dtype}))
    in_labels, out_labels = _parse_einsum(subscripts, tuple(len(s) for s in shapes))
    sizes = label_sizes(f"einsum {subscripts!r}", list(zip(shapes, in_labels)))
    out_shape = tuple(sizes[l] for l in out_labels)
    was_bool = bool(shapes) and dtype == np.bool_
    if was_bool:
        program += [(ew.convert_element_type, k, None, {"new_dtype": np.dtype(np.int64)})
                    for k in range(len(shapes))]

    def emit(slot, steps):
        program.extend((op, slot, None, params) for op, params in steps)

    ops = []  # (slot, shape, labels) of the operands still to combine
    for k, (shape, labels) in enumerate(zip(shapes, in_labels)):
        steps, shape, labels = _take_diagonals(shape, labels)
        emit(k, steps)
        ops.append((k, shape, labels))
    # Squeeze broadcast size-1 axes, then sum labels nobody else needs.
    for n, (k, shape, labels) in enumerate(ops):
        steps, shape, labels = squeeze_plan(shape, labels, sizes)
        emit(k, steps)
        ops[n] = (k, shape, labels)
    for n, (k, shape, labels) in enumerate(ops):
        elsewhere = set(out_labels).union(*[set(o[2]) for i, o in enumerate(ops) if i != n])
        steps, shape, labels = sum_plan(shape, labels, {l for l in labels if l not in elsewhere})
        emit(k, steps)
        ops[n] = (k, shape, labels)
    while len(ops) > 1:
        i, j = _pick_pair([o[2] for o in ops], out_labels, sizes)
        rest = [o for n, o in enumerate(ops) if n not in (i, j)]
        keep = tuple(out_labels) + tuple(l for o in rest for l in o[2] if l not in out_labels)
        (x_slot, x_shape, x_labels), (y_slot, y_shape, y_labels) = ops[i], ops[j]
        x_steps, y_steps, product, params, shape, labels = pair_plan(
            x_shape, x_labels, y_shape, y_labels, keep)
        emit(x_slot, x_steps)
        emit(y_slot, y_steps)
        program.append((product, x_slot, y_slot, params))
        ops = rest + [(x_slot, shape, labels)]
    slot, shape, labels = ops[0]
    steps, shape, labels = sum_plan(shape, labels, {l for l in labels if l not in out_labels})
    emit(slot, steps)
    emit(slot, arrange_plan(shape, labels, out_labels, out_shape))
    if was_bool:
        emit(slot, (NONZERO,))
    return tuple(program), slot


def _run_program(program: tuple, slot: int, arrays: list):
    """Run an ``einsum_program`` on the operands (``arrays`` is overwritten)."""
    for op, i, j, params in program:
        arrays[i] = op(arrays[i], **params) if j is None else op(arrays[i], arrays[j], **params)
    return arrays[slot]


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
    arrays = [a if type(a) is np.ndarray and a.dtype.kind in "biuf" else
              _util.asarray(a, "einsum") for a in arrays]  # numpy arrays pass as they are
    if dtype is not None:
        dtype = np.dtype(dtype)
    else:
        casting = None  # casting governs dtype= only
    key = (subscripts, tuple(map(_SHAPE_AND_DTYPE, arrays)), dtype, casting)
    try:
        program, slot = einsum_program(*key)
    except TypeError:  # an unhashable casting=: plan uncached, so numpy's own error is raised
        program, slot = einsum_program.__wrapped__(*key)
    return _run_program(program, slot, arrays)


__all__ = ["einsum"]
