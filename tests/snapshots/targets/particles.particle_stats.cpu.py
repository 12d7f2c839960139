# goldy-import CPU kernel `particle_stats` from 'rust_examples/particles.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_5 = np.float32(0.5)


def k_particle_stats(G, R, F):
    'Kinetic energy and distance from the origin of each particle, read from a\nbuffer of `#[goldy::gpu]` structs (GPU layout: 16-byte aligned `[f32; 3]`).'
    (p_particles, n_particles, p_energy, n_energy, p_distance, n_distance,) = R
    # line 14: let
    # v_i is global_id().x: G.gid_x
    # line 15: if
    _t1 = rt.cmp_lin(G, n_particles, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 16: let
        (_t2, _t3, _t4, _t5, _t6, _t7, _t8,) = rt.ld_n_lin(p_particles[0:7], G)
        v_p__position_x = _t2
        v_p__position_y = _t3
        v_p__position_z = _t4
        v_p__velocity_x = _t5
        v_p__velocity_y = _t6
        v_p__velocity_z = _t7
        v_p__mass = _t8
        # line 17: let
        v_v_x = v_p__velocity_x
        v_v_y = v_p__velocity_y
        v_v_z = v_p__velocity_z
        # line 18: store
        rt.st_lin(p_energy, G, ((F0_5 * v_p__mass) * (((v_v_x * v_v_x) + (v_v_y * v_v_y)) + (v_v_z * v_v_z))), m1, (F, 0, m1, ()))
        # line 19: store
        _t9 = (((v_p__position_x * v_p__position_x) + (v_p__position_y * v_p__position_y)) + (v_p__position_z * v_p__position_z))
        rt.st_lin(p_distance, G, np.sqrt(_t9), m1, (F, 1, m1, ()))
