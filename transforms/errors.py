"""The project's error types: every message names what failed and why."""

from __future__ import annotations

import os


class SpectroPaintError(Exception):
    """Base of every error SpectroPaint reports to a person (CLI message or dialog)."""


class FileError(SpectroPaintError):
    """A file could not be read or written: ``cannot {action} '{path}': {reason}``."""

    default_action = "open"

    def __init__(self, path: str | os.PathLike, reason: str, *, action: str | None = None):
        self.path = os.fspath(path)
        self.reason = reason
        self.action = self.default_action if action is None else action
        super().__init__(f"cannot {self.action} '{self.path}': {reason}")


class AudioFileError(FileError):
    """An audio file could not be read or written.

    The message always names the file and the reason, e.g.
    ``cannot open 'take3.wav': not a recognised audio file (starts with b'hello')``.
    """


class SettingsError(SpectroPaintError, ValueError):
    """A parameter (transform, brush, export option) is out of its allowed range."""


class Cancelled(SpectroPaintError):
    """Long work (opening, analysing, exporting) was cancelled by the person who started it."""


class ProjectFileError(SpectroPaintError):
    """A project file (``.spp``) could not be read or written.

    The message always names the file and the reason, e.g.
    ``cannot open project 'song.spp': member 'audio.flac' is missing``.
    """

    def __init__(self, path: str | os.PathLike, reason: str, *, action: str = "open"):
        self.path = os.fspath(path)
        self.reason = reason
        self.action = action
        super().__init__(f"cannot {action} project '{self.path}': {reason}")


class ImageFileError(SpectroPaintError):
    """An image could not be read (imported as sound).

    The message names the file and the reason, e.g.
    ``cannot open image 'text.png': not a PNG or JPEG image``.
    """

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"cannot open image '{self.path}': {reason}")
