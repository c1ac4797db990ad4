"""Pictures: ClosedJaxpr.to_dot and fd.draw's pages.

The DOT text parses (its nodes and edges counted against the program, and
read back by Graphviz where its dot program is installed); each page holds one
SVG drawing with a node per equation, no reference to anything outside the
file, steps that walk forward then backward, and numbers equal to funcdiff's
own values, tangents and gradients; in headless Chromium (where installed) the
page renders every node and, stepped to the end, shows the gradients.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import FunctionalDiffError
from funcdiff.pictures import layout as layout_module


def engine_loss(a, b, c):
    return fnp.tanh(a * b + a) * c


def mlp_loss(params, x):
    w1, w2 = params
    return fnp.sum(fnp.tanh(x @ w1) @ w2)


def scan_loss(xs):
    return fd.lax.scan(lambda c, x: (c * fnp.sin(x) + 1.0, c), 0.5, xs)[0]


def literal_loss(x):
    return fnp.sum(fnp.exp(x * 2.0) - 1.0)


RNG = np.random.default_rng(0)
PROGRAMS = [  # (name, function, args)
    ("scalar engine", engine_loss, (1.0, -0.5, 2.0)),
    ("mlp", mlp_loss, ((RNG.standard_normal((3, 4)), RNG.standard_normal(4)),
                       RNG.standard_normal((2, 3)))),
    ("scan", scan_loss, (np.array([0.1, 0.7, -0.3]),)),
    ("literals", literal_loss, (np.array([0.2, -0.4]),)),
]
IDS = [p[0] for p in PROGRAMS]


# ---------------------------------------------------------------------------
# DOT

def parse_dot(text: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The node statements (id -> attributes) and edges of ``digraph()``'s output."""
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    nodes, edges = {}, []
    for line in text.splitlines()[1:-1]:
        line = line.strip()
        if m := re.fullmatch(r"(\w+) -> (\w+)( \[.*\])?;", line):
            edges.append((m[1], m[2]))
        elif m := re.fullmatch(r"(\w+) \[(.*)\];", line):
            if m[1] not in ("node", "edge"):
                nodes[m[1]] = m[2]
        else:
            assert re.fullmatch(r"\w+=\w+;", line), line
    return nodes, edges


@pytest.mark.parametrize("name, f, args", PROGRAMS, ids=IDS)
def test_to_dot_has_a_node_per_atom_and_an_edge_per_use(name, f, args):
    closed = fd.make_jaxpr(f)(*args)
    j = closed.jaxpr
    nodes, edges = parse_dot(closed.to_dot())
    assert len(nodes) == len(j.constvars) + len(j.invars) + len(j.eqns) + len(j.outvars)
    uses = sum(type(a) is not fd.ir.Literal for e in j.eqns for a in e.invars)
    assert len(edges) == uses + sum(type(a) is not fd.ir.Literal for a in j.outvars)
    assert {src for src, _ in edges} <= set(nodes) and {dst for _, dst in edges} <= set(nodes)
    for k, eqn in enumerate(j.eqns):
        assert f'label="{eqn.primitive.name}\\n' in nodes[f"e{k}"]
    assert all("peripheries=2" in nodes[f"out{i}"] for i in range(len(j.outvars)))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_graphviz_reads_the_dot_text():
    closed = fd.make_jaxpr(mlp_loss)(*PROGRAMS[1][2])
    plain = subprocess.run(["dot", "-Tplain"], input=closed.to_dot(), capture_output=True,
                           text=True, check=True).stdout.splitlines()
    nodes, edges = parse_dot(closed.to_dot())
    assert sum(line.startswith("node ") for line in plain) == len(nodes)
    assert sum(line.startswith("edge ") for line in plain) == len(edges)


def test_dot_strings_are_escaped():
    from funcdiff.dot import quote
    assert quote('a "b"\\c\nd') == '"a \\"b\\"\\\\c\\nd"'


# ---------------------------------------------------------------------------
# Pages

class PageParser(html.parser.HTMLParser):
    """Counts the page's elements and collects the SVG nodes' texts."""

    def __init__(self):
        super().__init__()
        self.tags: dict[str, int] = {}
        self.nodes: dict[str, dict] = {}
        self.scripts: list[tuple[dict, str]] = []
        self.external: list[str] = []
        self._node = None
        self._script = None
        self._text_class = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for key in ("src", "href"):
            if key in a:
                self.external.append(f"{tag} {key}={a[key]}")
        if tag == "link":
            self.external.append("link")
        if tag == "g" and "node" in a.get("class", "").split():
            self._node = a["id"]
            self.nodes[self._node] = {"class": a["class"].split(), "step": int(a["data-step"]),
                                      "label": [], "number": []}
        if tag == "text" and self._node is not None:
            self._text_class = a.get("class")
        if tag == "script":
            self._script = [a, ""]

    def handle_endtag(self, tag):
        if tag == "g":
            self._node = None
        if tag == "text":
            self._text_class = None
        if tag == "script":
            self.scripts.append(tuple(self._script))
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script[1] += data
        elif self._node is not None and self._text_class in ("label", "number"):
            self.nodes[self._node][self._text_class].append(data)


def parse_page(page: str) -> PageParser:
    p = PageParser()
    p.feed(page)
    return p


def steps_of(p: PageParser) -> list[dict]:
    data = [text for attrs, text in p.scripts if attrs.get("type") == "application/json"]
    assert len(data) == 1
    return json.loads(data[0])


def number(text: str) -> float:
    return float(text.split()[-1])


@pytest.mark.parametrize("layout", ["layered", "auto"])
@pytest.mark.parametrize("name, f, args", PROGRAMS, ids=IDS)
def test_a_vjp_page_draws_every_equation_and_its_adjoint(name, f, args, layout):
    closed = fd.make_jaxpr(f)(*args)
    n_eqns = len(closed.eqns)
    p = parse_page(fd.draw(f, *args, mode="vjp", layout=layout))
    assert p.tags["svg"] == 1 and p.tags.get("img", 0) == 0 and not p.external
    assert [a for a, _ in p.scripts if a.get("type") != "application/json"] == [{}]  # inline
    forward = [n for n in p.nodes if "fwd" in p.nodes[n]["class"]]
    assert sorted(n for n in forward if n.startswith("n-e")) == sorted(
        f"n-e{k}" for k in range(n_eqns))
    steps = steps_of(p)
    assert [s["node"] for s in steps[:n_eqns]] == [f"e{k}" for k in range(n_eqns)]
    assert all(s["text"].startswith("forward: ") for s in steps[:n_eqns])
    assert all(s["text"].startswith("backward: ") for s in steps[n_eqns:])
    backward_eqns = [s["node"] for s in steps if s["node"].startswith("be")]
    assert [int(b[2:]) for b in backward_eqns] == sorted((int(b[2:]) for b in backward_eqns),
                                                         reverse=True)
    for k, s in enumerate(steps, 1):  # each step lights a node drawn with that step
        assert p.nodes["n-" + s["node"]]["step"] == k
    grads = fd.grad(f, argnums=tuple(range(len(args))))(*args)
    flat = fd.tree_util.tree_flatten(grads)[0]
    for i, g in enumerate(flat):
        node = p.nodes[f"n-bin{i}"]
        shown = node["number"][0]
        if np.ndim(g) == 0:
            assert number(shown) == pytest.approx(float(g), rel=1e-3)
        else:
            assert shown.startswith(f"= {fd.core.get_aval(np.asarray(g)).str_short()}"
                                    if np.size(g) > 3 else "= [")


def test_the_scalar_engine_page_shows_the_hand_calculation():
    p = parse_page(fd.draw(engine_loss, 1.0, -0.5, 2.0, mode="vjp"))
    gradients = {p.nodes[f"n-bin{i}"]["label"][0]: number(p.nodes[f"n-bin{i}"]["number"][0])
                 for i in range(3)}
    assert gradients == {"gradient a": 0.7864, "gradient b": 1.573, "gradient c": 0.4621}
    adjoints = [t for n, v in p.nodes.items() if n.startswith("n-be") for t in v["number"]]
    assert sorted(adjoints) == ["adjoint d: 1.573", "adjoint e: 1.573", "adjoint f: 2",
                                "adjoint g: 1"]
    assert "= 0.9242" in p.nodes["n-e3"]["number"]  # L


def test_residual_edges_carry_the_kept_values_and_their_bytes():
    x = np.linspace(0.0, 1.0, 100)
    page = fd.draw(lambda x: fnp.sum(fnp.sin(x)), x, mode="vjp")
    # sin keeps cos(x), made by its own forward step (sum keeps nothing)
    assert 'id="residual-total">kept for the backward pass: 1 values, 800 bytes' in page
    assert page.count('<g class="residual"') == 1 and ">800 B</text>" in page
    y = np.ones(100)
    page = fd.draw(lambda x, y: fnp.sum(x * y), x, y, mode="vjp")
    # mul keeps both operands, each from its input node
    assert "kept for the backward pass: 2 values, 1,600 bytes" in page
    assert page.count('<g class="residual"') == 2


@pytest.mark.parametrize("name, f, args", PROGRAMS, ids=IDS)
def test_a_jvp_page_shows_each_tangent(name, f, args):
    flat, tree = fd.tree_util.tree_flatten(args)
    tangents = fd.tree_util.tree_unflatten(tree, [np.full(np.shape(x), 0.5) for x in flat])
    p = parse_page(fd.draw(f, *args, mode="jvp", tangents=tangents))
    _, t_out = fd.jvp(f, args, tangents)
    closed = fd.make_jaxpr(f)(*args)
    last = p.nodes[f"n-e{len(closed.eqns) - 1}"]["number"]
    tangent = next(t for t in last if t.startswith("tangent"))  # the output comes first
    assert number(tangent) == pytest.approx(float(t_out), rel=1e-3)
    assert all(s["text"].startswith("forward: ") and "tangent" in s["text"]
               for s in steps_of(p))


def test_a_program_page_walks_the_forward_pass_only():
    p = parse_page(fd.draw(engine_loss, 1.0, -0.5, 2.0))
    assert [s["node"] for s in steps_of(p)] == ["e0", "e1", "e2", "e3"]
    assert not any("bwd" in v["class"] for v in p.nodes.values())
    assert p.nodes["n-e2"]["number"] == ["= 0.4621"]


def test_draw_writes_the_page_to_path(tmp_path):
    path = tmp_path / "engine.html"
    page = fd.draw(engine_loss, 1.0, -0.5, 2.0, mode="vjp", path=str(path), title="L & <c>")
    assert path.read_text(encoding="utf-8") == page
    assert "<title>L &amp; &lt;c&gt;</title>" in page


def test_narration_is_inert_inside_the_script_element():
    def f(x):
        return fnp.where(x < 0.5, x, 2.0 * x)
    page = fd.draw(f, 0.2, mode="vjp")
    data = page.split('<script type="application/json" id="steps">')[1].split("</script>")[0]
    assert "<" not in data and json.loads(data)


def test_the_layered_layout_spreads_a_few_hundred_equations():
    def deep(x):
        for i in range(100):
            x = fnp.sin(x) * 0.5 + x
        return fnp.sum(x)
    closed = fd.make_jaxpr(deep)(np.ones(3))
    nodes, edges = fd.ir.program_graph(closed.jaxpr)
    sizes = {n.id: (60.0, 30.0) for n in nodes}
    centres, width, height = layout_module.layered_layout(nodes, edges, sizes)
    assert len(closed.eqns) >= 300 and set(centres) == {n.id for n in nodes}
    rows: dict[float, list[float]] = {}
    for x, y in centres.values():
        rows.setdefault(y, []).append(x)
    for xs in rows.values():  # no two nodes of a layer overlap
        xs.sort()
        assert all(b - a >= 60.0 for a, b in zip(xs, xs[1:]))
    for e in edges:  # every edge points down
        assert centres[e.src][1] < centres[e.dst][1]
    assert 0 < width and 0 < height


def test_bad_input_is_refused_with_the_fix():
    with pytest.raises(FunctionalDiffError, match="mode='backward' is not a mode"):
        fd.draw(engine_loss, 1.0, 2.0, 3.0, mode="backward")
    with pytest.raises(FunctionalDiffError, match="layout='circle' is not a layout"):
        fd.draw(engine_loss, 1.0, 2.0, 3.0, layout="circle")
    with pytest.raises(FunctionalDiffError, match="needs a float output"):
        fd.draw(lambda x: fnp.argmax(x), np.ones(3), mode="vjp")
    with pytest.raises(FunctionalDiffError, match="tangents must match the arguments"):
        fd.draw(engine_loss, 1.0, 2.0, 3.0, mode="jvp", tangents=(1.0, 2.0))
    with pytest.raises(FunctionalDiffError, match="cotangents must match the output"):
        fd.draw(engine_loss, 1.0, 2.0, 3.0, mode="vjp", cotangents=np.ones(2))


def test_graphviz_layout_without_graphviz_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(layout_module.shutil, "which", lambda name: None)
    with pytest.raises(FunctionalDiffError, match="apt-get install graphviz"):
        fd.draw(engine_loss, 1.0, 2.0, 3.0, layout="graphviz")
    assert "<svg" in fd.draw(engine_loss, 1.0, 2.0, 3.0)  # auto falls back to layered


# ---------------------------------------------------------------------------
# In a browser

def chromium() -> str | None:
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def rendered_dom(path: str, step: str) -> str:
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--dump-dom", f"file://{path}#step={step}"],
                          capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed")
def test_in_chromium_every_node_renders_and_the_last_step_shows_the_gradients(tmp_path):
    path = os.path.join(tmp_path, "engine.html")
    fd.draw(engine_loss, 1.0, -0.5, 2.0, mode="vjp", path=path)
    p = parse_page(open(path, encoding="utf-8").read())
    dom = rendered_dom(path, "all")
    body = re.search(r"<body([^>]*)>", dom)[1]
    assert f'data-rendered-nodes="{len(p.nodes)}"' in body
    assert f'data-step="{len(steps_of(p))}"' in body

    def numbers(dom):  # (hidden, text) of each number label
        return [(bool(later), text) for later, text in
                re.findall(r'<text class="number( later)?"[^>]*>([^<]*)</text>', dom)]
    at_end = numbers(dom)
    assert len(at_end) == sum(len(v["number"]) for v in p.nodes.values())
    assert not any(hidden for hidden, _ in at_end)
    assert {"= 0.7864", "= 1.573", "= 0.4621", "adjoint d: 1.573"} <= {t for _, t in at_end}
    assert "step 12 of 12: backward: the gradient with respect to c is 0.4621" in dom
    at_start = numbers(rendered_dom(path, "0"))
    hidden = {t for h, t in at_start if h}
    assert "= 0.7864" in hidden and "= 2" not in hidden  # the input c is shown from the start
