# goldy-import CPU kernel `transcendental` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_5 = np.float32(0.5)
F0_75 = np.float32(0.75)
U1 = np.uint32(1)
U2 = np.uint32(2)
U3 = np.uint32(3)
U4 = np.uint32(4)
U5 = np.uint32(5)
U6 = np.uint32(6)


def k_transcendental(G, R, F):
    (p_a, n_a, p_out, n_out,) = R
    # line 97: let
    # v_i is global_id().x: G.gid_x
    # line 98: if
    _t1 = rt.cmp_lin(G, n_a, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 99: let
        v_x = rt.ld_lin(p_a, G)
        # line 100: let
        v_o = (G.gid_x * U6)
        # line 101: store
        _t2 = rt.on_lanes(m1, rt.sin, v_x)
        rt.st(p_out, v_o, _t2, m1, (F, 0, m1, ()))
        # line 102: store
        _t3 = rt.on_lanes(m1, rt.cos, v_x)
        rt.st(p_out, (v_o + U1), _t3, m1, (F, 1, m1, ()))
        # line 103: store
        _t4 = rt.on_lanes(m1, rt.exp, (v_x * F0_5))
        rt.st(p_out, (v_o + U2), _t4, m1, (F, 2, m1, ()))
        # line 104: store
        _t5 = rt.on_lanes(m1, rt.log, rt.abs_f32(v_x))
        rt.st(p_out, (v_o + U3), _t5, m1, (F, 3, m1, ()))
        # line 105: store
        _t6 = np.sqrt(rt.abs_f32(v_x))
        rt.st(p_out, (v_o + U4), _t6, m1, (F, 4, m1, ()))
        # line 106: store
        _t7 = rt.on_lanes(m1, rt.pow, rt.abs_f32(v_x), F0_75)
        rt.st(p_out, (v_o + U5), _t7, m1, (F, 5, m1, ()))
