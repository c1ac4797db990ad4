"""Exception classes of funcdiff.

Every error funcdiff raises on purpose is one of these classes, so users can
catch ``FunctionalDiffError`` for all of them. Each subclass also derives from
the builtin exception a Python programmer would expect (``TypeError`` for a
value of the wrong kind, ``ValueError`` for a wrong shape), so code written
against numpy's exceptions keeps working.
"""


class FunctionalDiffError(Exception):
    """Base class of every error funcdiff raises on purpose."""


class TreeStructureError(FunctionalDiffError, ValueError):
    """Two pytrees that must have the same structure do not."""


class ShapeError(FunctionalDiffError, ValueError):
    """An operation received arrays whose shapes it cannot combine."""


class DTypeError(FunctionalDiffError, TypeError):
    """An operation received a dtype it does not support."""


class AxisError(FunctionalDiffError, ValueError):
    """An axis argument is out of range or repeated."""


class InvalidArgumentError(FunctionalDiffError, TypeError):
    """A transform or operation received an argument of the wrong kind."""


class ConcretizationError(FunctionalDiffError, TypeError):
    """A traced (abstract) value was used where a concrete one is needed."""


class TracerConversionError(FunctionalDiffError, TypeError):
    """A traced value that carries a derivative was converted to a Python or numpy number."""


class TracerArrayConversionError(TracerConversionError):
    """A tracer was converted to a numpy array, which would cut the trace."""


class UnsupportedNumpyError(FunctionalDiffError, NotImplementedError):
    """A numpy function or argument has no funcdiff implementation."""


class DifferentiationError(FunctionalDiffError, TypeError):
    """A derivative was requested where none is defined."""


class NonlinearTransposeError(DifferentiationError):
    """Transposition reached an operation that is not linear in the values being
    transposed. From reverse mode that is a bug in a derivative rule; from
    ``linear_transpose`` it means the user's function is not linear. ``reason``
    says which operation, without blaming either."""

    def __init__(self, reason: str):
        super().__init__(f"{reason}; this is a bug in a jvp or custom rule, please report it.")
        self.reason = reason


class BatchingError(FunctionalDiffError, ValueError):
    """vmap received inconsistent batch axes or sizes."""


class JaxprTypeError(FunctionalDiffError, TypeError):
    """A jaxpr failed the type checker."""


class IndexOutOfBoundsError(FunctionalDiffError, IndexError):
    """An index lies outside the axis it indexes."""


class CustomRuleError(FunctionalDiffError, ValueError):
    """A custom_jvp or custom_vjp rule returned values of the wrong structure, shape or dtype."""


class ControlFlowTypeError(FunctionalDiffError, TypeError):
    """Branches or loop bodies of fd.lax control flow disagree on types or structure."""


class FloatingPointCheckError(FunctionalDiffError, FloatingPointError):
    """With ``fd.config`` ``debug_nans`` (or ``debug_infs``) on, an operation produced a
    NaN (or an inf) from operands free of them; the message names the operation,
    its operands and the user's source line."""


class RetraceWarning(UserWarning):
    """A jitted function keeps being traced again for new argument shapes or dtypes."""


class LazyComputeWarning(UserWarning):
    """A Python branch (``if``, ``float()``, an index) on a traced value computed a
    lazy array (a dask graph) eagerly; said once per array library."""
