# goldy-import CPU kernel `float_ops` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F1_0 = np.float32(1.0)
Fm1_0 = np.float32(-1.0)
U1 = np.uint32(1)
U10 = np.uint32(10)
U11 = np.uint32(11)
U12 = np.uint32(12)
U2 = np.uint32(2)
U2147483648 = np.uint32(2147483648)
U3 = np.uint32(3)
U4 = np.uint32(4)
U5 = np.uint32(5)
U6 = np.uint32(6)
U7 = np.uint32(7)
U8 = np.uint32(8)
U9 = np.uint32(9)


def k_float_ops(G, R, F):
    (p_a, n_a, p_b, n_b, p_out, n_out,) = R
    # line 75: let
    # v_i is global_id().x: G.gid_x
    # line 76: if
    _t1 = rt.cmp_lin(G, n_a, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 77: let
        v_x = rt.ld_lin(p_a, G)
        # line 78: let
        v_y = rt.ld_lin(p_b, G, (F, 0, m1, ()))
        # line 79: let
        v_o = (G.gid_x * U12)
        # line 80: store
        _t2 = rt.round_away(v_x)
        rt.st(p_out, v_o, _t2, m1, (F, 1, m1, ()))
        # line 81: store
        _t3 = rt.fmin(v_x, v_y)
        rt.st(p_out, (v_o + U1), _t3, m1, (F, 2, m1, ()))
        # line 82: store
        _t4 = rt.fmax(v_x, v_y)
        rt.st(p_out, (v_o + U2), _t4, m1, (F, 3, m1, ()))
        # line 83: store
        _t5 = rt.fclamp(v_x, Fm1_0, F1_0)
        rt.st(p_out, (v_o + U3), _t5, m1, (F, 4, m1, ()))
        # line 84: store
        _t6 = np.floor(v_x)
        rt.st(p_out, (v_o + U4), _t6, m1, (F, 5, m1, ()))
        # line 85: store
        _t7 = np.ceil(v_x)
        rt.st(p_out, (v_o + U5), _t7, m1, (F, 6, m1, ()))
        # line 86: store
        _t8 = np.trunc(v_x)
        rt.st(p_out, (v_o + U6), _t8, m1, (F, 7, m1, ()))
        # line 87: store
        _t9 = rt.abs_f32(v_x)
        rt.st(p_out, (v_o + U7), _t9, m1, (F, 8, m1, ()))
        # line 88: store
        _t10 = np.fmod(v_x, v_y)
        rt.st(p_out, (v_o + U8), _t10, m1, (F, 9, m1, ()))
        # line 89: store
        _t11 = (v_x / v_y)
        rt.st(p_out, (v_o + U9), _t11, m1, (F, 10, m1, ()))
        # line 90: store
        _t12 = (-v_x)
        rt.st(p_out, (v_o + U10), _t12, m1, (F, 11, m1, ()))
        # line 91: store
        _t13 = rt.from_bits((rt.to_bits(v_x) ^ U2147483648))
        rt.st(p_out, (v_o + U11), _t13, m1, (F, 12, m1, ()))
