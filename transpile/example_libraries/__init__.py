"""Libraries written with transpile, as JAX's `jax.example_libraries`: `optimizers` and `stax`, in plain NumPy."""
