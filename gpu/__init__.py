"""Torch device choice and the wgpu renderer."""
