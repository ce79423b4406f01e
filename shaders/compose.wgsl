// A frame presented to a window's surface: the kept picture with the window's marks over it
// (premultiplied alpha, source over), one full-screen triangle (gpu/screen_frame.py).

@group(0) @binding(0) var picture: texture_2d<f32>;
@group(0) @binding(1) var marks: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_compose(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let texel = vec2<i32>(position.xy);
    let below = textureLoad(picture, texel, 0);
    let over = textureLoad(marks, texel, 0);
    return vec4<f32>(over.rgb + below.rgb * (1.0 - over.a), 1.0);
}
