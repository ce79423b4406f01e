"""Brush kernels: pure torch functions of one dab's region (see :mod:`.context` for the signature);
warp's and the clone's also compiled by Numba for the CPU (:mod:`.warp_compiled`,
:mod:`.clone_compiled`, sharing :mod:`.compiled_math`), warp's for CUDA by Triton
(:mod:`.warp_fused`)."""
