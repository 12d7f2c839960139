use goldy::gpu;

#[goldy::gpu]
struct P {
    x: f32,
}

#[goldy::compute]
fn mut_struct_slice(ps: &mut [P]) {}

#[goldy::compute]
fn scattered_struct(ps: gpu::Scattered<P>) {}

#[goldy::compute]
fn uniform_scalar(u: gpu::Uniform<f32>) {}

#[goldy::compute]
fn struct_by_value(p: P) {}

#[goldy::compute]
fn vector_by_value(v: gpu::float4) {}

#[goldy::compute]
fn array_param(a: [f32; 4]) {}

#[goldy::compute]
fn image_vec3(img: gpu::DirectSpatial<gpu::float3>) {}

#[goldy::compute]
fn two_type_args(b: gpu::BufRO<f32, u32>) {}

#[goldy::compute]
fn unknown_resource(b: gpu::Texture<f32>) {}

#[goldy::compute]
fn self_param(self) {}
