// The spectrogram: one full-screen triangle. Each pixel takes the largest magnitude among the cells
// its footprint covers (in the reduced level whose columns are about a pixel wide), converts it to dB,
// applies floor, range and gamma, and looks the colour up in a table. Overlays: overlay.wgsl.
//
// Coordinates: texel (x, y) = (column, row) = (frame, bin); frame i covers [i, i + 1) along time and
// bin k covers [k, k + 1) in "cell" units c = (hz - hz0) / hz_step. Screen rows count from the top,
// low frequencies are at the bottom. The numpy oracle in tests/test_render_reference.py mirrors this.

// Keep in the order of VIEW_FIELDS in gpu/uniforms.py (a test compares the two).
struct View {
    full_size: vec2<f32>,       // the whole picture, pixels (a render may be one piece of it)
    offset: vec2<f32>,          // this target's top-left pixel within the whole picture
    t0: f32,                    // visible frames [t0, t1)
    t1: f32,
    w_lo: f32,                  // visible warped frequencies [w_lo, w_hi), bottom to top
    w_hi: f32,
    hz0: f32,                   // lower edge of bin 0's cell, Hz
    hz_step: f32,               // bin spacing, Hz
    scale: u32,                 // 0 linear, 1 log, 2 mel
    mode: u32,                  // 0 magnitude, 1 phase
    db_a: f32,                  // level = log2(magnitude) * db_a + db_b, 0 at the floor, 1 at the top
    db_b: f32,
    gamma: f32,
    colormap: u32,              // row of the colour table texture
    n_frames: u32,
    n_bins: u32,
    channel: u32,
    n_levels: u32,
    col_shift: u32,             // magnitude tiles are 1 << col_shift wide (levels end to end)
    row_shift: u32,             // bin b: tile row b >> row_shift, texel row b & row_mask
    mag_cols: u32,
    tile_rows: u32,
    phase_col_shift: u32,       // phase tiles (level 0 only, same tile rows)
    phase_cols: u32,
    phase_colormap: u32,
    overlay_flags: u32,         // 1 playhead, 4 selection, 8 selection mask
    playhead: f32,              // texel position along time
    row_mask: u32,
    level: u32,                 // the reduced level sampled: columns about a pixel wide
    pad2: u32,
    level_offset: array<vec4<u32>, 4>,  // first virtual column of level L at [L / 4][L % 4]
    level_width: array<vec4<u32>, 4>,   // columns of level L
    selection: vec4<f32>,       // frames [x, y), Hz [z, w)
    mask_box: vec4<f32>,        // selection mask: first frame, frames per texel, first bin, bins per texel
    clip: vec4<u32>,            // compute pass: the target's pixels drawn, x, y, width, height
};

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var magnitude: texture_2d_array<f32>;
@group(0) @binding(2) var phase: texture_2d_array<f32>;
@group(0) @binding(3) var colormaps: texture_2d<f32>;
@group(0) @binding(6) var selection_mask: texture_2d<f32>;

const MAX_TAPS: i32 = 16;          // cells read per axis; wider footprints are strided
const EDGE_EPS: f32 = 0.001;       // a footprint must enter a cell by this much to include it
const LEVEL_FACTOR: f32 = 4.0;     // frames per column, level L + 1 over level L
const BACKGROUND: vec3<f32> = vec3<f32>(0.0, 0.0, 0.0);
const TAU: f32 = 6.283185307179586;

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn warp(hz: f32) -> f32 {
    if (view.scale == 1u) {
        return log(hz);
    }
    if (view.scale == 2u) {
        return 2595.0 * log2(1.0 + hz / 700.0) * 0.30102999566398120;
    }
    return hz;
}

fn unwarp(w: f32) -> f32 {
    if (view.scale == 1u) {
        return exp(w);
    }
    if (view.scale == 2u) {
        return 700.0 * (exp2(w / 2595.0 * 3.3219280948873623) - 1.0);
    }
    return w;
}

// The rectangle of the picture one pixel covers, in texel units.
struct Footprint {
    pixel: vec2<f32>,   // global pixel (column, row from the top)
    ta: f32,            // frames [ta, tb)
    tb: f32,
    wa: f32,            // warped frequencies [wa, wb)
    wb: f32,
    ca: f32,            // bin cells [ca, cb)
    cb: f32,
};

fn footprint(frag: vec2<f32>) -> Footprint {
    let pixel = floor(frag) + view.offset;
    let dt = (view.t1 - view.t0) / view.full_size.x;
    let dw = (view.w_hi - view.w_lo) / view.full_size.y;
    let up = view.full_size.y - pixel.y;  // rows from the bottom edge to this pixel's top
    let wa = view.w_lo + (up - 1.0) * dw;
    let wb = view.w_lo + up * dw;
    return Footprint(
        pixel,
        view.t0 + pixel.x * dt,
        view.t0 + (pixel.x + 1.0) * dt,
        wa,
        wb,
        (unwarp(wa) - view.hz0) / view.hz_step,
        (unwarp(wb) - view.hz0) / view.hz_step,
    );
}

// Cells first, first + step, ... <= last covered by [a, b) along one axis of `count` cells.
// A footprint smaller than a cell takes the cell under its centre.
struct Taps {
    first: i32,
    last: i32,
    step: i32,
};

fn taps(a: f32, b: f32, count: u32) -> Taps {
    var first: i32;
    var last: i32;
    if (b - a < 1.0) {
        first = i32(floor(0.5 * (a + b)));
        last = first;
    } else {
        first = i32(floor(a + EDGE_EPS));
        last = i32(ceil(b - EDGE_EPS)) - 1;
    }
    first = max(first, 0);
    last = min(last, i32(count) - 1);
    return Taps(first, last, max(1, (last - first + MAX_TAPS) / MAX_TAPS));
}

// Tile sizes are powers of two: shifts and masks, no integer division (slow on CPU rasterisers).
fn load_magnitude(level: u32, column: i32, bin: i32) -> f32 {
    let v = view.level_offset[level >> 2u][level & 3u] + u32(column);
    let row = u32(bin) >> view.row_shift;
    let layer = (view.channel * view.tile_rows + row) * view.mag_cols + (v >> view.col_shift);
    let texel = vec2<u32>(v & ((1u << view.col_shift) - 1u), u32(bin) & view.row_mask);
    return textureLoad(magnitude, texel, layer, 0).r;
}

fn load_phase(column: i32, bin: i32) -> f32 {
    let c = u32(column);
    let row = u32(bin) >> view.row_shift;
    let layer = (view.channel * view.tile_rows + row) * view.phase_cols + (c >> view.phase_col_shift);
    let texel = vec2<u32>(c & ((1u << view.phase_col_shift) - 1u), u32(bin) & view.row_mask);
    return textureLoad(phase, texel, layer, 0).r;
}

// Largest magnitude under the footprint, or -1 when it covers no cell.
fn pooled_magnitude(fp: Footprint) -> f32 {
    let level = view.level;
    let scale = f32(1u << (2u * level));  // LEVEL_FACTOR ** level
    let columns = taps(fp.ta / scale, fp.tb / scale, view.level_width[level >> 2u][level & 3u]);
    let bins = taps(fp.ca, fp.cb, view.n_bins);
    if (columns.last < columns.first || bins.last < bins.first) {
        return -1.0;
    }
    var m = 0.0;
    for (var i = 0; i < MAX_TAPS; i++) {
        let column = columns.first + i * columns.step;
        if (column > columns.last) {
            break;
        }
        for (var j = 0; j < MAX_TAPS; j++) {
            let bin = bins.first + j * bins.step;
            if (bin > bins.last) {
                break;
            }
            m = max(m, load_magnitude(level, column, bin));
        }
    }
    return m;
}

fn lookup(map: u32, value: f32) -> vec3<f32> {
    let position = clamp(value, 0.0, 1.0) * 255.0;
    let index = min(u32(position), 254u);
    let low = textureLoad(colormaps, vec2<u32>(index, map), 0).rgb;
    let high = textureLoad(colormaps, vec2<u32>(index + 1u, map), 0).rgb;
    return mix(low, high, position - f32(index));
}

// The colour of a magnitude (-1: no cell, the background).
fn colour_of(m: f32) -> vec3<f32> {
    if (m < 0.0) {
        return BACKGROUND;
    }
    let level = clamp(log2(max(m, 1e-30)) * view.db_a + view.db_b, 0.0, 1.0);
    return lookup(view.colormap, select(0.0, pow(level, view.gamma), level > 0.0));
}

fn magnitude_colour(fp: Footprint) -> vec3<f32> {
    return colour_of(pooled_magnitude(fp));
}

fn phase_colour(fp: Footprint) -> vec3<f32> {
    let column = i32(floor(0.5 * (fp.ta + fp.tb)));
    let bin = i32(floor(0.5 * (fp.ca + fp.cb)));
    if (column < 0 || column >= i32(view.n_frames) || bin < 0 || bin >= i32(view.n_bins)) {
        return BACKGROUND;
    }
    return lookup(view.phase_colormap, fract(load_phase(column, bin) / TAU + 0.5));
}

// The colour of the pixel whose centre is at `position` (target pixels, from the top left).
fn shade(position: vec2<f32>) -> vec4<f32> {
    let fp = footprint(position);
    var rgb: vec3<f32>;
    if (view.mode == 1u) {
        rgb = phase_colour(fp);
    } else {
        rgb = magnitude_colour(fp);
    }
    if (view.overlay_flags != 0u) {
        rgb = draw_overlays(rgb, fp);
    }
    return vec4<f32>(rgb, 1.0);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    return shade(position.xy);
}

// The same picture from a compute pass: GPUs built for compute (H100, H200) run fragment shaders
// on a few of their cores only. Pixel id + the clip's origin of the target is written into
// `picture` at that place; `clip` is (x, y, width, height) of the part drawn.
@group(0) @binding(7) var picture: texture_storage_2d<rgba8unorm, write>;

@compute @workgroup_size(16, 8)
fn cs_main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= view.clip.z || id.y >= view.clip.w) {
        return;
    }
    let pixel = id.xy + view.clip.xy;
    textureStore(picture, pixel, shade(vec2<f32>(pixel) + 0.5));
}
