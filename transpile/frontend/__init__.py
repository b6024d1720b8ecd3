"""Frontend: read a Python function's source and bring it into normal form."""
