"""The primitive set of funcdiff, one module per family.

Each primitive is declared as a *card*: the primitive and all of its rules
(impl, abstract_eval, jvp, transpose, batch, cost) side by side. The helpers
in ``cards`` declare the common shapes of card in a line or two.
"""
