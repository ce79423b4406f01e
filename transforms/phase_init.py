"""A starting phase for magnitudes without one: phase-gradient integration from their neighbours.

Griffin-Lim converges at a rate the start does not change much, so where it starts decides where
a settle of a few iterations ends. For an STFT with a Hann window the phase's gradient follows
from the log-magnitude's (Prusa, Balazs and Sondergaard, 2017, "A noniterative method for
reconstruction of phase from STFT magnitude", with their Gaussian equivalent
``lambda = 0.25645 n_fft^2``): per frame, a cell's phase advances by its bin centre's
``2 pi k hop / n_fft`` plus ``(hop n_fft / lambda) ds/dk``; per bin, it turns by ``pi`` (the
frame-start phase reference of ``torch.stft``) plus ``-(lambda / (hop n_fft)) ds/dt``, where
``s`` is the log-magnitude (both checked by a least-squares fit on the band of
``tests/fidelity_probes.py``: 1.00 and -0.92 against 0.97 and -1.03).

The gradients are integrated from the cells whose phase is known (the neighbours the edit left
alone) into the cells to fill, along the widest path: the integration tree is the spanning tree
that maximises the weakest cell of every path (a minimum spanning tree of scipy's over
``max(s) - min(s_u, s_v)``), which is the order the paper's heap visits the cells in; a phase is
summed down the tree by pointer jumping, in numpy. Cells below :data:`TOLERANCE` of the largest
magnitude keep the phase given; so do groups of cells that no known cell reaches, from their
strongest cell on.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

GAUSSIAN_LAMBDA = 0.25645
"""The Hann window's Gaussian equivalent, ``lambda / n_fft^2`` (the paper's value)."""
TOLERANCE = 10 ** (-50 / 20)
"""Cells below this fraction of the largest magnitude are not integrated (the paper's -50 dB)."""


def integrate_phase(
    magnitude: np.ndarray,
    phase: np.ndarray,
    free: np.ndarray,
    *,
    bin0: int,
    n_fft: int,
    hop: int,
) -> np.ndarray:
    """``phase`` with the cells ``free`` filled by phase-gradient integration from the others.

    Parameters
    ----------
    magnitude : np.ndarray [shape=(B, T)]
        The magnitudes of a box of bins from ``bin0`` and consecutive frames (the target on the
        free cells).
    phase : np.ndarray [shape=(B, T)]
        Radians: known on the cells not ``free`` (the seeds), a fallback on the others.
    free : np.ndarray [shape=(B, T)], bool
    bin0 : int
        The box's first bin.
    n_fft, hop : int
        Of the STFT (Hann window).

    Returns
    -------
    np.ndarray [shape=(B, T)], float64 radians (the filled cells in ``[-pi, pi)``).
    """
    n_b, n_t = magnitude.shape
    out = phase.astype(np.float64)
    largest = float(magnitude.max()) if magnitude.size else 0.0
    if largest <= 0 or not free.any():
        return out
    log = np.log(np.maximum(magnitude.astype(np.float64), largest * 1e-12))
    lam = GAUSSIAN_LAMBDA * n_fft**2
    bins = (bin0 + np.arange(n_b, dtype=np.float64))[:, None]
    along_time = 2 * math.pi * hop / n_fft * bins + (hop * n_fft / lam) * np.gradient(log, axis=0)
    along_bins = math.pi - (lam / (hop * n_fft)) * np.gradient(log, axis=1)

    strong = magnitude >= TOLERANCE * largest
    node = strong | ~free  # integrated cells and seeds
    index = np.full((n_b, n_t), -1, dtype=np.int64)
    count = int(node.sum())
    index[node] = np.arange(count)
    root = count
    width = float(log.max()) - log  # of a cell: how weak it is
    rows, cols, weights = [], [], []
    for axis in (0, 1):  # edges to the next bin, to the next frame
        a = [slice(None), slice(None)]
        b = [slice(None), slice(None)]
        a[axis], b[axis] = slice(0, -1), slice(1, None)
        a, b = tuple(a), tuple(b)
        both = node[a] & node[b] & (free[a] | free[b])
        rows.append(index[a][both])
        cols.append(index[b][both])
        weights.append(1.0 + np.maximum(width[a], width[b])[both])
    seeds = index[node & ~free]
    unreached = index[strong & free]
    rows += [np.full(seeds.size, root), np.full(unreached.size, root)]
    cols += [seeds, unreached]
    weights += [np.full(seeds.size, 1e-9), 1e6 + width[strong & free]]
    graph = coo_matrix(
        (np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))),
        shape=(count + 1, count + 1),
    ).tocsr()
    tree = minimum_spanning_tree(graph)
    _, parent = breadth_first_order(tree, root, directed=False)

    # each node's step from its parent: the trapezoid of the two cells' gradients
    cell_b, cell_t = np.nonzero(node)
    value = np.zeros(count + 1)
    step = np.zeros(count + 1)
    parent = parent.copy()
    parent[root] = root
    own = parent[:count]
    from_root = own == root
    other = ~from_root & (own >= 0)
    ob, ot = cell_b[own[other]], cell_t[own[other]]
    nb, nt = cell_b[other], cell_t[other]
    forward_t = (nt - ot).astype(np.float64)  # +1, -1 or 0
    forward_b = (nb - ob).astype(np.float64)
    step_other = 0.5 * (
        forward_t * (along_time[ob, ot] + along_time[nb, nt])
        + forward_b * (along_bins[ob, ot] + along_bins[nb, nt])
    )
    step[:count][other] = step_other
    step[:count][from_root] = out[cell_b[from_root], cell_t[from_root]]
    unvisited = own < 0  # not in the tree: keep their phase
    step[:count][unvisited] = out[cell_b[unvisited], cell_t[unvisited]]
    parent[:count][unvisited] = root
    value[:] = step
    above = parent.copy()
    while True:
        pending = above != root
        if not pending.any():
            break
        value[pending] += value[above[pending]]
        above[pending] = above[above[pending]]
    filled = free[cell_b, cell_t] & strong[cell_b, cell_t]
    out[cell_b[filled], cell_t[filled]] = np.remainder(value[:count][filled] + math.pi, 2 * math.pi)
    out[cell_b[filled], cell_t[filled]] -= math.pi
    return out
