"""A stamping group's weights computed and the stroke's coverage raised in one launch
(:mod:`spectropaint.brushes.kernels.coverage_fused`), against the host's compiled loops and
tiles: the blend weight, the coverage, the map of holders and the owners' maps bit for bit, for
groups of one peak weight (the nearest dab's loop) and of several, soft and hard; and strokes of
every stamping brush whose coverage the launch raises against the same strokes raised on the
host, bit for bit, also where the brush's own kernel or the launch is refused.

On a machine without CUDA the kernels run through Triton's interpreter on CPU tensors; with CUDA,
compiled, on the GPU."""

import numpy as np
import pytest
import torch
from brush_fixtures import GPU, assert_alike_to_rounding, small_document, triton_kernel_on

from spectropaint.brushes import mask_compiled, plan_compiled
from spectropaint.brushes.coverage_plane import CoveragePlane
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import coverage_fused, triton_math
from spectropaint.brushes.kernels.spectral_filter import FilterInto
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.brushes.tiles import TileMap
from spectropaint.transforms.regions import Region

N_BINS, N_FRAMES = 220, 330
"""The grid of the unit tests (its last tile column cut to 10 frames)."""


@pytest.fixture
def fused(monkeypatch):
    """The launch on for :data:`GPU`, for dabs of any size (the tests' are small: interpreted,
    the brushes' own kernels take minutes for wide ones)."""
    monkeypatch.setattr(coverage_fused, "FEWEST_CELLS", 0)
    with triton_kernel_on(monkeypatch, coverage_fused, GPU):
        yield


CLUSTERS = ((322.0, 214.0), (40.0, 100.0), (180.0, 3.0))
"""Where groups lie (frame, bin): the grid's far corner (its cut tiles), inside, its first bins."""


def scattered_group(seed: int, n_dabs: int, radius: float, *, one_peak: bool):
    """Dabs around one of :data:`CLUSTERS` (a few past the grid's edges), their boxes, joint box,
    peak weights and centre bins."""
    rng = np.random.default_rng(seed)
    centre = np.array(CLUSTERS[seed % len(CLUSTERS)])
    at = centre + rng.uniform(-2 * radius, 2 * radius, (n_dabs, 2))
    reach = rng.uniform(0.6, radius, (n_dabs, 2))
    boxes, keep = plan_compiled.dab_boxes(at, reach, n_bins=N_BINS, n_frames=N_FRAMES)
    boxes, at, reach = boxes[keep], at[keep], reach[keep]
    corner = (int(boxes[:, 0].min()), int(boxes[:, 2].min()))
    shape = (int(boxes[:, 1].max()) - corner[0], int(boxes[:, 3].max()) - corner[1])
    peak = np.full(len(boxes), 0.7) if one_peak else rng.uniform(0.2, 1.0, len(boxes))
    return boxes, at, reach, corner, shape, peak


@pytest.mark.parametrize("maps", [coverage_fused.NO_MAPS, coverage_fused.HOLDERS,
                                  coverage_fused.OWNERS])  # fmt: skip
@pytest.mark.parametrize(("one_peak", "hardness"), [(True, 0.5), (False, 0.3), (False, 1.0)])
def test_the_launch_raises_the_coverage_as_the_host_does(fused, maps, one_peak, hardness):
    """Groups one after another, some overlapping, some at the grid's edges: each's blend weight,
    the coverage of every tile and the maps asked for equal the host's (:func:`~spectropaint.
    brushes.mask_compiled.group_weights`, :class:`~spectropaint.brushes.coverage_plane.
    CoveragePlane`) bit for bit."""
    axes = (0.25, 1.0, np.arange(N_BINS) + 0.1)  # (a plane a little off the cells)
    device_tiles, plane = TileMap(N_BINS, N_FRAMES), CoveragePlane(N_BINS, N_FRAMES)
    zeros = coverage_fused.ZeroedTiles(GPU)
    for seed in range(6):
        boxes, at, reach, corner, shape, peak = scattered_group(seed, 2 + seed, 9.0,
                                                                one_peak=one_peak)  # fmt: skip
        box = Region(corner[0], corner[0] + shape[0], corner[1], corner[1] + shape[1], (0,), 0)
        packed = mask_compiled.packed_distances(boxes, at, reach, corner, shape, axes, peak)
        centres = at[:, 1] if maps == coverage_fused.OWNERS else None
        blend, found, _ = coverage_fused.raise_coverage(
            device_tiles, zeros, box, packed, hardness=hardness, maps=maps, centres=centres,
            nearest=bool((peak == peak[0]).all()),
        )  # fmt: skip
        largest, _, owners = mask_compiled.group_weights(
            boxes, at, reach, corner, shape, axes, peak, hardness=hardness, each=False,
            centres=None if maps == coverage_fused.NO_MAPS else at[:, 1],
            holders=maps == coverage_fused.HOLDERS,
        )  # fmt: skip
        want = plane.raise_to(largest, box)
        assert want.max() > 0 and np.array_equal(blend.cpu().numpy(), want)
        if maps == coverage_fused.HOLDERS:
            assert np.array_equal(found.cpu().numpy(), owners)
        elif maps == coverage_fused.OWNERS:
            centre, owned, _ = owners
            assert np.array_equal(found[0].cpu().numpy(), owned)
            assert np.array_equal(found[1].cpu().numpy(), centre, equal_nan=True)
        else:
            assert found is None
    assert (N_BINS // 64, N_FRAMES // 64) in device_tiles.tiles  # (a tile cut along both axes)
    pasted = np.zeros((N_BINS, N_FRAMES), np.float32)  # the device's tiles where they lie
    for key, tile in device_tiles.tiles.items():
        cells = device_tiles.tile_box(key, (0,))
        pasted[cells.bin0 : cells.bin1, cells.frame0 : cells.frame1] = tile.cpu().numpy()
    assert np.array_equal(pasted, plane.array)


def painted(document, brush: str, params: dict, *, pressures) -> torch.Tensor:
    """The document's values ``[2, C, B, T]`` after a stroke of ``brush`` at ``pressures`` (one
    event each, several dabs an event), undone after (exactly)."""
    history = History(document)
    before = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    settings = BrushSettings(radius_frames=4, radius_bins=3, hardness=0.5, spacing=0.25)
    stroke = StrokeSession(document, brush, settings, params=params, history=history)
    for i, pressure in enumerate(pressures):
        stroke.add_events([InputEvent(i / 60, 100.0 + 3.3 * i, 30.0 + 0.8 * i, pressure)])
    stroke.end()
    values = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    history.undo()
    assert torch.equal(torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]),
                       before)  # fmt: skip
    return values


BRUSHES = {
    "gain": {"gain_db": -12.0},
    "erase": {},
    "blur": {"sigma": 0.25},
    "filter": {"mode": "lowpass", "cutoff": 0.1},
    "clone": {"offset_frames": -20, "offset_bins": 0},
    "pen": {"level_db": -30.0},
}


@pytest.mark.parametrize("pressures", ["one", "varying"])
@pytest.mark.parametrize("brush", list(BRUSHES))
def test_a_stroke_raised_by_the_launch_equals_one_raised_on_the_host(
    fused, monkeypatch, brush, pressures
):
    """Every stamping brush, a mouse's stroke (one pressure) and a pen's: the document painted
    with the coverage raised by the launch equals, bit for bit, the document painted with it
    raised on the host."""
    pressures = [0.8] * 5 if pressures == "one" else [0.4 + 0.1 * i for i in range(5)]
    launches = []
    real = coverage_fused.raise_coverage
    monkeypatch.setattr(coverage_fused, "raise_coverage",
                        lambda *a, **k: launches.append(k["maps"]) or real(*a, **k))  # fmt: skip
    document = small_document(device=GPU)
    by_launch = painted(document, brush, BRUSHES[brush], pressures=pressures)
    assert len(launches) >= 3
    asks = {"filter": coverage_fused.HOLDERS, "pen": coverage_fused.OWNERS}  # (which dab holds
    assert set(launches) == {coverage_fused.NO_MAPS, asks.get(brush, coverage_fused.NO_MAPS)}
    monkeypatch.setattr(coverage_fused, "available", lambda device, cells: False)
    launched = len(launches)
    on_host = painted(document, brush, BRUSHES[brush], pressures=pressures)
    assert len(launches) == launched  # (none: the host raised it)
    assert torch.equal(by_launch, on_host)


def test_a_group_whose_kernel_is_refused_reads_the_masks_the_host_makes(fused, monkeypatch):
    """Where the brush's own kernel is refused (Triton cannot compile it), the group takes torch's
    path with the masks the host makes and the blend weight the launch raised: as with the
    coverage raised on the host, bit for bit."""

    def refused(*arguments):
        raise triton_math.Unavailable("no compiler")

    monkeypatch.setattr(FilterInto, "apply", staticmethod(refused))
    params = BRUSHES["filter"]
    document = small_document(device=GPU)
    by_launch = painted(document, "filter", params, pressures=[0.8] * 4)
    monkeypatch.setattr(coverage_fused, "available", lambda device, cells: False)
    assert torch.equal(by_launch, painted(document, "filter", params, pressures=[0.8] * 4))


def test_a_refused_launch_leaves_the_coverage_to_torch(fused, monkeypatch):
    """Where the launch is refused, the stroke's coverage (on the device) is raised by torch's
    operations from then on: the same stroke to float rounding (torch's cosine), every cell it
    did not reach untouched."""
    refusals = []

    def refused(*arguments, **options):
        refusals.append(1)
        raise triton_math.Unavailable("no compiler")

    document = small_document(device=GPU)
    before = torch.stack([document.blocks[0].magnitude, document.blocks[0].phase]).clone()
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(coverage_fused, "available", lambda device, cells: False)
        want = painted(document, "gain", BRUSHES["gain"], pressures=[0.8] * 6)
    monkeypatch.setattr(coverage_fused, "raise_coverage", refused)
    got = painted(document, "gain", BRUSHES["gain"], pressures=[0.8] * 6)
    assert refusals == [1]  # (the first group's, then not tried again this stroke)
    assert_alike_to_rounding(got, want, before)


def test_strokes_of_small_dabs_keep_their_coverage_on_the_host(monkeypatch):
    """The launch raises the coverage of strokes whose full-size dab's box holds
    :data:`~spectropaint.brushes.kernels.coverage_fused.FEWEST_CELLS` or more (radius 16), the
    host that of smaller dabs' (it is quicker there)."""
    launches = []
    real = coverage_fused.raise_coverage
    monkeypatch.setattr(coverage_fused, "raise_coverage",
                        lambda *a, **k: launches.append(1) or real(*a, **k))  # fmt: skip
    document = small_document(device=GPU)
    with triton_kernel_on(monkeypatch, coverage_fused, GPU):
        for radius, launched in ((8, False), (16, True)):
            launches.clear()
            settings = BrushSettings(radius_frames=radius, radius_bins=radius, hardness=0.5)
            stroke = StrokeSession(document, "gain", settings, params=BRUSHES["gain"],
                                   history=History(document))  # fmt: skip
            for i in range(3):
                stroke.add_events([InputEvent(i / 60, 100.0 + 4.0 * i, 60.0, 0.8)])
            stroke.end()
            assert bool(launches) == launched, radius
