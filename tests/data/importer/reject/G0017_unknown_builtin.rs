use goldy::gpu;

#[goldy::compute]
fn misspelled(xs: &mut [f32]) {
    let i = gpu::globl_id().x;
}

#[goldy::compute]
fn unknown(xs: &mut [f32]) {
    goldy::gpu::subgroup_shuffle(1.0);
}
