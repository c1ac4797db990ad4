"""The jaxpr IR: a typed, first-order program of primitive applications.

A ``Jaxpr`` has constant variables (bound to arrays when the jaxpr is closed),
input variables, a list of equations ``outs = primitive[params] ins`` and
output atoms. Atoms are ``Var`` (defined once) or ``Literal`` (a scalar
inlined in the program). ``ClosedJaxpr`` pairs a jaxpr with its constants.

``eval_jaxpr`` interprets a jaxpr by binding each primitive again, so it runs
under any active transform (when the jaxpr was staged with source lines, each
equation's line is the *current source* while it runs, and the line a
floating-point check names); ``check_jaxpr`` verifies that every variable is
defined before use and that each equation's output types are what the
primitive's abstract evaluation says.
"""

from __future__ import annotations

import itertools
import string
from typing import Any, Sequence

import numpy as np

from funcdiff import core
from funcdiff.core import Primitive, ShapedArray, bind, get_aval
from funcdiff.dot import GraphEdge, GraphNode, digraph
from funcdiff.errors import JaxprTypeError


class Var:
    """A variable of a jaxpr; its identity is the object itself."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var<{self.aval.str_short()}>"


class Literal:
    """A scalar constant written directly into the program text."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray | None = None):
        self.val = val
        self.aval = get_aval(val) if aval is None else aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"


Atom = Var | Literal


class Eqn:
    """One equation: ``outvars = primitive[params](*invars)``."""

    __slots__ = ("primitive", "invars", "params", "outvars", "source")

    def __init__(self, primitive: Primitive, invars: list, params: dict, outvars: list[Var]):
        self.primitive = primitive
        self.invars = invars
        self.params = params
        self.outvars = outvars
        self.source = None  # the user's source line, when staging recorded it

    def __repr__(self) -> str:
        return f"Eqn({self.primitive.name}, {len(self.invars)} in, {len(self.outvars)} out)"


class Jaxpr:
    """A first-order program: ``{ lambda constvars ; invars. let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars: list[Var], invars: list[Var], eqns: list[Eqn],
                 outvars: list):
        self.constvars = constvars
        self.invars = invars
        self.eqns = eqns
        self.outvars = outvars

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constant variables."""

    __slots__ = ("jaxpr", "consts", "in_tree", "out_tree", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any], in_tree: Any = None,
                 out_tree: Any = None):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self.in_tree = in_tree  # pytree structures, set by make_jaxpr
        self.out_tree = out_tree

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[Eqn]:
        return self.jaxpr.eqns

    def __call__(self, *args: Any) -> list[Any]:
        return eval_jaxpr(self.jaxpr, self.consts, *args)

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def to_dot(self) -> str:
        """Graphviz DOT text of the program: a box per equation (its primitive and
        output types), an ellipse per input, constant and output, an edge per use of
        a variable, labelled with its name as the printed jaxpr names it.

        >>> import funcdiff as fd
        >>> dot = fd.make_jaxpr(lambda x: x * 2.0 + 1.0)(3.0).to_dot()
        >>> dot.count(" -> ")  # x into mul, mul into add, add into the output
        3
        """
        return digraph(*program_graph(self.jaxpr))

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


# ---------------------------------------------------------------------------
# Evaluation


# Source lines: staging, when asked (interpreters.staging), notes on each equation the
# user's source line that applied it (Eqn.source: a str, or a DerivativeSource for an
# equation a derivative made); every program built from those equations keeps them.
# Interpreters replaying a program push each equation's line on source_stack, so what
# they stage or raise names the user's line rather than funcdiff's. Until a line is
# first recorded, eval_jaxpr does not look for them.
source_stack: list[str] = []
_recorded = [False]


def enter_source(line: str, check: bool) -> None:
    """Make ``line`` the current source while its equation runs (and, with ``check``,
    the line a floating-point check names, as the forward ``operation`` of a
    DerivativeSource, or a plain replayed line)."""
    source_stack.append(line)
    if check:
        core.float_context.append(core.FloatContext(getattr(line, "operation", None), line))


def leave_source(check: bool) -> None:
    """Undo ``enter_source``."""
    source_stack.pop()
    if check:
        core.float_context.pop()


def record_source(eqn: Eqn, line: str) -> None:
    """Note ``line`` as the user source line of ``eqn``."""
    eqn.source = line
    _recorded[0] = True


def current_source() -> str | None:
    """The user source line of the staged equation being replayed now, if any."""
    return source_stack[-1] if source_stack else None


class DerivativeSource(str):
    """The source line of an equation computing the derivative of the forward
    ``operation`` applied at that line (a str, so it reads as the line).

    ``primals``: the operation's operands while its derivative rule runs; the rule
    applying the operation itself to them computes the forward value, not a
    derivative (``line_of`` says so)."""

    def __new__(cls, line: str, operation: str, primals: Sequence[Any] = ()):
        self = super().__new__(cls, line)
        self.operation = operation
        self.primal_ids = tuple(map(id, primals))
        return self

    def line_of(self, primitive: Primitive, operands: Sequence[Any]) -> str:
        """The line to record for ``primitive`` applied to ``operands`` in the rule."""
        if (primitive.name == self.operation and len(operands) == len(self.primal_ids)
                and all(id(a) == i for a, i in zip(operands, self.primal_ids))):
            return str.__str__(self)  # the forward operation: a plain line
        return self


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Run ``jaxpr`` by binding each equation's primitive; works under any transform."""
    if _recorded[0]:
        return _eval_with_sources(jaxpr, consts, args)
    env: dict[Var, Any] = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(a):
        return a.val if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        outs = bind(eqn.primitive, *[read(a) for a in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, outs):
                env[v] = x
        else:
            env[eqn.outvars[0]] = outs
    return [read(a) for a in jaxpr.outvars]


def _eval_with_sources(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """``eval_jaxpr`` with each equation's recorded line the current source (and,
    under the floating-point checks, the line their error names)."""
    env: dict = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    check = core.float_checks

    def read(a):
        return a.val if type(a) is Literal else env[a]
    for eqn in jaxpr.eqns:
        line = eqn.source
        if line is not None:
            enter_source(line, check)
        try:
            outs = bind(eqn.primitive, *[read(a) for a in eqn.invars], **eqn.params)
        finally:
            if line is not None:
                leave_source(check)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, outs))
        else:
            env[eqn.outvars[0]] = outs
    return [read(a) for a in jaxpr.outvars]


def run_impls(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    """Evaluate ``closed`` with each primitive's numpy impl, bypassing ``bind``.

    Used by impl rules: they must compute values even when called while a
    staging trace is active (constant folding in jit). Each intermediate is
    dropped after its last use, so a recomputing backward pass holds only
    what it still needs.
    """
    jaxpr = closed.jaxpr
    env: dict = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))
    keep = {a for a in jaxpr.outvars if type(a) is not Literal}
    last_use: dict = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                last_use[a] = i
    for i, eqn in enumerate(jaxpr.eqns):
        out = eqn.primitive.impl(*[a.val if type(a) is Literal else env[a] for a in eqn.invars],
                                 **eqn.params)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out
        for a in eqn.invars:
            if type(a) is not Literal and last_use[a] == i and a not in keep:
                env.pop(a, None)
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


# ---------------------------------------------------------------------------
# Type checking


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Verify that ``jaxpr`` is well typed; raise JaxprTypeError naming the problem."""
    defined: set[int] = set()

    def define(v, where):
        if type(v) is not Var:
            raise JaxprTypeError(f"{where}: expected a Var, found {v!r}")
        if id(v) in defined:
            raise JaxprTypeError(f"{where}: variable {v!r} is defined twice")
        defined.add(id(v))

    def check_atom(a, where):
        if type(a) is Literal:
            if get_aval(a.val) != a.aval:
                raise JaxprTypeError(f"{where}: literal {a.val!r} has the wrong type {a.aval}")
            return
        if id(a) not in defined:
            raise JaxprTypeError(f"{where}: variable {a!r} is used before it is defined")

    for v in jaxpr.constvars:
        define(v, "constvars")
    for v in jaxpr.invars:
        define(v, "invars")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive.name})"
        for a in eqn.invars:
            check_atom(a, where)
        rule = eqn.primitive.abstract_eval
        if rule is None:
            raise JaxprTypeError(f"{where}: primitive has no abstract_eval rule")
        out = rule(*[a.aval for a in eqn.invars], **eqn.params)
        out_avals = list(out) if eqn.primitive.multiple_results else [out]
        declared = [v.aval for v in eqn.outvars]
        if out_avals != declared:
            raise JaxprTypeError(
                f"{where}: outputs are declared {[a.str_short() for a in declared]} "
                f"but the primitive produces {[a.str_short() for a in out_avals]}")
        for v in eqn.outvars:
            define(v, where)
    for a in jaxpr.outvars:
        check_atom(a, "outvars")


# ---------------------------------------------------------------------------
# Printing


def _var_names():
    letters = string.ascii_lowercase
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            yield "".join(combo)


def _pp_param(v: Any) -> str:
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, ClosedJaxpr) or isinstance(v, Jaxpr):
        return "\n" + _indent(pp_jaxpr(v.jaxpr if isinstance(v, ClosedJaxpr) else v), 6)
    if isinstance(v, tuple) and v and all(isinstance(e, (ClosedJaxpr, Jaxpr)) for e in v):
        return "(" + ",".join(_pp_param(e) for e in v) + ")"
    return repr(v) if not callable(v) else getattr(v, "__name__", repr(v))


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line for line in text.splitlines())


def _pp_literal(lit: Literal) -> str:
    v = lit.val
    if isinstance(v, (np.ndarray, np.generic)):
        v = v.item()
    default = lit.aval.dtype.name in ("float64", "int64", "bool")
    return repr(v) + ("" if default else ":" + lit.aval.str_short())


def var_names(jaxpr: Jaxpr) -> dict[int, str]:
    """The name of each variable (by id) as ``pp_jaxpr`` prints it."""
    gen = _var_names()
    names: dict[int, str] = {}
    for v in [*jaxpr.constvars, *jaxpr.invars, *(o for e in jaxpr.eqns for o in e.outvars)]:
        if id(v) not in names:
            names[id(v)] = next(gen)
    return names


def program_graph(jaxpr: Jaxpr) -> tuple[list[GraphNode], list[GraphEdge]]:
    """The program as a graph: nodes ``c{i}`` per constant, ``in{i}`` per input,
    ``e{k}`` per equation ``jaxpr.eqns[k]`` and ``out{i}`` per output; an edge per
    use of a variable. (``ClosedJaxpr.to_dot`` writes it; ``fd.draw`` draws it.)"""
    names = var_names(jaxpr)
    node_of: dict[int, str] = {}
    nodes, edges = [], []
    for kind, prefix, vs in (("const", "c", jaxpr.constvars), ("input", "in", jaxpr.invars)):
        for i, v in enumerate(vs):
            node_of[id(v)] = f"{prefix}{i}"
            nodes.append(GraphNode(f"{prefix}{i}", [f"{names[id(v)]}: {v.aval.str_short()}"], kind))

    def uses(atoms, dst):
        for a in atoms:
            if type(a) is not Literal and id(a) in node_of:
                edges.append(GraphEdge(node_of[id(a)], dst, names[id(a)]))
    for k, eqn in enumerate(jaxpr.eqns):
        label = [eqn.primitive.name,
                 " ".join(f"{names[id(o)]}: {o.aval.str_short()}" for o in eqn.outvars)]
        literals = [_pp_literal(a) for a in eqn.invars if type(a) is Literal]
        if literals:
            label.append("with " + ", ".join(literals))
        nodes.append(GraphNode(f"e{k}", label, "eqn"))
        uses(eqn.invars, f"e{k}")
        for o in eqn.outvars:
            node_of[id(o)] = f"e{k}"
    for i, a in enumerate(jaxpr.outvars):
        shown = _pp_literal(a) if type(a) is Literal else names[id(a)]
        nodes.append(GraphNode(f"out{i}", [f"out {i}: {shown}"], "output"))
        uses([a], f"out{i}")
    return nodes, edges


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """The familiar text form: ``{ lambda consts ; args. let eqns in (outs,) }``."""
    names: dict[int, str] = {}
    gen = _var_names()

    def name(v):
        if type(v) is Literal:
            return _pp_literal(v)
        n = names.get(id(v))
        if n is None:
            n = names[id(v)] = next(gen)
        return n

    def binder(v):
        return f"{name(v)}:{v.aval.str_short()}"

    consts = " ".join(binder(v) for v in jaxpr.constvars)
    ins = " ".join(binder(v) for v in jaxpr.invars)
    lines = []
    for eqn in jaxpr.eqns:
        params = ""
        if eqn.params:
            params = "[" + " ".join(f"{k}={_pp_param(v)}" for k, v in sorted(eqn.params.items())) + "]"
        lhs = " ".join(binder(v) for v in eqn.outvars)
        rhs = " ".join(name(a) for a in eqn.invars)
        lines.append(f"    {lhs} = {eqn.primitive.name}{params} {rhs}".rstrip())
    outs = ", ".join(name(a) for a in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = f"{{ lambda {consts}{' ' if consts else ''}; {ins}{'. ' if ins else '. '}let"
    if not lines:
        return f"{head}\n  in {outs} }}"
    return head + "\n" + "\n".join(lines) + f"\n  in {outs} }}"
