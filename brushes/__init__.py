"""Strokes, dabs, brush kernels and the edit history.

- :mod:`.stroke`: input events and the spacing of dabs along them (leftover carried between events).
- :mod:`.settings`: :class:`~.settings.BrushSettings` (radius, hardness, strength, spacing, pressure,
  channel) and the validation shared with each kernel's parameters.
- :mod:`.mask`: the elliptical dab and its hardness falloff; :mod:`.mask_compiled` a group's
  dab weights on the host in one compiled loop.
- :mod:`.kernels`: blur, warp, spectral filter, gain, clone and pen as pure torch functions of one
  dab's region (warp's and the clone's also compiled by Numba for the CPU, sharing
  :mod:`.kernels.compiled_math`); :mod:`.registry` maps brush names to them.
- :mod:`.dab`: the one function that applies a dab to a document; :mod:`.plan_compiled` its
  grouping and each dab's cells and distances in compiled loops.
- :mod:`.engine`: :class:`~.engine.StrokeSession`, a stroke in progress, one region-changed event
  per input event.
- :mod:`.settle`: the stroke-end step that makes the coefficients what is heard and brings the
  sound towards what was painted (plan, compute off the lock, apply into the stroke's undo step);
  :mod:`.pen_partial` synthesises the pen's partial.
- :mod:`.history`: undo and redo per stroke, bit-exact, within a byte budget; :mod:`.tiles` holds
  a stroke's touched tiles (on a GPU, a box's original values are gathered from them in one
  launch, :mod:`.kernels.originals_fused`).
- :mod:`.recorded`: recorded strokes as JSON (format in the README, Recorded strokes).
"""
