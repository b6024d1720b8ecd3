"""Frontend: read a Python function's source and bring it into normal form."""


def normal_form_source(fn) -> str:
    """The normal form of `fn` and of the user functions it calls, as Python source (for reading and tests)."""
    from ..codegen.module import normal_form_text
    from .desugar import desugar_program

    return normal_form_text(desugar_program(fn))
