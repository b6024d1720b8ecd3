"""Numba's compile errors summed up for the user: the message of the helper that rejected the call."""

from transpile.backends.numba.errors import summary

NESTED = """Failed in nopython mode pipeline (step: nopython frontend)
No implementation of function Function(<function kernel at 0x1>) found for signature:
 - Of which 1 did not match due to:
 Overload in function '_kernel': File: runtime/numba/fused.py: Line 428.
  Rejected as the implementation raised a specific error:
    TypingError: No implementation of function Function(<function unbroadcast at 0x2>) found for signature:
   - Of which 2 did not match due to:
   Overload in function '_unbroadcast': File: runtime/numba/adjoint.py: Line 47.
    Rejected as the implementation raised a specific error:
      TypingError: cannot differentiate `+` or `*` of tuples whose lengths are not written in the function
    raised from runtime/numba/adjoint.py:52
 - Of which 1 did not match due to:
  Rejected as the implementation raised a specific error:
    TypingError: jt.kernel needs its block as string literals
"""


def test_a_helper_rejected_inside_another_is_named_by_its_own_message():
    assert summary(NESTED) == "cannot differentiate `+` or `*` of tuples whose lengths are not written in the function"


def test_a_single_rejection_keeps_its_message():
    text = "No implementation of function f\n  Rejected as the implementation raised a specific error:\n    " + (
        "TypingError: np.take needs an integer index"
    )
    assert summary(text) == "np.take needs an integer index"
