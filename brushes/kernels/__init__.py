"""Brush kernels: pure torch functions of one dab's region (see :mod:`.context` for the signature)."""
