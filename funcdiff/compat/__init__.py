"""Compatibility layers: other libraries' public names on funcdiff.

- ``funcdiff.compat.autograd``: HIPS autograd's API (``grad``, ``make_vjp``,
  ``primitive``/``defvjp``, ``misc.optimizers``, ...), so porting an autograd
  program is changing its imports.
"""
