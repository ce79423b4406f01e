// Marks drawn over the spectrogram in the same pass: playhead and selection rectangle (the brush
// outline is drawn by the window, over the picture). Appended to spectrogram.wgsl (it uses its View,
// Footprint and warp).

const OVERLAY_PLAYHEAD: u32 = 1u;
const OVERLAY_SELECTION: u32 = 4u;
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

fn draw_overlays(rgb_in: vec3<f32>, fp: Footprint) -> vec3<f32> {
    var rgb = rgb_in;
    let centre = fp.pixel + 0.5;
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
