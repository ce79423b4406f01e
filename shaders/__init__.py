"""WGSL shader sources, loaded with importlib.resources."""
