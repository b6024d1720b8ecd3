"""The Numba backend: whole functions compiled by Numba, elementwise runs fused into loop nests."""
