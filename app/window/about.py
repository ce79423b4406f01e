"""The About box's text: versions of the program and its libraries, the torch device, the GPU."""

from __future__ import annotations

import html
import platform
from importlib.metadata import PackageNotFoundError, version

LIBRARIES = (
    "torch",
    "numpy",
    "wgpu",
    "rendercanvas",
    "PySide6-Essentials",
    "sounddevice",
    "soundfile",
    "nnAudio",
)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def library_versions() -> dict[str, str]:
    """Installed version of the program, Python, Qt, PortAudio, libsndfile and each library."""
    from PySide6.QtCore import qVersion

    from spectropaint import __version__

    versions = {"SpectroPaint": __version__, "Python": platform.python_version(), "Qt": qVersion()}
    versions.update({name: _version(name) for name in LIBRARIES})
    try:
        import sounddevice

        versions["PortAudio"] = sounddevice.get_portaudio_version()[1]
    except OSError:
        versions["PortAudio"] = "not found"
    import soundfile

    versions["libsndfile"] = soundfile.__libsndfile_version__
    return versions


def about_html(*, torch_device: str, gpu_adapter: str, audio_output: str) -> str:
    """Rich text for ``QMessageBox.about``."""
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{html.escape(value)}</td></tr>"
        for name, value in library_versions().items()
    )
    return (
        "<h3>SpectroPaint</h3><p>Paint on sound: a GPU spectrogram editor with exact round trips.</p>"
        f"<p><b>Torch device:</b> {html.escape(torch_device)}<br>"
        f"<b>GPU adapter:</b> {html.escape(gpu_adapter)}<br>"
        f"<b>Audio output:</b> {html.escape(audio_output)}</p>"
        f"<table cellspacing='6'>{rows}</table>"
    )
