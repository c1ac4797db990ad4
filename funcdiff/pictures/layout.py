"""Where each node of a picture goes: Graphviz's layout when its ``dot`` program is
installed, else a layered layout of funcdiff's own.

- ``layout(nodes, edges, sizes, engine)`` returns each node's centre (x, y) in
  points, top to bottom, and the drawing's width and height.
- The layered layout puts each node one layer below the deepest node it reads
  (inputs and constants on top, outputs at the bottom), then orders every
  layer by the mean position of each node's neighbours, sweeping down and up a
  few times, which untangles the edges of the programs a picture is for (up to
  a few hundred equations).
- The Graphviz layout runs ``dot -Tplain`` on the same graph with each node's
  size fixed, and reads back the positions.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Sequence

from funcdiff.dot import GraphEdge, GraphNode, digraph
from funcdiff.errors import FunctionalDiffError

H_GAP, V_GAP = 28.0, 46.0  # points between neighbouring nodes and between layers
SWEEPS = 4


def graphviz_available() -> bool:
    """Whether Graphviz's ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def layout(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge],
           sizes: dict[str, tuple[float, float]], engine: str = "auto"):
    """``({id: (x, y)}, width, height)``; ``engine`` is ``"auto"``, ``"graphviz"`` or
    ``"layered"``."""
    if engine not in ("auto", "graphviz", "layered"):
        raise FunctionalDiffError(
            f"fd.draw: layout={engine!r} is not a layout; use 'auto' (Graphviz when its dot "
            "program is installed), 'graphviz' or 'layered'.")
    if engine == "graphviz" or (engine == "auto" and graphviz_available()):
        if not graphviz_available():
            raise FunctionalDiffError(
                "fd.draw(layout='graphviz') needs Graphviz's dot program, which is not on "
                "the PATH: install it (apt-get install graphviz, brew install graphviz, or "
                "conda install graphviz), or use layout='layered'.")
        return graphviz_layout(nodes, edges, sizes)
    return layered_layout(nodes, edges, sizes)


def layered_layout(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge],
                   sizes: dict[str, tuple[float, float]]):
    ids = [n.id for n in nodes]
    preds: dict[str, list[str]] = {i: [] for i in ids}
    succs: dict[str, list[str]] = {i: [] for i in ids}
    for e in edges:
        preds[e.dst].append(e.src)
        succs[e.src].append(e.dst)
    depth: dict[str, int] = {}
    for n in nodes:  # the graph's nodes come in program order: producers first
        depth[n.id] = 1 + max((depth[p] for p in preds[n.id]), default=-1)
    last = max((depth[n.id] for n in nodes if n.kind != "output"), default=0)
    for n in nodes:
        if n.kind == "output":
            depth[n.id] = last + 1
    layers: list[list[str]] = [[] for _ in range(max(depth.values(), default=0) + 1)]
    for i in ids:
        layers[depth[i]].append(i)
    position = {i: float(k) for layer in layers for k, i in enumerate(layer)}
    for sweep in range(SWEEPS):
        order = layers[1:] if sweep % 2 == 0 else layers[-2::-1]
        neighbours = preds if sweep % 2 == 0 else succs
        for layer in order:
            def mean(i):
                near = neighbours[i]
                return sum(position[p] for p in near) / len(near) if near else position[i]
            layer.sort(key=mean)
            for k, i in enumerate(layer):
                position[i] = float(k)
    widths = [sum(sizes[i][0] for i in layer) + H_GAP * (len(layer) - 1) for layer in layers]
    width = max(widths, default=0.0)
    centres, y = {}, 0.0
    for layer, w in zip(layers, widths):
        height = max((sizes[i][1] for i in layer), default=0.0)
        x = (width - w) / 2
        for i in layer:
            centres[i] = (x + sizes[i][0] / 2, y + height / 2)
            x += sizes[i][0] + H_GAP
        y += height + V_GAP
    return centres, width, max(y - V_GAP, 0.0)


def graphviz_layout(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge],
                    sizes: dict[str, tuple[float, float]]):
    text = digraph(nodes, edges, sizes=sizes)
    done = subprocess.run(["dot", "-Tplain"], input=text, capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        raise FunctionalDiffError(f"fd.draw: Graphviz's dot failed on the program's graph: "
                                  f"{done.stderr.strip()}; use layout='layered'.")
    centres, height, width = {}, 0.0, 0.0
    for line in done.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "graph":
            width, height = float(fields[2]) * 72, float(fields[3]) * 72
        elif fields and fields[0] == "node":
            x, y = float(fields[2]) * 72, float(fields[3]) * 72
            centres[fields[1]] = (x, height - y)  # dot's y axis points up
    return centres, width, height
