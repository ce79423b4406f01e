"""The tool palette's SVG icons (data, read through importlib.resources)."""
