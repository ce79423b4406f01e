// Blocks of non-uniform bands (the NSGT): each group of bands has its own time rate and its own
// band edges. Appended to spectrogram.wgsl and overlay.wgsl (it uses View, Footprint, taps,
// colour_of, draw_overlays); entry point fs_bands. The view's time axis is a reference grid (texels
// of view.t0..t1); group g's frame position is frame_a * texel + frame_b. Each pixel takes the
// largest magnitude of every group whose bands its footprint meets, over the bands (edges[] in Hz,
// searched) and frames (in the reduced level about a pixel wide) it covers. In the phase view
// (view.mode 1) a pixel shows the phase of the band and level-0 frame under its centre, from the
// phase texture, whose tiles are laid out as the magnitude's.
// The numpy oracles in tests/test_render_bands.py mirror this.

struct Group {
    hz_lo: f32,                 // lower edge of the first band, upper edge of the last, Hz
    hz_hi: f32,
    edge0: u32,                 // index of the first band's lower edge in edges[]
    n_bins: u32,
    frame_a: f32,               // frame position = frame_a * view texel + frame_b
    frame_b: f32,
    layer0: u32,                // first texture layer of this group's tiles
    cols: u32,                  // tile columns (levels end to end, as in spectrogram.wgsl)
    n_levels: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    level_offset: array<vec4<u32>, 4>,
    level_width: array<vec4<u32>, 4>,
};

@group(0) @binding(4) var<storage, read> groups: array<Group>;
@group(0) @binding(5) var<storage, read> edges: array<f32>;

// Fractional band position of hz in group g: band k covers [k, k + 1) between its edges.
fn band_position(g: Group, hz: f32) -> f32 {
    var lo = 0u;
    var hi = g.n_bins;  // edges[edge0 + lo] <= hz < edges[edge0 + hi]
    if (hz <= edges[g.edge0]) {
        return 0.0;
    }
    if (hz >= edges[g.edge0 + g.n_bins]) {
        return f32(g.n_bins);
    }
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (edges[g.edge0 + mid] <= hz) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let a = edges[g.edge0 + lo];
    let b = edges[g.edge0 + lo + 1u];
    return f32(lo) + (hz - a) / (b - a);
}

// Texel (x, y) and layer of group g's virtual column v (levels end to end) and band `bin`.
fn band_texel(g: Group, v: u32, bin: i32) -> vec3<u32> {
    let row = u32(bin) >> view.row_shift;
    let layer = g.layer0 + row * g.cols + (v >> view.col_shift);
    return vec3<u32>(v & ((1u << view.col_shift) - 1u), u32(bin) & view.row_mask, layer);
}

fn load_band(g: Group, level: u32, column: i32, bin: i32) -> f32 {
    let p = band_texel(g, g.level_offset[level >> 2u][level & 3u] + u32(column), bin);
    return textureLoad(magnitude, p.xy, p.z, 0).r;
}

fn load_band_phase(g: Group, column: i32, bin: i32) -> f32 {
    let p = band_texel(g, g.level_offset[0][0] + u32(column), bin);
    return textureLoad(phase, p.xy, p.z, 0).r;
}

// The phase colour of the cell under the footprint's centre (the background outside every group).
fn bands_phase_colour(fp: Footprint) -> vec3<f32> {
    let hz = unwarp(0.5 * (fp.wa + fp.wb));
    let t = 0.5 * (fp.ta + fp.tb);
    for (var k = 0u; k < arrayLength(&groups); k++) {
        let g = groups[k];
        if (hz < g.hz_lo || hz >= g.hz_hi) {
            continue;
        }
        let bin = min(i32(floor(band_position(g, hz))), i32(g.n_bins) - 1);
        let column = i32(floor(t * g.frame_a + g.frame_b));
        if (column < 0 || column >= i32(g.level_width[0][0])) {
            return BACKGROUND;
        }
        return lookup(view.phase_colormap, fract(load_band_phase(g, column, bin) / TAU + 0.5));
    }
    return BACKGROUND;
}

// Largest magnitude of group g under the footprint, or -1 when it covers none of its cells.
fn group_magnitude(g: Group, fp: Footprint, ha: f32, hb: f32) -> f32 {
    if (hb <= g.hz_lo || ha >= g.hz_hi) {
        return -1.0;
    }
    let fa = fp.ta * g.frame_a + g.frame_b;
    let fb = fp.tb * g.frame_a + g.frame_b;
    var level = 0u;
    var scale = 1.0;
    loop {
        if (level + 1u >= g.n_levels || fb - fa < scale * LEVEL_FACTOR) {
            break;
        }
        level += 1u;
        scale *= LEVEL_FACTOR;
    }
    let columns = taps(fa / scale, fb / scale, g.level_width[level >> 2u][level & 3u]);
    let bins = taps(band_position(g, ha), band_position(g, hb), g.n_bins);
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
            m = max(m, load_band(g, level, column, bin));
        }
    }
    return m;
}

@fragment
fn fs_bands(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let fp = footprint(position.xy);
    var rgb: vec3<f32>;
    if (view.mode == 1u) {
        rgb = bands_phase_colour(fp);
    } else {
        let ha = unwarp(fp.wa);
        let hb = unwarp(fp.wb);
        var m = -1.0;
        for (var g = 0u; g < arrayLength(&groups); g++) {
            m = max(m, group_magnitude(groups[g], fp, ha, hb));
        }
        rgb = colour_of(m);
    }
    if (view.overlay_flags != 0u) {
        rgb = draw_overlays(rgb, fp);
    }
    return vec4<f32>(rgb, 1.0);
}
