"""SpectroPaint: paint on sound.

The import package's subpackages are the repository's top-level folders: ``spectropaint.app`` (the Qt
shell and the command line), ``spectropaint.gpu`` (device choice and the wgpu renderer),
``spectropaint.transforms`` (audio files, transforms, the document), ``spectropaint.brushes`` (strokes,
kernels, history), and the data packages ``spectropaint.shaders`` and ``spectropaint.resources``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spectropaint")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
