"""Adjoint helpers for linear algebra primitives."""
from __future__ import annotations

__all__ = []
