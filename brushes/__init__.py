"""Strokes, dabs, brush kernels and the edit history."""
