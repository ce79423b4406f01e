"""Which torch device the document and the brushes compute on.

An explicit choice (argument, then the ``SPECTROPAINT_DEVICE`` environment variable) wins; otherwise
CUDA, then Apple's MPS, then the CPU. Asking for a device that is not there is an error, not a silent
fallback, so a person who typed ``--device cuda`` learns that CUDA is missing.
"""

from __future__ import annotations

import os

import torch

from spectropaint.transforms.errors import SettingsError

ENV_VAR = "SPECTROPAINT_DEVICE"


def available_devices() -> list[str]:
    """Names of the devices this machine can compute on, best first."""
    names = []
    if torch.cuda.is_available():
        names.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    names.append("cpu")
    return names


def choose_device(explicit: str | torch.device | None = None) -> torch.device:
    """The device to use: ``explicit``, else ``$SPECTROPAINT_DEVICE``, else the best available."""
    wanted = explicit if explicit is not None else os.environ.get(ENV_VAR) or None
    if wanted is None:
        return torch.device(available_devices()[0])
    try:
        device = torch.device(wanted)
    except (RuntimeError, TypeError) as exc:
        raise SettingsError(f"unknown torch device {wanted!r}: {exc}") from None
    if device.type not in available_devices():
        raise SettingsError(
            f"torch device {device.type!r} was asked for but is not available here "
            f"(available: {', '.join(available_devices())})"
        )
    if (
        device.type == "cuda"
        and device.index is not None
        and device.index >= torch.cuda.device_count()
    ):
        raise SettingsError(
            f"CUDA device {device.index} was asked for but only {torch.cuda.device_count()} exist"
        )
    return device


def describe(device: torch.device) -> str:
    """A one-line description for the About box and benchmark tables."""
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return device.type
