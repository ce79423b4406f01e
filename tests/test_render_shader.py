"""The uniform block in Python matches the WGSL struct, field by field, and packs to its size."""

from __future__ import annotations

import re
import struct

from spectropaint.gpu.uniforms import VIEW_FIELDS, VIEW_SIZE, pack_view
from spectropaint.gpu.wgsl import shader_source


def wgsl_struct_fields(source: str, name: str) -> list[tuple[str, str]]:
    body = re.search(rf"struct {name} \{{(.*?)\}};", source, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return re.findall(r"^\s*(\w+)\s*:\s*(.+?),\s*$", body, re.M)


def test_python_fields_match_the_wgsl_struct_in_order():
    source = shader_source("spectrogram.wgsl", "overlay.wgsl")
    assert wgsl_struct_fields(source, "View") == list(VIEW_FIELDS)


def test_packing_follows_wgsl_alignment():
    # vec2 at 8-byte, vec4 and arrays at 16-byte boundaries; 30 scalars-or-vec2 words before the
    # first array (120 bytes) pad to 128, then 2 arrays of 64 bytes and 3 vec4 of 16.
    assert VIEW_SIZE == 128 + 64 + 64 + 16 + 16 + 16
    values = {name: 0 for name, _ in VIEW_FIELDS}
    values.update(
        full_size=(3.0, 4.0),
        offset=(0.0, 0.0),
        level_offset=list(range(16)),
        level_width=[0] * 16,
        selection=(1.0, 2.0, 3.0, 0.5),
        mask_box=(1.0, 2.0, 3.0, 4.5),
        clip=(5, 6, 70, 80),
        playhead=7.5,
        colormap=5,
    )
    data = pack_view(values)
    assert len(data) == VIEW_SIZE
    assert struct.unpack_from("<2f", data, 0) == (3.0, 4.0)
    assert struct.unpack_from("<16I", data, 128) == tuple(range(16))
    assert struct.unpack_from("<4f", data, 256) == (1.0, 2.0, 3.0, 0.5)
    assert struct.unpack_from("<4f", data, 272) == (1.0, 2.0, 3.0, 4.5)
    assert struct.unpack_from("<4I", data, 288) == (5, 6, 70, 80)
    names = [name for name, _ in VIEW_FIELDS]
    assert struct.unpack_from("<f", data, 4 * (names.index("playhead") + 2)) == (7.5,)
    assert struct.unpack_from("<I", data, 4 * (names.index("colormap") + 2)) == (5,)
