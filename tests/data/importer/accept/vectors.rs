use goldy::gpu;

/// Vector constructors (float/uint/int, 2 to 4 lanes, splat, from smaller vectors),
/// arithmetic with scalars, swizzles, lane assignment.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn vectors(out: &mut [f32], ids: &mut [u32], signed: &mut [i32]) {
    let i = gpu::global_id().x;
    let a = gpu::float2(1.0, 2.0);
    let b = gpu::float3(a, 3.0);
    let c = gpu::float4(0.5);
    let d = gpu::float4(a, a.yx);
    let u = gpu::uint3(i, i + 1, 7);
    let v = gpu::uint4(gpu::uint2(1, 2), 3, 4);
    let w = gpu::int2(-1, 2);
    let x = gpu::int3(w, 0) * 2 - gpu::int3(1);
    let y = gpu::int4(-7);
    let e = (b * 2.0 + 1.0) / gpu::float3(2.0) - b;
    let f = 2.0 * c + -d;
    let mut g = e.zyx;
    g.x = f.w;
    g.y += 1.0;
    let h = g.xy + gpu::float2(dot(b, e), length(c.xyz));
    out[i] = h.x + h.y + d.w + f.xyzw.w + a.x * a.y;
    let shifted = (u << 2u32) >> 1 | gpu::uint3(1);
    ids[i] = u.x + u.yz.y + v.w + (u.xy + v.zw).x + shifted.z + (u & v.xyz ^ u).y;
    signed[i] = x.x + x.zy.y + y.w + w.yx.x;
}
