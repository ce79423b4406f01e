"""Example recorded strokes files (data, read through importlib.resources)."""
