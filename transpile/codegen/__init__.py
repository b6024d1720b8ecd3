"""Code generation: print normal-form functions as a commented module, cache it on disk, import it."""
