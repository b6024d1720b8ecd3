"""Analyses over normal form: activity, definedness."""
