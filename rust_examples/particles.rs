use goldy::gpu;

#[goldy::gpu]
struct Particle {
    position: [f32; 3],
    velocity: [f32; 3],
    mass: f32,
}

/// Kinetic energy and distance from the origin of each particle, read from a
/// buffer of `#[goldy::gpu]` structs (GPU layout: 16-byte aligned `[f32; 3]`).
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn particle_stats(particles: &[Particle], energy: &mut [f32], distance: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < particles.len() {
        let p = particles[i];
        let v = p.velocity;
        energy[i] = 0.5 * p.mass * dot(v, v);
        distance[i] = length(p.position);
    }
}
