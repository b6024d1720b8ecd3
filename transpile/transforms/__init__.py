"""Transforms: generic walkers over normal form that ask the registry for each primitive's rules."""
