"""The page a picture is: one self-contained HTML file with an inline SVG drawing
and a step control (inline CSS and script; nothing is fetched).

- The forward graph: a box per equation with its primitive, output types and
  value (and, in jvp mode, its tangent); ellipses for inputs, constants and
  outputs.
- In vjp mode, beside it, the backward graph: a box per equation that received
  an adjoint, showing it, with the adjoint flowing against the forward edges
  to the inputs' gradients; and the residual edges, from the forward node that
  made each kept value to the backward step that reads it, labelled with its
  bytes.
- The step control walks the forward pass, then the backward pass, one node
  at a time: each step lights its node, reveals its numbers and says what
  happened. ``#step=N`` (or ``#step=all``) in the page's address opens it at a
  step; without a script everything is shown.
"""

from __future__ import annotations

import html
import json
from typing import Sequence

from funcdiff.dot import GraphNode
from funcdiff.ir import program_graph
from funcdiff.pictures.layout import layout
from funcdiff.pictures.walk import Walk, show

CHAR_W, LINE_H, PAD = 6.6, 15.0, 9.0  # monospace 11px text
COLUMN_GAP = 90.0
MARGIN = 24.0


class Box:
    """A node as drawn: its id, kind, side (``fwd``/``bwd``), label lines, number
    lines (revealed at ``step``) and centre."""

    __slots__ = ("id", "kind", "side", "label", "numbers", "step", "x", "y")

    def __init__(self, id: str, kind: str, side: str, label: Sequence[str],
                 numbers: Sequence[str], step: int):
        self.id, self.kind, self.side = id, kind, side
        self.label, self.numbers, self.step = list(label), list(numbers), step
        self.x = self.y = 0.0

    @property
    def size(self) -> tuple[float, float]:
        longest = max(len(t) for t in self.label + self.numbers)
        return longest * CHAR_W + 2 * PAD, len(self.label + self.numbers) * LINE_H + PAD


def render(w: Walk, *, title: str, engine: str = "auto") -> str:
    """The HTML page of the walked program ``w``."""
    nodes, edges = program_graph(w.closed.jaxpr)
    step_of = {s.node: k + 1 for k, s in enumerate(w.steps)}
    boxes = _forward_boxes(w, nodes, step_of)
    centres, width, height = layout(nodes, edges, {b.id: b.size for b in boxes.values()},
                                    engine)
    for b in boxes.values():
        b.x, b.y = centres[b.id]
    arrows = [(boxes[e.src], boxes[e.dst], e.label, "edge") for e in edges]
    residuals = []
    if w.mode == "vjp":
        back = _backward_boxes(w, nodes, step_of, boxes, offset=width + COLUMN_GAP)
        arrows += [(back["b" + e.dst], back["b" + e.src], e.label, "edge adjoint")
                   for e in edges if "b" + e.src in back and "b" + e.dst in back]
        residuals = _residual_arrows(w, boxes, back)
        boxes.update(back)
        width = 2 * width + COLUMN_GAP
    svg = _svg(list(boxes.values()), arrows, residuals, width, height)
    return _html(w, title, svg, residuals)


def _forward_boxes(w: Walk, nodes: Sequence[GraphNode], step_of: dict) -> dict[str, Box]:
    j = w.closed.jaxpr
    atoms = {f"c{i}": v for i, v in enumerate(j.constvars)}
    atoms.update({f"in{i}": v for i, v in enumerate(j.invars)})
    boxes = {}
    for n in nodes:
        numbers, step = [], 0
        if n.kind in ("input", "const"):
            numbers = _numbers(w, [atoms[n.id]])
        elif n.kind == "eqn":
            numbers, step = _numbers(w, j.eqns[int(n.id[1:])].outvars), step_of[n.id]
        else:  # an output: shown when its producer has run
            a = j.outvars[int(n.id[3:])]
            step = step_of.get(w.producer.get(id(a), ""), 0)
        boxes[n.id] = Box(n.id, n.kind, "fwd", n.label, numbers, step)
    return boxes


def _numbers(w: Walk, outvars) -> list[str]:
    lines = [f"= {show(w.values[id(v)])}" for v in outvars]
    if w.mode == "jvp":
        lines += [f"tangent {show(w.tangents[id(v)])}" for v in outvars if id(v) in w.tangents]
    return lines


def _backward_boxes(w: Walk, nodes: Sequence[GraphNode], step_of: dict,
                    forward: dict[str, Box], offset: float) -> dict[str, Box]:
    """The backward graph's boxes, each level with its forward node, a column to the right."""
    j = w.closed.jaxpr
    back = {}
    for n in nodes:
        bid = "b" + n.id
        if n.kind == "eqn":
            if bid not in step_of:
                continue
            outs = j.eqns[int(n.id[1:])].outvars
            label = [f"d {n.label[0]}"]
            numbers = [f"adjoint {w.name(v)}: {show(w.adjoints[id(v)])}"
                       for v in outs if id(v) in w.adjoints]
        elif n.kind == "input" and bid in step_of:
            v = j.invars[int(n.id[2:])]
            label, numbers = [f"gradient {w.name(v)}"], [f"= {show(w.adjoints[id(v)])}"]
        elif n.kind == "output" and bid in step_of:
            v = j.outvars[int(n.id[3:])]
            label, numbers = [f"seed {w.name(v)}"], [f"= {show(w.adjoints[id(v)])}"]
        else:
            continue
        box = back[bid] = Box(bid, n.kind, "bwd", label, numbers, step_of[bid])
        box.x, box.y = forward[n.id].x + offset, forward[n.id].y
    return back


def _residual_arrows(w: Walk, boxes: dict[str, Box], back: dict[str, Box]) -> list:
    kept: dict[tuple[str, str], list] = {}
    for r in w.residuals:
        dst = back.get(f"be{r.eqn}")
        if dst is not None:
            kept.setdefault((r.src, dst.id), []).append(r)
    return [(boxes[src], back[dst], sum(r.nbytes for r in rs), [r.aval for r in rs])
            for (src, dst), rs in kept.items()]


def _svg(boxes: Sequence[Box], arrows, residuals, width: float, height: float) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="picture" '
             f'viewBox="{-MARGIN} {-MARGIN} {width + 2 * MARGIN:.1f} {height + 2 * MARGIN:.1f}" '
             f'width="{width + 2 * MARGIN:.0f}" height="{height + 2 * MARGIN:.0f}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker>'
             '<marker id="arrow-residual" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7"'
             ' markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#c0392b"/>'
             '</marker></defs>']
    for src, dst, label, cls in arrows:
        (x1, y1), (x2, y2) = _clip(src, dst), _clip(dst, src)
        step = max(src.step, dst.step) if "adjoint" in cls else 0
        parts.append(f'<g class="{cls}" data-step="{step}"><line x1="{x1:.1f}" y1="{y1:.1f}" '
                     f'x2="{x2:.1f}" y2="{y2:.1f}" marker-end="url(#arrow)"/>'
                     f'<text x="{(x1 + x2) / 2 + 4:.1f}" y="{(y1 + y2) / 2:.1f}">'
                     f'{html.escape(label)}</text></g>')
    for src, dst, nbytes, avals in residuals:
        (x1, y1), (x2, y2) = _clip(src, dst), _clip(dst, src)
        bow = 30.0
        parts.append(f'<g class="residual" data-step="{dst.step}"><title>kept for the backward '
                     f'pass: {html.escape(", ".join(avals))}</title><path d="M{x1:.1f},{y1:.1f} '
                     f'C{x1 + bow:.1f},{y1 - bow:.1f} {x2 - bow:.1f},{y2 - bow:.1f} {x2:.1f},'
                     f'{y2:.1f}" marker-end="url(#arrow-residual)"/><text x="{(x1 + x2) / 2:.1f}"'
                     f' y="{(y1 + y2) / 2 - bow * 0.75:.1f}">{nbytes:,} B</text></g>')
    for b in boxes:
        parts.append(_box(b))
    parts.append("</svg>")
    return "\n".join(parts)


def _box(b: Box) -> str:
    w, h = b.size
    x0, y0 = b.x - w / 2, b.y - h / 2
    shape = (f'<ellipse cx="{b.x:.1f}" cy="{b.y:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}"/>'
             if b.kind != "eqn" else
             f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" rx="6"/>')
    lines = []
    for k, text in enumerate(b.label + b.numbers):
        cls = "label" if k < len(b.label) else "number"
        y = y0 + PAD / 2 + LINE_H * (k + 0.78)
        lines.append(f'<text class="{cls}" x="{b.x:.1f}" y="{y:.1f}" data-step="{b.step}">'
                     f'{html.escape(text)}</text>')
    return (f'<g class="node {b.kind} {b.side}" id="n-{b.id}" data-step="{b.step}">'
            f'{shape}{"".join(lines)}</g>')


def _clip(a: Box, b: Box) -> tuple[float, float]:
    """Where the segment from ``a``'s centre to ``b``'s leaves ``a``'s box."""
    w, h = a.size
    dx, dy = b.x - a.x, b.y - a.y
    if dx == 0 and dy == 0:
        return a.x, a.y
    scale = min(w / 2 / abs(dx) if dx else float("inf"), h / 2 / abs(dy) if dy else float("inf"))
    return a.x + dx * scale, a.y + dy * scale


MODES = {"program": "the program funcdiff traced, evaluated at the arguments",
         "jvp": "forward mode: each node's value and tangent",
         "vjp": "reverse mode: the forward pass (left), the backward pass (right) with each "
                "node's adjoint, and in red the values kept for the backward pass"}

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.2em; color: #222; }
#controls button { font-size: 1em; margin-right: .4em; }
#narration { font-family: monospace; min-height: 1.4em; background: #f6f6f6; padding: .4em; }
svg text { font-family: monospace; font-size: 11px; text-anchor: middle; }
g.edge line { stroke: #888; } g.edge text { fill: #777; font-size: 9px; text-anchor: start; }
g.edge.adjoint line { stroke: #2b6cb0; stroke-dasharray: 4 2; }
g.residual path { stroke: #c0392b; fill: none; stroke-width: 1.6; }
g.residual text { fill: #c0392b; font-size: 10px; }
g.node rect, g.node ellipse { stroke: #555; fill: #e8eef9; }
g.node.input ellipse { fill: #dff3e4; } g.node.const ellipse { fill: #f2f2f2; }
g.node.output ellipse { fill: #fbe3d6; } g.node.bwd rect, g.node.bwd ellipse { fill: #e3ecf7; }
g.node text.number { fill: #1a4f8b; }
g.node.current rect, g.node.current ellipse { stroke: #d35400; stroke-width: 3; }
.stepping [data-step].later { visibility: hidden; }
.stepping g.node.later { visibility: visible; opacity: .35; }
"""

SCRIPT = """
(function () {
  var steps = JSON.parse(document.getElementById("steps").textContent);
  var state = 0;
  function apply(s) {
    state = Math.max(0, Math.min(steps.length, s));
    document.body.classList.add("stepping");
    document.querySelectorAll("[data-step]").forEach(function (el) {
      el.classList.toggle("later", Number(el.getAttribute("data-step")) > state);
    });
    document.querySelectorAll("g.node").forEach(function (el) { el.classList.remove("current"); });
    var text = state === 0 ? "before the first step: the inputs" : steps[state - 1].text;
    if (state > 0) {
      var node = document.getElementById("n-" + steps[state - 1].node);
      if (node) { node.classList.add("current"); }
    }
    document.getElementById("narration").textContent =
      "step " + state + " of " + steps.length + ": " + text;
    var rendered = 0;
    document.querySelectorAll("svg g.node").forEach(function (el) {
      var box = el.getBBox(); if (box.width > 0 && box.height > 0) { rendered += 1; }
    });
    document.body.setAttribute("data-step", String(state));
    document.body.setAttribute("data-rendered-nodes", String(rendered));
  }
  document.getElementById("back").onclick = function () { apply(state - 1); };
  document.getElementById("next").onclick = function () { apply(state + 1); };
  document.getElementById("start").onclick = function () { apply(0); };
  document.getElementById("end").onclick = function () { apply(steps.length); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight") { apply(state + 1); } if (e.key === "ArrowLeft") { apply(state - 1); }
  });
  var m = /step=(\\d+|all)/.exec(window.location.hash);
  apply(m ? (m[1] === "all" ? steps.length : Number(m[1])) : 0);
})();
"""


def _html(w: Walk, title: str, svg: str, residuals) -> str:
    steps = json.dumps([{"node": s.node, "text": s.text} for s in w.steps])
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        steps = steps.replace(char, escaped)  # inert inside the script element
    kept = ""
    if w.mode == "vjp":
        total = sum(r.nbytes for r in w.residuals)
        kept = (f'<p id="residual-total">kept for the backward pass: {len(w.residuals)} values, '
                f'{total:,} bytes</p>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{STYLE}</style></head>
<body data-mode="{w.mode}">
<h1>{html.escape(title)}</h1>
<p>{html.escape(MODES[w.mode])}. Step through it: the buttons or the arrow keys.</p>
<div id="controls"><button id="start">&#124;&#9664;</button><button id="back">&#9664; back</button><button id="next">step &#9654;</button><button id="end">&#9654;&#124;</button></div>
<p id="narration">all steps shown</p>
{kept}
{svg}
<script type="application/json" id="steps">{steps}</script>
<script>{SCRIPT}</script>
</body></html>
"""
