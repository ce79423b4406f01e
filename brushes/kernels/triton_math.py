"""What the GPU's Triton kernels share (:mod:`..blend_fused`, :mod:`.blur_fused`,
:mod:`.clone_fused`, :mod:`.pen_fused`, :mod:`.warp_fused`): Triton's
import, whether a device takes them (:func:`wanted`), their launch, and the arithmetic helpers they
call.

A kernel is a plain function whose helpers and ``tl`` are looked up in its module's globals when
Triton compiles it; :func:`jit_with` binds them there (``_<name>`` for the helpers here) and
returns the jitted kernel, which :func:`launch` runs. A kernel that stores its results through
``put`` (:func:`put_arguments`) either writes them out or blends them into the document itself
(``crossfade``: :func:`.blend.blend`'s complex crossfade), as :class:`KernelInto` asks. A kernel's
first launch compiles it, which needs a C compiler and a GPU Triton supports: where that fails,
Triton's kernels are off for the session (logged once) and the callers take torch's path. The tests
run the kernels through Triton's interpreter on CPU tensors (``TRITON_INTERPRET=1`` before Triton
is first imported, and :data:`INTERPRETED` set).
"""

from __future__ import annotations

import functools
import logging

import torch

from spectropaint.brushes.kernels import compiled_math

log = logging.getLogger(__name__)

INTERPRETED = False
"""Set by the tests (with ``TRITON_INTERPRET=1``) to run the kernels on CPU tensors through
Triton's interpreter."""


@functools.cache
def triton():
    """Triton, imported once (about a second; only where a kernel is about to be used), or None."""
    try:
        import triton
    except ImportError:
        return None
    return triton


class Unavailable(Exception):
    """A kernel could not be compiled or launched here: the caller takes torch's path."""


_failure: str | None = None
"""Why Triton's kernels are off for the session (:func:`launch`), or None."""


def takes(device: torch.device) -> bool:
    """Whether Triton's kernels run on ``device``: CUDA (or the CPU, interpreted) where Triton
    imports and no kernel has failed to compile."""
    return (device.type == "cuda" or INTERPRETED) and _failure is None and triton() is not None


def wanted(device: torch.device, variable: str = compiled_math.COMPILED_ENV) -> bool:
    """Whether a Triton kernel does its work on ``device``: :func:`takes`, unless ``variable``
    (:data:`~.compiled_math.COMPILED_ENV`, or a kernel's own) turns it off."""
    return not compiled_math.switched_off(variable) and takes(device)


def launched(kernel) -> bool:
    """Whether ``kernel`` has run in this session: its later launches are not refused (a refused
    launch, :class:`Unavailable`, is a first one, before anything has run)."""
    return id(kernel) in _compiled


def failure() -> str | None:
    """Why Triton's kernels are off for the session, or None."""
    return _failure


def launch(kernel, grid: tuple[int, ...], *args, **options) -> None:
    """``kernel[grid](*args, **options)``. Where its first launch fails (it compiles the kernel:
    Triton finds no C compiler, or does not support the GPU), nothing has run: Triton's kernels
    are turned off for the session, logged once, and :class:`Unavailable` is raised for the caller
    to take torch's path. Later launches raise what they raise.

    A compiled kernel is launched again directly, with the arguments' types it was compiled for
    (:func:`_types`): Triton's own launch binds and checks every argument first, some 19 us of
    the H200's host against 6 us."""
    global _failure
    variants = _compiled.get(id(kernel))
    if variants is not None:
        types = (_types(args), *options.items())
        found = variants[1].get(types)
        if found is None:  # (a new variant, compiled now; under the interpreter, every call)
            compiled = kernel[grid](*args, **options)
            if compiled is not None:
                constants = [options[name] for name in kernel.arg_names[len(args) :]]
                variants[1][types] = (compiled, constants)
            return
        compiled, constants = found
        driver = _driver()
        compiled.run(*grid, *(1,) * (3 - len(grid)),
                     driver.get_current_stream(driver.get_current_device()), compiled.function,
                     compiled.packed_metadata, None, None, None, *args, *constants)  # fmt: skip
        return
    try:
        kernel[grid](*args, **options)
    except Exception as error:
        _failure = f"{type(error).__name__}: {error}"
        log.warning("Triton's kernels are off, torch's path is taken: %s", _failure)
        raise Unavailable(_failure) from error
    _compiled[id(kernel)] = (kernel, {})


@functools.cache
def _driver():
    """Triton's active driver (looked up once: a chain of attributes, twice a launch)."""
    return triton().runtime.driver.active


_compiled: dict = {}
"""The kernels launched once (compiled) in this session, by ``id`` (a Triton kernel's hash is
Python's): each kernel and its compiled variants by argument types and options, with their
compile-time constants in order (:func:`launch`)."""


def _types(args) -> tuple:
    """What Triton compiles a kernel's arguments as, that can vary between launches: a tensor's
    type, and whether an integer fits 32 bits (a loop, not a generator: some 35 arguments a
    launch, at twice the speed)."""
    key = []
    for arg in args:
        if type(arg) is int:
            key.append(-2147483648 <= arg < 2147483648)
        else:
            key.append(arg.dtype if isinstance(arg, torch.Tensor) else False)
    return tuple(key)


def jit_with(function, *names: str, general: bool = False, **options):
    """``function`` jitted by Triton (``options``: :func:`triton.jit`'s) once ``tl`` and the
    helpers ``names`` of this module (``wrap``, ``atan2``, ``row``, ``row_program``,
    ``columns``, ``lerp``, ``crossfade``, ``put``, ``from_kept``, ``reflected``) are bound in its
    module's globals (as ``_<name>``).

    ``general``: none of its arguments but the compile-time constants is specialised on. Triton
    would otherwise compile a variant for each combination of sizes and strides that are or are
    not multiples of 16 (or 1), and of addresses that are or are not aligned to 16 bytes (a
    view's), as strokes meet them: a second or so each, part way through a stroke."""
    global tl
    import triton.language as tl

    for name in names:
        function.__globals__[f"_{name}"] = _helpers()[name]
    function.__globals__["tl"] = tl
    if general:
        code = function.__code__
        constant = {
            name for name, kind in function.__annotations__.items() if "constexpr" in str(kind)
        }
        arguments = code.co_varnames[: code.co_argcount]
        options["do_not_specialize"] = [name for name in arguments if name not in constant]
    return triton().jit(function, **options)


def helper(function, *names: str):
    """``function`` jitted as a helper that kernels call (:func:`jit_with`'s ``names`` bound);
    under Triton's interpreter, the plain function the interpreter rewrites it to
    (:func:`_helpers`)."""
    jitted = jit_with(function, *names)
    return _plain_under_interpreter(jitted)


def _plain_under_interpreter(jitted):
    """``jitted`` (a helper), or under Triton's interpreter the plain function it rewrites it to:
    the interpreter patches triton.language anew at each call of a jitted helper (some 160 us),
    which the kernel's own launch has done already."""
    from triton.runtime.interpreter import InterpretedFunction

    return jitted.rewrite() if isinstance(jitted, InterpretedFunction) else jitted


@functools.cache
def one_cell(device: torch.device, dtype: torch.dtype, value: float) -> torch.Tensor:
    """A tensor of one cell ``[1, 1]``, which a kernel reads through strides of 0 where an
    optional tensor argument is not given: the argument keeps its pointer type, so the kernel
    keeps one compiled variant."""
    return torch.full((1, 1), value, dtype=dtype, device=device)


class KernelInto:
    """A brush's fused kernel that blends its result into the document in its own launch (one
    whose stores go through :func:`_plain_put`: the pen's, the clone's), as the brush's
    :attr:`~spectropaint.brushes.registry.BrushKind.blends_into`: ``kernel(magnitude, phase,
    params, context, *, into)`` where ``available(device, context)`` says it runs; where
    ``reads_kept``, the kernel also takes ``kept`` (:class:`.originals_fused.Kept`) instead of
    the region's values (the pen's and the clone's)."""

    reflects = False
    """Whether ``kept`` may be of a region past the grid (see :class:`~.blur.BlurInto`)."""

    def __init__(self, kernel, available, *, reads_kept: bool = False) -> None:
        self.kernel, self.available, self.reads_kept = kernel, available, reads_kept

    @staticmethod
    def takes(device: torch.device, region: tuple[int, int], box: tuple[int, int]) -> bool:
        """Whether a group's region of any size may go through the kernel on ``device``."""
        return wanted(device)

    def apply(self, values, weight, destination, params, context, holders=None) -> bool:
        """The kernel on the group's region ``values`` ``[2, C, Bm, Tm]`` (or, where it
        :attr:`reads_kept`, a :class:`.originals_fused.Kept`) at the box ``context.inner``,
        blended by ``weight`` into ``destination``'s cells that ``holders`` (the owner map ``[B,
        T]``, or None: all) marks; whether it ran (not where the kernel does not take this
        context). Raises :class:`Unavailable` where Triton cannot compile."""
        kept = None if isinstance(values, torch.Tensor) else values
        if not self.available(destination[0].device, context):
            return False
        into = (weight, holders, destination)
        if kept is None:
            self.kernel(values[0], values[1], params, context, into=into)
        else:
            self.kernel(None, None, params, context, into=into, kept=kept)
        return True


def put_target(shape: tuple[int, ...], device: torch.device, into) -> torch.Tensor:
    """The ``out`` of a kernel that stores its results through :func:`_plain_put`: a new tensor of
    ``shape`` (float32) where ``into`` is None; else (it blends into the document) a cell it never
    writes, with no allocation."""
    if into is None:
        return torch.empty(shape, device=device)
    return one_cell(device, torch.float32, 0.0)


def put_arguments(out: torch.Tensor, into) -> tuple:
    """The arguments after ``out`` of a kernel that stores its results through :func:`_plain_put`
    (``put``): into ``out`` ``[2, C, B, T]`` (contiguous), or where ``into`` is ``(weight, owner,
    destination)``, blended into the document by ``weight`` ``[B, T]`` (columns adjacent) at the
    cells ``owner`` ``[B, T]`` marks (None: every cell), ``destination`` as
    :meth:`~spectropaint.transforms.document.Document.cells` gives it: the weight, the owner, the
    document's magnitude and phase, the weight's row stride, the owner's strides, the box's first
    cell in the document, the document's strides and whether it blends."""
    device = out.device
    if into is None:  # (nothing of the weight, the owner or the document read)
        everywhere = one_cell(device, torch.bool, True)
        return (out, everywhere, out, out, 0, 0, 0, 0, 0, 0, 0, 0)
    weight, owner, (magnitude, phase, first) = into
    if owner is None:
        owner, owner_strides = one_cell(device, torch.bool, True), (0, 0)
    else:
        owner_strides = owner.stride()
    return (weight, owner, magnitude, phase, weight.stride(0), *owner_strides, first,
            *magnitude.stride(), 1)  # fmt: skip


@functools.cache
def _helpers() -> dict:
    jit = triton().jit
    plain = {"wrap": _plain_wrap, "atan2": _plain_atan2, "row": _plain_row,
             "row_program": _plain_row_program, "columns": _plain_columns,
             "lerp": _plain_lerp, "crossfade": _plain_crossfade, "put": _plain_put,
             "from_kept": _plain_from_kept, "reflected": _plain_reflected,
             "falloff": _plain_falloff}  # fmt: skip
    helpers = {name: _plain_under_interpreter(jit(function)) for name, function in plain.items()}
    # (helpers that call helpers find them here)
    for name in ("atan2", "crossfade"):
        globals()[f"_{name}"] = helpers[name]
    return helpers


def falloff_arguments(hardness: float) -> tuple[float, int]:
    """:func:`_plain_falloff`'s ``span`` and ``hard`` for a brush's ``hardness``: one less the
    hardness (as the host rounds it to float32: Triton passes a float as one), and whether it is
    1 (the span then 1, unused: no division by 0)."""
    hard = hardness >= 1.0
    return (1.0 if hard else 1.0 - hardness), int(hard)


def _plain_falloff(r, hardness, span, hard):
    """A dab's weight of peak 1 at the distance ``r`` from its centre in radii:
    :func:`~spectropaint.brushes.mask_compiled._plain_falloff`'s arithmetic, bit for bit (the
    raised cosine by Cephes' polynomial, the angle reduced in float64, as
    :func:`.compiled_math._plain_sincos` computes it; the division rounded as IEEE's, which
    Triton's ``/`` is not on a GPU; ``span``: one less the ``hardness``;
    ``hard``: 1 where it is 1, the weight then 1 inside and 0 outside)."""
    ramp = tl.minimum(tl.maximum(tl.div_rn(r - hardness, span), 0.0), 1.0)
    wide = (ramp * 3.141592653589793).to(tl.float64)
    quarter = tl.floor(wide * 0.6366197723675814 + 0.5)  # (2 / pi)
    z = (wide - quarter * 1.5707963267948966).to(tl.float32)
    zz = z * z
    sin = z + z * zz * ((-1.9515295891e-4 * zz + 8.3321608736e-3) * zz - 1.6666654611e-1)
    cos = (1.0 - 0.5 * zz
           + zz * zz * ((2.443315711809948e-5 * zz - 1.388731625493765e-3) * zz
                        + 4.166664568298827e-2))  # fmt: skip
    turn = quarter.to(tl.int64) & 3
    cos = tl.where((turn & 1) == 1, sin, cos)
    cos = tl.where((turn == 1) | (turn == 2), -cos, cos)
    soft = tl.where(r >= 1.0, 0.0, cos * 0.5 + 0.5)
    return tl.where(hard != 0, tl.where(r < 1.0, 1.0, 0.0), soft)


def _plain_crossfade(old_magnitude, old_phase, new_magnitude, new_phase, amount):
    """:func:`.blend.blend`'s complex crossfade of a cell's old values towards its new ones by
    ``amount`` (its arithmetic, without fused multiply-adds where the kernel turns them off): the
    magnitude and phase, the old ones where ``amount`` is not above 0."""
    old_real = tl.cos(old_phase) * old_magnitude
    old_imag = tl.sin(old_phase) * old_magnitude
    real = (tl.cos(new_phase) * new_magnitude - old_real) * amount + old_real
    imag = (tl.sin(new_phase) * new_magnitude - old_imag) * amount + old_imag
    touched = amount > 0.0
    return (tl.where(touched, tl.sqrt(real * real + imag * imag), old_magnitude),
            tl.where(touched, _atan2(imag, real), old_phase))  # fmt: skip


def _plain_put(out_row, plane, c, b, x, inside, magnitude, phase, old_magnitude, old_phase,
               weight, owner, out_magnitude, out_phase, weight_b, owner_b, owner_t, out_first,
               out_c, out_b, out_t, blends):  # fmt: skip
    """Store a kernel's results ``magnitude`` and ``phase`` at columns ``x`` (``inside`` the box)
    of row ``b`` of channel ``c``: in its row of ``out`` (``out_row``, the phases ``plane``
    further on), or where ``blends`` (:func:`put_arguments`' other arguments), crossfaded from the
    cells' old values by ``weight``'s cells and written into the document's cells that ``owner``
    marks."""
    if blends != 0:
        amount = tl.load(weight + b * weight_b + x, mask=inside, other=0.0)
        written = inside & (tl.load(owner + b * owner_b + x * owner_t, mask=inside, other=0) != 0)
        new_magnitude, new_phase = _crossfade(old_magnitude, old_phase, magnitude, phase, amount)
        at = out_first + c * out_c + b * out_b + x * out_t
        tl.store(out_magnitude + at, new_magnitude, mask=written)
        tl.store(out_phase + at, new_phase, mask=written)
    else:
        tl.store(out_row + x, magnitude, mask=inside)
        tl.store(out_row + plane + x, phase, mask=inside)


def _plain_from_kept(
    values, first, plane_stride, row_stride, column_stride, table, table_columns, side, n_bins,
    n_frames, bin0, frame0, tile_plane, plane, row, column, inside,
):  # fmt: skip
    """Each cell's starting value (``row``, ``column`` of a box whose first cell lies at
    ``bin0``, ``frame0`` of an ``n_bins x n_frames`` grid; 0 outside ``inside``): from the kept
    tile that holds it (``table``: each tile's address, ``table_columns`` tiles of ``side`` cells
    a row, 0 where none is kept: :class:`.tile_table.TileTable`), at the tile's ``tile_plane``
    (the channel for a magnitude, the channels more for a phase); else the document's ``values``
    (its magnitude or phase) at channel ``plane`` from ``first`` through its strides
    (:func:`.originals_fused.kept_arguments`' order)."""
    in_document = values + first + plane * plane_stride + row * row_stride + column * column_stride
    if table_columns == 0:  # (a table of no tile: a tensor read as a document)
        value = tl.load(in_document, mask=inside, other=0.0)
    else:
        at_bin = bin0 + row
        at_frame = frame0 + column
        tile_row = at_bin // side
        tile_column = at_frame // side
        address = tl.load(table + tile_row * table_columns + tile_column, mask=inside, other=0)
        top = tile_row * side
        left = tile_column * side
        width = tl.minimum(n_frames - left, side)
        height = tl.minimum(n_bins - top, side)
        tile = address.to(tl.pointer_type(tl.float32))
        in_tile = tile + (tile_plane * height + at_bin - top) * width + at_frame - left
        value = tl.load(tl.where(address != 0, in_tile, in_document), mask=inside, other=0.0)
    return value


def _plain_reflected(index, n):
    """Indices along an axis of ``n`` cells, those past it (by less than ``n``) reflected back
    into it, the edge cell repeated: :func:`~spectropaint.brushes.dab.reflect_index`'s."""
    index = tl.where(index < 0, -1 - index, index)
    return tl.where(index >= n, 2 * n - 1 - index, index)


def _plain_row_program(out, n_rows, width):
    """In a kernel of one program a row of a channel (``n_rows`` rows a channel) that writes a
    box ``width`` columns wide into ``out`` ``[2, C, n_rows, width]``: the program's channel and
    row, where its row of ``out``'s first half begins, and the size of that half."""
    program = tl.program_id(0)
    return (program // n_rows, program % n_rows, out + program * width,
            tl.num_programs(0) * width)  # fmt: skip


def _plain_columns(start, width, column0, BLOCK: tl.constexpr):
    """``BLOCK`` columns of a box ``width`` wide from ``start``: their places in the box, whether
    they lie in it, and their places in the region (the box begins at its ``column0``)."""
    x = start + tl.arange(0, BLOCK)
    return x, x < width, column0 + x


def _plain_row(values, channel, row, channel_stride, row_stride):
    """Where row ``row`` of channel ``channel`` of ``values`` begins (its strides given)."""
    return values + channel * channel_stride + row * row_stride


def _plain_wrap(angle):
    """Angles less the nearest whole number of turns: ``[-pi, pi]``."""
    return angle - tl.floor(angle * 0.15915494309189535 + 0.5) * 6.283185307179586  # 1 / 2 pi, 2 pi


def _plain_lerp(old, new, amount):
    """``torch.lerp(old, new, amount)``'s arithmetic (its two forms, by the weight's size) where
    ``amount`` is above 0, ``old`` elsewhere: a magnitude-only kernel's blend."""
    step = new - old
    mixed = tl.where(tl.abs(amount) < 0.5, old + amount * step, new - step * (1.0 - amount))
    return tl.where(amount > 0.0, mixed, old)


def _plain_atan2(y, x):
    """``atan2(y, x)``: the octant reduced to ``[0, 1]``, then Cephes' ``atanf`` (its argument
    reduced once more past ``tan(pi / 8)``), within 2e-7 of the true angle."""
    ax = tl.abs(x)
    ay = tl.abs(y)
    big = tl.maximum(ax, ay)
    small = tl.minimum(ax, ay)
    ratio = tl.where(big > 0.0, small / tl.where(big > 0.0, big, 1.0), 0.0)
    reduced = ratio > 0.4142135623730950
    t = tl.where(reduced, (ratio - 1.0) / (ratio + 1.0), ratio)
    z = t * t
    angle = (
        (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
         - 3.33329491539e-1) * z * t + t
    )  # fmt: skip
    angle = tl.where(reduced, angle + 0.7853981633974483, angle)  # pi / 4
    angle = tl.where(ay > ax, 1.5707963267948966 - angle, angle)
    angle = tl.where(x < 0.0, 3.141592653589793 - angle, angle)
    return tl.where(y < 0.0, -angle, angle)


tl = _atan2 = _crossfade = None  # (bound by jit_with and _helpers)
