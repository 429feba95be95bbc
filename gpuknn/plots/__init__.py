"""Matplotlib figures from study results (NumPy in, ``Figure`` out; callers save PNGs)."""
