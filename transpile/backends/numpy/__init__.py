"""The NumPy backend: the generated NumPy module run as it is (the reference, and a debugging path)."""
