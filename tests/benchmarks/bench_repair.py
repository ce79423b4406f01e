"""Repair benchmark: heal against erase and linear interpolation, harmonic selections, the
de-clicker, image import, and the time of every selection and operation.

    python tests/benchmarks/bench_repair.py [--quick] [--threads N] [--json out.json]

No recordings ship and there is no network, so the "real recordings" are the built-in demo sound
(mixed to mono: a chord with vibrato, a chirp, noise bursts, drum hits) and music synthesised by
``tests/music_fixtures.py`` (held harmonic tones with vibrato, plucked notes, kick, snare and
hi-hats over soft noise), several seeds. Everything is judged on the output audio analysed again
with the document's own STFT (44.1 kHz, n_fft 2048, hop 512), never on the written coefficients.

1. **Clicks healed**: a 30 ms broadband click (a noise burst decaying in 8 ms) at 6 places in each
   recording, its energy 0, 10, 20 or 30 dB above the music's over the samples its selection
   reaches, selected with a rectangle over every band from half a window before it to half a
   window after it, then healed (``partials`` and ``replace``), erased, or interpolated linearly in
   magnitude (the obvious alternative, phase kept). Reported, over the selection's cells:

   - ``drop``: how far all the damage fell (energy of the magnitude difference from the clean
     recording, before over after, dB). What is left after a heal is mostly the heal's own error
     about the music (8 to 10 dB below it), so this passes 30 dB only for clicks about 20 dB or
     more above the music;
   - ``click``: how far the click's own energy fell: the difference the click makes before the
     repair (damaged against clean) over the one it still makes after it (the repair of the
     damaged recording against the same repair of the clean one);
   - ``LSD``: the log-spectral distance to the clean recording;
   - a ``bound`` row: the ``drop`` of the best choice per cell among the damaged sound and the
     four repairs, made knowing the clean recording: how far the damage can fall at all with them.

   Targets: the click's energy falls at least 30 dB, and heal is closer to the clean sound than
   both erase and linear interpolation.
2. **Harmonic selection**: a 220 Hz tone with 10 harmonics and 50-cent vibrato plus another tone
   and noise; -40 dB on a harmonic selection. Reported: each harmonic's drop (energy within its
   main lobe along the true pitch) and the level change of the rest. Target: every harmonic caught
   over its whole length, the rest within 0.5 dB.
3. **De-clicker**: 50 clicks (1 to 4 ms, 12 to 20 dB above the 20 ms around them) in 20 s of
   music, seeds 8 to 12 (its defaults were tuned on seeds 1 to 7). Target: at least 95 % found,
   at most 2 false. Then every click found is healed as the de-clicker does; reported over the
   frames reaching each inserted click (medians): the damage drop and the click's own energy
   left, as in 1.
4. **Image import**: black text on white (Pillow), imported on 2 s x 500-8000 Hz, exported to WAV,
   analysed back; correlation of its dB levels with the picture's. Target: at least 0.9.
5. **Speed**: each selection (resolved and rasterised) and each operation on a one-second,
   full-band region, on a 10-second and a 10-minute mono document; against the obvious
   alternative of masking the whole grid (a gain applied through a full-size mask). Target: under
   100 ms on a 2-core CPU, and the same on both documents.

One torch thread by default (see bench_brushes.py: two OpenMP threads on a busy 2-core machine
wait on each other); ``--threads 0`` is torch's own choice.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from music_fixtures import RATE, harmonic_tone, insert_clicks, music  # noqa: E402
from repair_measures import (  # noqa: E402
    analysed,
    box,
    click_left_db,
    heard,
    linear_interpolation,
    log_spectral_distance,
    residual_drop_db,
)

from spectropaint.brushes.image_import import ImagePlacement, image_levels, plan_image  # noqa: E402
from spectropaint.brushes.operations import (  # noqa: E402
    Clipboard,
    apply_plan,
    apply_plans,
    plan_operation,
)
from spectropaint.brushes.restoration import declick_plans, find_clicks  # noqa: E402
from spectropaint.transforms.document import Document  # noqa: E402
from spectropaint.transforms.files.demo_sound import demo_samples  # noqa: E402
from spectropaint.transforms.selection import Selection, rasterise, resolve  # noqa: E402
from spectropaint.transforms.shapes import (  # noqa: E402
    Dab,
    Harmonic,
    Lasso,
    Painted,
    Range,
    Rectangle,
    Wand,
)

HALF_WINDOW = 1024 / RATE


def recordings(quick: bool) -> dict[str, np.ndarray]:
    found = {"demo": demo_samples(RATE).mean(axis=0)}
    for seed in (1, 2) if quick else (1, 2, 3):
        found[f"music{seed}"] = music(8.0, seed=seed)
    return found


CLICK_LEVELS_DB = (0.0, 10.0, 20.0, 30.0)
"""Click energy over the music's in the samples the selection's frames reach."""


def click(clean: np.ndarray, at: float, level_db: float, rng: np.random.Generator) -> np.ndarray:
    """A 30 ms noise burst decaying in 8 ms at ``at`` seconds, ``level_db`` above the music's
    energy over the span the selection's frames reach."""
    n = int(0.03 * RATE)
    burst = rng.standard_normal(n) * np.exp(-np.arange(n) / (0.008 * RATE))
    i = int(at * RATE)
    span = clean[i - int(HALF_WINDOW * RATE) : i + n + int(HALF_WINDOW * RATE)]
    burst *= np.sqrt(np.sum(span**2) * 10 ** (level_db / 10) / np.sum(burst**2))
    out = clean.copy()
    out[i : i + n] += burst
    return out


def repaired(samples: np.ndarray, selection: Selection, method: str):
    """What is heard over the selection's cells after ``method``, and those cells."""
    document = Document.from_samples(samples, RATE, device="cpu")
    mask = rasterise(selection, document)
    if method == "linear":
        linear_interpolation(document, mask.region)
    else:
        operation, params = ("erase", {}) if method == "erase" else ("heal", {"mode": method[5:]})
        plans = plan_operation(document, mask, operation, params, clipboard=Clipboard())
        apply_plans(document, plans, label=method)
    return heard(document, mask.region), box(mask.region)


def heal_clicks(quick: bool) -> list[dict]:
    rows = []
    methods = ("heal partials", "heal replace", "erase", "linear")
    for name, clean in recordings(quick).items():
        reference_all = analysed(clean, RATE)
        for level_db in CLICK_LEVELS_DB:
            rng = np.random.default_rng(7)
            found = {m: {"drop": [], "click": [], "lsd": []} for m in (*methods, "bound")}
            for at in np.linspace(0.7, len(clean) / RATE - 0.7, 3 if quick else 6):
                damaged = click(clean, at, level_db, rng)
                before_all = analysed(damaged, RATE)
                selection = Selection.of(
                    Rectangle(at - HALF_WINDOW, at + 0.03 + HALF_WINDOW, 0.0, RATE / 2)
                )
                errors = []
                for method in methods:
                    after, cells = repaired(damaged, selection, method)
                    after_clean, _ = repaired(clean, selection, method)
                    reference, before = reference_all[cells], before_all[cells]
                    found[method]["drop"].append(residual_drop_db(before, after, reference))
                    found[method]["click"].append(
                        click_left_db(before, reference, after, after_clean)
                    )
                    found[method]["lsd"].append(log_spectral_distance(after, reference))
                    errors.append((after - reference) ** 2)
                # the best any choice per cell among the damaged sound and these repairs could
                # do, knowing the clean sound: how far the damage can fall at all
                bound = np.minimum.reduce([(before - reference) ** 2, *errors])
                found["bound"]["drop"].append(
                    float(10 * np.log10(np.sum((before - reference) ** 2) / np.sum(bound)))
                )
            for method, values in found.items():
                row = {
                    "recording": name,
                    "click_db": level_db,
                    "method": method,
                    "clicks": len(values["drop"]),
                    "drop_db_median": round(statistics.median(values["drop"]), 1),
                    "drop_db_min": round(min(values["drop"]), 1),
                }
                if values["click"]:
                    row["click_left_db_median"] = round(statistics.median(values["click"]), 1)
                    row["click_left_db_min"] = round(min(values["click"]), 1)
                    row["lsd_db_median"] = round(statistics.median(values["lsd"]), 2)
                    row["lsd_db_max"] = round(max(values["lsd"]), 2)
                rows.append(row)
                print(
                    f"{name:>8} {level_db:>+6.0f} {method:>14} {row['clicks']:>6} "
                    f"{row['drop_db_median']:>9.1f} {row['drop_db_min']:>8.1f} "
                    + (
                        f"{row['click_left_db_median']:>9.1f} {row['click_left_db_min']:>8.1f} "
                        f"{row['lsd_db_median']:>8.2f} {row['lsd_db_max']:>8.2f}"
                        if values["click"]
                        else ""
                    ),
                    flush=True,
                )
    return rows


def harmonic_selection() -> dict:
    t = np.arange(3 * RATE) / RATE
    voice = 0.05 * harmonic_tone(t, 220.0, harmonics=10, vibrato_cents=50.0, rolloff=0.85)
    rng = np.random.default_rng(2)
    other = 0.02 * np.sin(2 * np.pi * 2530.0 * t) + 0.0005 * rng.standard_normal(len(t))
    document = Document.from_samples(voice + other, RATE, device="cpu")
    selection = resolve(Selection.of(Harmonic(0.2, 2.8, 220.0, 10, 50.0)), document)
    mask = rasterise(selection, document)
    plans = plan_operation(document, mask, "gain", {"gain_db": -40.0}, clipboard=Clipboard())
    apply_plans(document, plans, label="gain")
    out = heard(document)[0]
    seconds, hz = document.blocks[0].frame_seconds, document.blocks[0].band_hz
    columns = (seconds > 0.3) & (seconds < 2.7)
    true = 220.0 * 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.0 * seconds[columns]))
    alone = analysed(voice, RATE)[0][:, columns]
    drops = []
    for h in range(1, 11):
        lobe = np.abs(hz[:, None] - h * true[None, :]) <= 2 * (hz[1] - hz[0])
        drops.append(
            float(10 * np.log10(np.sum(alone[lobe] ** 2) / np.sum(out[:, columns][lobe] ** 2)))
        )
    weight = np.zeros(out.shape, dtype=bool)
    r = mask.region
    weight[r.bin0 : r.bin1, r.frame0 : r.frame1] = mask.weight.numpy() > 0
    rest = ~weight[:, columns]
    before = analysed(voice + other, RATE)[0][:, columns]
    # the rest: every cell the selection leaves out, at least 3 bands from its edge
    from scipy.ndimage import binary_dilation

    far = ~binary_dilation(~rest, iterations=3)
    level = float(10 * np.log10(np.sum(out[:, columns][far] ** 2) / np.sum(before[far] ** 2)))
    near = np.abs(hz - 2530.0) < 60
    tone = float(
        10
        * np.log10(
            np.sum(out[near][:, columns] ** 2)
            / np.sum(analysed(other, RATE)[0][near][:, columns] ** 2)
        )
    )
    print(
        f"harmonic drops (dB) {', '.join(f'{d:.1f}' for d in drops)}; the rest "
        f"{level:+.2f} dB; the other tone {tone:+.2f} dB",
        flush=True,
    )
    return {
        "harmonic_drop_db": [round(d, 1) for d in drops],
        "rest_db": round(level, 2),
        "other_tone_db": round(tone, 2),
    }


def declicker(quick: bool) -> list[dict]:
    rows = []
    for seed in (8, 9) if quick else (8, 9, 10, 11, 12):  # not the seeds it was tuned on
        clean = music(20.0, seed=seed)
        damaged, times = insert_clicks(clean, 50, seed=seed + 10)
        document = Document.from_samples(damaged, RATE, device="cpu")
        start = time.perf_counter()
        clicks = find_clicks(document)
        seconds = time.perf_counter() - start
        hits = sum(any(abs(c.peak_seconds - t) < 0.03 for c in clicks) for t in times)
        false = sum(not any(abs(c.peak_seconds - t) < 0.03 for t in times) for c in clicks)
        clean_false = len(find_clicks(Document.from_samples(clean, RATE, device="cpu")))
        # each click healed as the de-clicker does; the same heals on the clean music
        clean_document = Document.from_samples(clean, RATE, device="cpu")
        for healed in (document, clean_document):
            apply_plans(healed, declick_plans(healed, clicks), label="de-click")
        after, after_clean = heard(document), heard(clean_document)
        reference, before = analysed(clean, RATE), analysed(damaged, RATE)
        frame_seconds = document.blocks[0].frame_seconds
        drops, lefts = [], []
        for at in times:  # the frames that reach each inserted click
            cells = (slice(None), slice(None), np.abs(frame_seconds - at - 0.002) < HALF_WINDOW)
            drops.append(residual_drop_db(before[cells], after[cells], reference[cells]))
            lefts.append(
                click_left_db(before[cells], reference[cells], after[cells], after_clean[cells])
            )
        rows.append(
            {
                "seed": seed,
                "found": hits,
                "of": 50,
                "false": false,
                "false_on_clean": clean_false,
                "seconds_for_20_s": round(seconds, 2),
                "drop_db_median": round(statistics.median(drops), 1),
                "click_left_db_median": round(statistics.median(lefts), 1),
            }
        )
        print(
            f"seed {seed}: found {hits}/50, {false} false ({clean_false} on the clean music), "
            f"{seconds:.2f} s for 20 s; healed: damage drop {statistics.median(drops):.1f} dB, "
            f"click's energy left {statistics.median(lefts):.1f} dB (medians over the 50)",
            flush=True,
        )
    return rows


def image_import() -> dict:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (400, 120), 255)
    ImageDraw.Draw(image).text((10, 5), "HEAL", fill=0, font=ImageFont.load_default(size=90))
    picture = np.asarray(image, dtype=np.float32) / 255
    document = Document.from_samples(np.zeros(3 * RATE), RATE, device="cpu")
    placement = ImagePlacement(0.5, 2.5, 500.0, 8000.0)
    start = time.perf_counter()
    (plan,) = plan_image(document, picture, placement)
    apply_plan(document, plan)
    seconds = time.perf_counter() - start
    back = Document.from_samples(document.edited_samples(), RATE, device="cpu")
    level = 20 * np.log10(heard(back, plan.region)[0] / back.full_scale + 1e-9)
    expected = 20 * np.log10(
        image_levels(document, picture, placement, plan.region) / document.full_scale + 1e-9
    )
    floor = placement.top_db - placement.range_db
    correlation = float(
        np.corrcoef(np.maximum(level, floor).ravel(), np.maximum(expected, floor).ravel())[0, 1]
    )
    print(f"text image: correlation {correlation:.3f}, import {seconds * 1e3:.0f} ms", flush=True)
    return {"correlation": round(correlation, 3), "import_ms": round(seconds * 1e3)}


SELECTIONS = {
    "rectangle": Rectangle(3.0, 4.0, 0.0, RATE / 2),
    "range": Range(3.0, 4.0),
    "lasso": Lasso(
        tuple(
            (3.5 + 0.5 * np.cos(a), RATE / 4 + RATE / 4 * np.sin(a))
            for a in np.linspace(0, 2 * np.pi, 200, endpoint=False)
        )
    ),
    "painted": Painted(
        tuple(Dab(3.0 + 0.01 * i, 5000.0 + 30.0 * i, 0.05, 2000.0) for i in range(100))
    ),
    "harmonic": Harmonic(3.0, 4.0, 220.0, 20, 50.0),
    "wand": Wand(3.5, 440.0, 12.0, 1.0),
}
OPERATIONS = {
    "gain": {"gain_db": -12.0},
    "erase": {},
    "heal partials": {"mode": "partials"},
    "heal replace": {"mode": "replace"},
    "heal attenuate": {"mode": "attenuate"},
    "heal pattern": {"mode": "pattern"},
    "fill blur": {"brush": "blur"},
    "fill pen": {"brush": "pen"},
    "cut": {},
    "paste": {"at_seconds": 5.0, "shift_hz": 100.0},
}


def timed(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def speed(quick: bool) -> list[dict]:
    repeat = 3 if quick else 7
    documents = {
        "10 s": Document.from_samples(music(10.0), RATE, device="cpu"),
        "10 min": Document.from_samples(np.tile(music(10.0), 60), RATE, device="cpu"),
    }
    rows = []
    for kind, shape in SELECTIONS.items():
        row = {"what": f"select {kind}"}
        for label, document in documents.items():
            row[label] = timed(
                lambda d=document, s=shape: rasterise(resolve(Selection.of(s), d), d), repeat
            )
        rows.append(row)
    full = Selection.of(SELECTIONS["rectangle"])
    for name, params in OPERATIONS.items():
        row = {"what": name}
        for label, document in documents.items():
            clipboard = Clipboard()
            mask = rasterise(full, document)
            plan_operation(document, mask, "copy", {}, clipboard=clipboard)
            operation = name.split()[0]
            if operation == "heal":
                params = {"mode": name.split()[1]}

            def work(document=document, clipboard=clipboard, operation=operation, params=params):
                mask = rasterise(full, document)
                plans = plan_operation(document, mask, operation, params, clipboard=clipboard)
                apply_plans(document, plans, label=operation)

            row[label] = timed(work, repeat)
        rows.append(row)
    row = {"what": "gain via a whole-grid mask"}
    for label, document in documents.items():

        def naive(document=document):
            block = document.blocks[0]
            mask = torch.zeros(block.magnitude.shape[1:])
            mask[:, 258:344] = 1.0
            block.magnitude.mul_(1 + (0.25 - 1) * mask)

        row[label] = timed(naive, repeat)
    rows.append(row)
    for row in rows:
        print(f"{row['what']:>28} {row['10 s']:>9.1f} {row['10 min']:>9.1f}", flush=True)
    return [{k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()} for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer recordings, clicks, repeats")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's choice)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    load = os.getloadavg()[0]
    print(
        f"CPU, torch {torch.__version__}, {os.cpu_count()} CPUs, {torch.get_num_threads()} torch "
        f"threads, {platform.processor() or platform.machine()}, load average {load:.1f} at the "
        "start; 44.1 kHz, n_fft 2048, hop 512",
        flush=True,
    )
    print("\n1. a 30 ms click healed, selected with a rectangle over every band")
    print(
        f"{'recording':>8} {'click':>6} {'method':>14} {'clicks':>6} {'drop dB':>9} {'min':>8} "
        f"{'click dB':>9} {'min':>8} {'LSD dB':>8} {'max':>8}"
    )
    clicks = heal_clicks(args.quick)
    print("\n2. -40 dB on a harmonic selection (10 harmonics, 50-cent vibrato)")
    harmonic = harmonic_selection()
    print("\n3. the de-clicker: 50 clicks in 20 s of music")
    found = declicker(args.quick)
    print("\n4. image import")
    image = image_import()
    print("\n5. time of a one-second full-band selection or operation (median ms)")
    print(f"{'what':>28} {'10 s':>9} {'10 min':>9}")
    times = speed(args.quick)
    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "platform": platform.platform(),
            "load_average": [round(v, 2) for v in os.getloadavg()],
        },
        "heal_clicks": clicks,
        "harmonic_selection": harmonic,
        "declicker": found,
        "image_import": image,
        "speed_ms": times,
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
