// Marks drawn over the spectrogram in the same pass: playhead, selection rectangle, and the
// selection mask (any shape): a tint by its weight and a dashed outline where it crosses one half
// between a pixel and a neighbour, on every frequency axis (the brush outline is drawn by the
// window, over the picture). Appended to spectrogram.wgsl (it uses its View, Footprint, warp and
// unwarp).

const OVERLAY_PLAYHEAD: u32 = 1u;
const OVERLAY_SELECTION: u32 = 4u;
const OVERLAY_MASK: u32 = 8u;
const DASH: u32 = 4u;               // pixels per dash of the mask's outline
const PLAYHEAD_RGB: vec3<f32> = vec3<f32>(1.0, 1.0, 1.0);
const SELECTION_RGB: vec3<f32> = vec3<f32>(0.35, 0.75, 1.0);
const SELECTION_FILL: f32 = 0.2;

// A pixel column or row position (from the picture's top-left corner) of a time or frequency.
fn column_of(frames: f32) -> f32 {
    return (frames - view.t0) / (view.t1 - view.t0) * view.full_size.x;
}

// A frequency at or below 0 Hz has no logarithm: on a log axis it lies below any row (a time
// selection spans bin 0's cell, whose lower edge is below 0 Hz).
const LOWEST_LOG_HZ: f32 = 1e-30;

fn row_of(hz: f32) -> f32 {
    let safe = select(hz, max(hz, LOWEST_LOG_HZ), view.scale == 1u);
    return (1.0 - (warp(safe) - view.w_lo) / (view.w_hi - view.w_lo)) * view.full_size.y;
}

// The selection mask's weight at a frame position and a frequency (0 outside its texture).
fn mask_at(frames: f32, w: f32) -> f32 {
    let size = textureDimensions(selection_mask);
    let cell = (unwarp(w) - view.hz0) / view.hz_step;
    let x = floor((frames - view.mask_box.x) / view.mask_box.y);
    let y = floor((cell - view.mask_box.z) / view.mask_box.w);
    if (x < 0.0 || y < 0.0 || x >= f32(size.x) || y >= f32(size.y)) {
        return 0.0;
    }
    return textureLoad(selection_mask, vec2<u32>(u32(x), u32(y)), 0).r;
}

fn draw_mask(rgb_in: vec3<f32>, fp: Footprint) -> vec3<f32> {
    let t = 0.5 * (fp.ta + fp.tb);
    let w = 0.5 * (fp.wa + fp.wb);
    let dt = fp.tb - fp.ta;
    let dw = fp.wb - fp.wa;
    let weight = mask_at(t, w);
    let inside = weight >= 0.5;
    let edge = inside != (mask_at(t - dt, w) >= 0.5) || inside != (mask_at(t + dt, w) >= 0.5)
        || inside != (mask_at(t, w - dw) >= 0.5) || inside != (mask_at(t, w + dw) >= 0.5);
    if (edge) {
        let dash = ((u32(fp.pixel.x) + u32(fp.pixel.y)) / DASH) % 2u == 0u;
        return select(vec3<f32>(0.0, 0.0, 0.0), vec3<f32>(1.0, 1.0, 1.0), dash);
    }
    return mix(rgb_in, SELECTION_RGB, SELECTION_FILL * weight);
}

fn draw_overlays(rgb_in: vec3<f32>, fp: Footprint) -> vec3<f32> {
    var rgb = rgb_in;
    let centre = fp.pixel + 0.5;
    if ((view.overlay_flags & OVERLAY_MASK) != 0u) {
        rgb = draw_mask(rgb, fp);
    }
    if ((view.overlay_flags & OVERLAY_SELECTION) != 0u) {
        let left = column_of(view.selection.x);
        let right = column_of(view.selection.y);
        let top = row_of(view.selection.w);
        let bottom = row_of(view.selection.z);
        let inside = centre.x >= left && centre.x < right && centre.y >= top && centre.y < bottom;
        if (inside) {
            let edge = min(min(centre.x - left, right - centre.x), min(centre.y - top, bottom - centre.y));
            rgb = select(mix(rgb, SELECTION_RGB, SELECTION_FILL), SELECTION_RGB, edge < 1.0);
        }
    }
    if ((view.overlay_flags & OVERLAY_PLAYHEAD) != 0u && fp.ta <= view.playhead && view.playhead < fp.tb) {
        rgb = PLAYHEAD_RGB;
    }
    return rgb;
}
