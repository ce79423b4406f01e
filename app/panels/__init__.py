"""Docked panels and the tool palette: brush settings, view settings, tools."""
