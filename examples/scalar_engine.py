"""The chain rule on one small graph, forward and backward, checked by hand.

    L = tanh(a * b + a) * c        at  a = 1, b = -0.5, c = 2

funcdiff traces the function into a program (its jaxpr: d = a*b, e = d + a,
f = tanh(e), L = f*c), evaluates it forward, and reverse mode walks it
backward accumulating ``dL/dnode``. The gradient with respect to an
intermediate node is the gradient with respect to a perturbation added to that
node, so funcdiff itself reports every node's gradient; the hand calculation
is printed beside it. Then the backward program that jit runs, which is the
hand calculation written out. Last, ``fd.draw`` writes the same walk as a page
to open in a browser: the forward graph with its values, the backward graph
with each node's adjoint, the values kept between them, and a step control
that walks both passes one node at a time.

Run: ``python examples/scalar_engine.py [--page PATH]`` (the page goes to the
temporary directory unless PATH is given).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile

import funcdiff as fd
import funcdiff.numpy as fnp


def loss(a, b, c):
    return fnp.tanh(a * b + a) * c


def loss_with_probes(a, b, c, pd, pe, pf):
    """``loss`` with a zero perturbation added to each intermediate node, so
    that dL/dpd = dL/dd, and so on."""
    d = a * b + pd
    e = d + a + pe
    f = fnp.tanh(e) + pf
    return f * c


def hand_calculation(a: float, b: float, c: float) -> dict:
    """The forward and backward sweeps done by hand with the chain rule."""
    d = a * b
    e = d + a
    f = math.tanh(e)
    L = f * c
    dL_df = c                     # L = f * c
    dL_dc = f
    dL_de = dL_df * (1 - f * f)   # tanh'(e) = 1 - tanh(e)^2
    dL_dd = dL_de                 # e = d + a
    dL_da = dL_de + dL_dd * b     # a reaches L directly through e, and through d = a * b
    dL_db = dL_dd * a
    return {"d": d, "e": e, "f": f, "L": L, "dL/dd": dL_dd, "dL/de": dL_de,
            "dL/df": dL_df, "dL/da": dL_da, "dL/db": dL_db, "dL/dc": dL_dc}


def main(a: float = 1.0, b: float = -0.5, c: float = 2.0, verbose: bool = True,
         page: str | None = None) -> dict:
    """Print the graph forward and backward, write its page to ``page`` (default: in
    the temporary directory); return funcdiff's value and gradients."""
    say = print if verbose else (lambda *_: None)
    say("The program funcdiff traces for L = tanh(a*b + a) * c:")
    say(fd.make_jaxpr(loss)(a, b, c))

    hand = hand_calculation(a, b, c)
    value, (ga, gb, gc) = fd.value_and_grad(loss, argnums=(0, 1, 2))(a, b, c)
    gd, ge, gf = fd.grad(loss_with_probes, argnums=(3, 4, 5))(a, b, c, 0.0, 0.0, 0.0)
    ours = {"L": float(value), "dL/da": float(ga), "dL/db": float(gb), "dL/dc": float(gc),
            "dL/dd": float(gd), "dL/de": float(ge), "dL/df": float(gf)}

    say(f"\nforward (a={a:g}, b={b:g}, c={c:g})")
    for name, expr in [("d", "a * b"), ("e", "d + a"), ("f", "tanh(e)"), ("L", "f * c")]:
        say(f"  {name} = {expr:8s} = {hand[name]: .4f}")
    say(f"  funcdiff's L   = {ours['L']: .4f}")

    say("\nbackward      funcdiff    by hand")
    for node in ["dL/df", "dL/dc", "dL/de", "dL/dd", "dL/da", "dL/db"]:
        say(f"  {node:8s} {ours[node]: 10.4f} {hand[node]: 10.4f}")
        assert abs(ours[node] - hand[node]) < 1e-12, node

    say("\nThe backward program jit runs (reverse mode = linearize, then transpose,")
    say("then optimise); it returns (dL/da, dL/db, dL/dc):")
    say(fd.jit(fd.grad(loss, argnums=(0, 1, 2))).lower(a, b, c).optimized_jaxpr)

    page = page or os.path.join(tempfile.gettempdir(), "scalar_engine.html")
    fd.draw(loss, a, b, c, mode="vjp", path=page, title="L = tanh(a*b + a) * c")
    say(f"\nThe same walk, one node at a time: open {page} in a browser.")
    ours["page"] = page
    return ours


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", help="where to write the page (default: the temporary directory)")
    main(page=parser.parse_args().page)
