# goldy-import CPU kernel `int_ops` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

I3 = np.int32(3)
U1 = np.uint32(1)
U10 = np.uint32(10)
U1000 = np.uint32(1000)
U2 = np.uint32(2)
U3 = np.uint32(3)
U4 = np.uint32(4)
U5 = np.uint32(5)
U6 = np.uint32(6)
U61680 = np.uint32(61680)
U7 = np.uint32(7)
U8 = np.uint32(8)
U9 = np.uint32(9)


def k_int_ops(G, R, F):
    'Every integer operator on a pair (a[i], b[i]), as i32 and reinterpreted as u32.'
    (p_a, n_a, p_b, n_b, p_out_i, n_out_i, p_out_u, n_out_u,) = R
    ret = FALSE  # lanes that returned
    # line 31: let
    # v_i is global_id().x: G.gid_x
    # line 32: if
    _t1 = rt.cmp_lin(G, n_a, 'ge')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 33: return
        ret = rt.f_or(ret, m1)
    m2 = rt.m_exit(None, ret)
    # line 35: let
    v_x = rt.ld_lin(p_a, G)
    # line 36: let
    v_y = rt.ld_lin(p_b, G, (F, 0, m2, ()))
    # line 37: let
    v_ux = v_x.astype(np.uint32)
    # line 38: let
    v_uy = v_y.astype(np.uint32)
    # line 39: let
    v_o = (G.gid_x * U10)
    # line 40: store
    _t2 = (v_x + v_y)
    rt.st(p_out_i, v_o, _t2, m2, (F, 1, m2, ()))
    # line 41: store
    _t3 = (v_x - v_y)
    rt.st(p_out_i, (v_o + U1), _t3, m2, (F, 2, m2, ()))
    # line 42: store
    _t4 = (v_x * v_y)
    rt.st(p_out_i, (v_o + U2), _t4, m2, (F, 3, m2, ()))
    # line 43: store
    _t5 = rt.idiv(v_x, v_y, (F, 4, m2, ()))
    rt.st(p_out_i, (v_o + U3), _t5, m2, (F, 5, m2, ()))
    # line 44: store
    _t6 = rt.irem(v_x, v_y, (F, 6, m2, ()))
    rt.st(p_out_i, (v_o + U4), _t6, m2, (F, 7, m2, ()))
    # line 45: store
    _t7 = rt.shl_i32(v_x, v_y)
    rt.st(p_out_i, (v_o + U5), _t7, m2, (F, 8, m2, ()))
    # line 46: store
    _t8 = rt.shr_i32(v_x, v_uy)
    rt.st(p_out_i, (v_o + U6), _t8, m2, (F, 9, m2, ()))
    # line 47: store
    _t9 = (-v_x)
    rt.st(p_out_i, (v_o + U7), _t9, m2, (F, 10, m2, ()))
    # line 48: store
    _t10 = rt.abs_i32(v_x)
    rt.st(p_out_i, (v_o + U8), _t10, m2, (F, 11, m2, ()))
    # line 49: store
    _t11 = (np.minimum(v_x, v_y) + (np.maximum(v_x, v_y) * I3))
    rt.st(p_out_i, (v_o + U9), _t11, m2, (F, 12, m2, ()))
    # line 50: store
    _t12 = (v_ux + v_uy)
    rt.st(p_out_u, v_o, _t12, m2, (F, 13, m2, ()))
    # line 51: store
    _t13 = (v_ux - v_uy)
    rt.st(p_out_u, (v_o + U1), _t13, m2, (F, 14, m2, ()))
    # line 52: store
    _t14 = (v_ux * v_uy)
    rt.st(p_out_u, (v_o + U2), _t14, m2, (F, 15, m2, ()))
    # line 53: store
    _t15 = rt.udiv(v_ux, v_uy, (F, 16, m2, ()))
    rt.st(p_out_u, (v_o + U3), _t15, m2, (F, 17, m2, ()))
    # line 54: store
    _t16 = rt.urem(v_ux, v_uy, (F, 18, m2, ()))
    rt.st(p_out_u, (v_o + U4), _t16, m2, (F, 19, m2, ()))
    # line 55: store
    _t17 = rt.shl_u32(v_ux, v_y)
    rt.st(p_out_u, (v_o + U5), _t17, m2, (F, 20, m2, ()))
    # line 56: store
    _t18 = rt.shr_u32(v_ux, v_uy)
    rt.st(p_out_u, (v_o + U6), _t18, m2, (F, 21, m2, ()))
    # line 57: store
    _t19 = (~v_ux)
    rt.st(p_out_u, (v_o + U7), _t19, m2, (F, 22, m2, ()))
    # line 58: store
    _t20 = ((v_ux & v_uy) | (v_ux ^ U61680))
    rt.st(p_out_u, (v_o + U8), _t20, m2, (F, 23, m2, ()))
    # line 59: store
    _t21 = np.minimum(np.maximum(v_ux, U10), U1000)
    rt.st(p_out_u, (v_o + U9), _t21, m2, (F, 24, m2, ()))
