"""What is heard after an edit, measured: the repair tests and benchmark share these.

Everything is judged on the output audio analysed again (the edited document's resynthesis, then
the same STFT), never on the coefficients an operation wrote.
"""

import numpy as np
import torch

from spectropaint.transforms.document import Document


def heard(document, region=None) -> np.ndarray:
    """Magnitude ``[C, bins, frames]`` of the document's edited output analysed again (``region``:
    only its cells, from the edited samples its frames see)."""
    if region is None:
        samples = torch.from_numpy(document.edited_samples()).to(document.device)
        blocks = document.transform.analyse(samples)
        return blocks[0].abs().cpu().numpy()
    lo, hi = document.transform.frames_reaching(0, region.frame0, region.frame1, document.n_samples)
    first, span = document.edited_span(lo, hi)
    samples = np.zeros((document.n_channels, document.n_samples))
    samples[:, first : first + span.shape[-1]] = span
    coefficients = document.transform.analyse_frames(
        torch.from_numpy(samples).to(document.device), 0, region.frame0, region.frame1
    )
    return coefficients[:, region.bin0 : region.bin1].abs().cpu().numpy()


def analysed(samples: np.ndarray, rate: int, settings=None) -> np.ndarray:
    """Magnitude ``[C, bins, frames]`` of samples in a fresh document."""
    document = Document.from_samples(samples, rate, settings=settings, device="cpu")
    return document.blocks[0].magnitude.numpy()


def box(region):
    """Index of ``region`` in a ``[C, bins, frames]`` array."""
    return (slice(None), slice(region.bin0, region.bin1), slice(region.frame0, region.frame1))


def log_spectral_distance(a: np.ndarray, b: np.ndarray, *, floor: float = 1e-6) -> float:
    """Mean over frames of the RMS over bands of the dB difference (``[..., bins, frames]``)."""
    da = 20 * np.log10(np.maximum(a, floor))
    db = 20 * np.log10(np.maximum(b, floor))
    return float(np.mean(np.sqrt(np.mean((da - db) ** 2, axis=-2))))


def residual_drop_db(damaged: np.ndarray, repaired: np.ndarray, clean: np.ndarray) -> float:
    """How far the damage fell: the energy of the magnitude difference from the clean sound before
    the repair over the one after, dB."""
    before = np.sum((damaged - clean) ** 2)
    after = np.sum((repaired - clean) ** 2)
    return float(10 * np.log10(before / after))


def linear_interpolation(document, region) -> None:
    """The obvious alternative to healing: each band's magnitude interpolated linearly from the
    frame before ``region`` to the frame after it, phase kept; written into ``document``."""
    wider = type(region)(
        region.bin0, region.bin1, region.frame0 - 1, region.frame1 + 1, region.channels
    )
    magnitude, _ = document.read(wider)
    _, phase = document.read(region)
    count = region.frame1 - region.frame0
    alpha = torch.arange(1, count + 1, dtype=magnitude.dtype) / (count + 1)
    new = magnitude[..., :1] * (1 - alpha) + magnitude[..., -1:] * alpha
    document.write(region, new, phase)


def click_left_db(
    damaged: np.ndarray, clean: np.ndarray, repaired: np.ndarray, repaired_clean: np.ndarray
) -> float:
    """How far the click's own energy fell: the magnitude difference the click makes to what is
    heard before the repair (damaged against clean) over the one it still makes after it (the
    repair of the damaged sound against the same repair of the clean sound), energy ratio in dB.

    Where :func:`residual_drop_db` also counts the repair's own error about the music (which no
    repair of a gap can bring 30 dB below the music), this counts only what the click changes.
    """
    before = np.sum((damaged - clean) ** 2)
    after = np.sum((repaired - repaired_clean) ** 2)
    return float(10 * np.log10(before / max(after, 1e-30)))
