"""Which transform analyses a document: its settings, by name, and the transform they make.

Two transforms are editable: the STFT (:class:`~.stft.STFTSettings`: FFT size, hop, window, engine)
and the sliced NSGT (:class:`~.nsgt_design.NSGTSettings`: scale, bins per octave, fmin, fmax). A
project stores ``{"name": ..., "settings": ...}`` and :func:`settings_from_dict` reads it back.
"""

from __future__ import annotations

from typing import Any

import torch

from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.transform import Transform

AnalysisSettings = STFTSettings | NSGTSettings
TRANSFORMS = ("stft", "nsgt")


def transform_name(settings: AnalysisSettings) -> str:
    return "nsgt" if isinstance(settings, NSGTSettings) else "stft"


def make_transform(
    settings: AnalysisSettings, sample_rate: int, device: torch.device | str = "cpu"
) -> Transform:
    """The transform ``settings`` describe, for audio at ``sample_rate``, computing on ``device``."""
    if isinstance(settings, NSGTSettings):
        from spectropaint.transforms.nsgt import NSGT

        return NSGT(settings, sample_rate, device=device)
    return STFT(settings, device=device)


def settings_from_dict(name: Any, values: Any) -> AnalysisSettings:
    """Settings from a transform's name and its ``to_dict()``; :class:`SettingsError` if bad."""
    if name not in TRANSFORMS:
        raise SettingsError(f"unknown transform {name!r} (known: {', '.join(TRANSFORMS)})")
    if not isinstance(values, dict):
        raise SettingsError(f"transform settings must be an object, not {values!r}")
    kind = NSGTSettings if name == "nsgt" else STFTSettings
    try:
        return kind(**values)
    except TypeError as err:
        raise SettingsError(f"bad {name} settings ({err})") from None


def describe(settings: AnalysisSettings) -> str:
    """One line for a status bar: ``'STFT 2048/512 hann'`` or the NSGT's description."""
    if isinstance(settings, NSGTSettings):
        return settings.describe()
    return f"STFT {settings.n_fft}/{settings.hop} {settings.window}"
