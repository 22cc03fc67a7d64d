"""The input checks: what a public entry tests before it computes.

The model code calls one check per entry; the checks live here, named after
what they check, so that a listing shows the idea and not its guards.
"""
