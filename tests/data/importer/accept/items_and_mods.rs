//! Kernels at the top level and inside `mod`s, with doc comments, visibility,
//! extra attributes, an explicit `-> ()`, and a `#[goldy::gpu]` struct in a module.

use goldy::gpu;

pub mod physics {
    use goldy::gpu;

    #[goldy::gpu]
    pub struct Body {
        pos: [f32; 2],
        mass: f32,
    }

    /// Moves bodies.
    /// Second doc line.
    #[goldy::compute(workgroup_size = [32, 1, 1])]
    #[allow(dead_code)]
    pub fn step(bodies: &[Body], out: &mut [f32], dt: f32) -> () {
        let i = gpu::global_id().x;
        if i < bodies.len() {
            out[i] = bodies[i].pos.x + bodies[i].mass * dt;
        }
    }

    mod inner {
        /** Block doc comment. */
        #[goldy::compute]
        pub(crate) fn inner_kernel(out: &mut [u32]) {
            out[gpu::global_id().x] = 1;
        }
    }
}

#[inline]
#[goldy::compute(workgroup_size = [1, 1, 1])]
fn single(out: &mut [i32]) {
    out[0] = 42;
}
