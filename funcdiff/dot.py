"""Graphviz DOT text of a small directed graph: the one writer behind
``ClosedJaxpr.to_dot`` and the layout of ``fd.draw``.

A graph is a list of ``GraphNode`` (an id, a label of one or more lines, and a
kind: ``"input"``, ``"const"``, ``"eqn"`` or ``"output"``, which sets its
shape and colour) and a list of ``GraphEdge`` (source id, target id, label).
"""

from __future__ import annotations

from typing import Sequence

NODE_STYLE = {  # kind -> DOT attributes
    "input": 'shape=ellipse, style=filled, fillcolor="#dff3e4"',
    "const": 'shape=ellipse, style="filled,dashed", fillcolor="#f2f2f2"',
    "eqn": 'shape=box, style="rounded,filled", fillcolor="#e8eef9"',
    "output": 'shape=ellipse, style=filled, fillcolor="#fbe3d6", peripheries=2',
}


class GraphNode:
    """One node: ``id`` (a DOT identifier), ``label`` lines and ``kind``."""

    __slots__ = ("id", "label", "kind")

    def __init__(self, id: str, label: Sequence[str], kind: str):
        self.id, self.label, self.kind = id, list(label), kind

    def __repr__(self) -> str:
        return f"GraphNode({self.id}, {self.kind}, {' / '.join(self.label)})"


class GraphEdge:
    """One edge from node ``src`` to node ``dst``, labelled (a variable's name)."""

    __slots__ = ("src", "dst", "label")

    def __init__(self, src: str, dst: str, label: str = ""):
        self.src, self.dst, self.label = src, dst, label

    def __repr__(self) -> str:
        return f"GraphEdge({self.src} -> {self.dst}, {self.label!r})"


def quote(text: str) -> str:
    """``text`` as a DOT string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def digraph(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge], *,
            name: str = "program", sizes: dict | None = None) -> str:
    """DOT text of the graph, top to bottom; ``sizes`` (``{id: (width, height)}`` in
    points) fixes the nodes' sizes, for a layout of nodes drawn elsewhere.

    >>> print(digraph([GraphNode("a", ["a"], "input"), GraphNode("b", ["sin"], "eqn")],
    ...               [GraphEdge("a", "b", "x")]))  # doctest: +ELLIPSIS
    digraph "program" {
      rankdir=TB;
      node [fontname="Helvetica", fontsize=11];
      edge [fontname="Helvetica", fontsize=9];
      a [label="a", shape=ellipse, ...];
      b [label="sin", shape=box, ...];
      a -> b [label="x"];
    }
    <BLANKLINE>
    """
    lines = [f"digraph {quote(name)} {{", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9];']
    for n in nodes:
        size = ""
        if sizes is not None:
            w, h = sizes[n.id]
            size = f", width={w / 72:.3f}, height={h / 72:.3f}, fixedsize=true"
        lines.append(f"  {n.id} [label={quote(chr(10).join(n.label))}, {NODE_STYLE[n.kind]}{size}];")
    lines += [f"  {e.src} -> {e.dst}" + (f" [label={quote(e.label)}];" if e.label else ";")
              for e in edges]
    return "\n".join(lines + ["}"]) + "\n"
