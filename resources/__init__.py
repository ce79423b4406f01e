"""Package data: colormaps, icons, example strokes, the demo sound recipe."""
