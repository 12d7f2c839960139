use goldy::gpu;

#[goldy::gpu]
struct Camera {
    view: [[f32; 4]; 4],
    eye: [f32; 3],
    scale: f32,
    tile: [u32; 2],
    offset: [i32; 2],
}

#[goldy::gpu]
struct Vertex {
    position: [f32; 3],
    uv: gpu::float2,
}

/// A uniform struct, a read-only struct buffer, fields, vectors and a matrix.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn transform(cam: gpu::Uniform<Camera>, verts: &[Vertex], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i >= verts.len() {
        return;
    }
    let v = verts[i];
    let p = gpu::float4(v.position.x, v.position.y, v.position.z, 1.0);
    let clip = cam.view * p;
    let d = v.position - cam.eye;
    let m2 = cam.view * cam.view;
    let clip2 = m2 * p;
    out[i] = clip.w * cam.scale + clip2.x + length(d) + v.uv.y + verts[0].uv.x
        + (cam.tile.x as f32) + (cam.offset.y as f32);
}
