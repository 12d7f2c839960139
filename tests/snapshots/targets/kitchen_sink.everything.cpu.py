# goldy-import CPU kernel `everything` from 'tests/data/kitchen_sink.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
F0_0010000000474974513 = np.float32(0.0010000000474974513)
F0_5 = np.float32(0.5)
F1_0 = np.float32(1.0)
F2_0 = np.float32(2.0)
F2_5 = np.float32(2.5)
F3_0 = np.float32(3.0)
F3_1415927410125732 = np.float32(3.1415927410125732)
Fm0_0 = np.float32(-0.0)
Fm1_0 = np.float32(-1.0)
I0 = np.int32(0)
I1 = np.int32(1)
I10 = np.int32(10)
I2 = np.int32(2)
I2147483647 = np.int32(2147483647)
I3 = np.int32(3)
I7 = np.int32(7)
U0 = np.uint32(0)
U1 = np.uint32(1)
U1065353216 = np.uint32(1065353216)
U2 = np.uint32(2)
U255 = np.uint32(255)
U3 = np.uint32(3)
U4 = np.uint32(4)
U4294967295 = np.uint32(4294967295)
U7 = np.uint32(7)


def k_everything(G, R, F):
    'Everything at once.'
    (p_verts, n_verts, p_data, n_data, p_out, n_out, p_hist, n_hist, p_sc, n_sc, p_t, n_t, d_t, r_t, p_tw, n_tw, d_tw, r_tw, u_p__scale, u_p__count, u_p__m_c00, u_p__m_c01, u_p__m_c02, u_p__m_c03, u_p__m_c10, u_p__m_c11, u_p__m_c12, u_p__m_c13, u_p__m_c20, u_p__m_c21, u_p__m_c22, u_p__m_c23, u_p__m_c30, u_p__m_c31, u_p__m_c32, u_p__m_c33, p_img, iw_img, ih_img, s_n, s_k, s_flag,) = R
    w_scratch = G.wg_array(0, 256, np.float32)  # one row per workgroup
    ret = FALSE  # lanes that returned
    # line 29: let
    # v_i is global_id().x: G.gid_x
    # line 30: let
    # v_lid is local_id().x: G.lid_x
    # line 31: let
    v_acc = U0
    # line 32: for
    _t1 = U4
    v_j = U0
    m1 = rt.m_and(None, v_j < _t1)
    while True:
        if not rt.m_any(m1):
            break
        m2 = m1
        # line 32: assign
        v_acc = rt.sel(m2, (v_acc + rt.ld(p_data, v_j, (F, 0, m2, ()))), v_acc)
        v_j = rt.sel(m1, v_j + U1, v_j)
        m1 = rt.m_and(m1, v_j < _t1)
    # line 33: let
    v_f = F0_0
    # line 34: let
    v_w = I10
    # line 35: while
    m3 = None
    brk2 = FALSE
    while True:
        m3 = rt.m_and(m3, (v_w > I0))
        if not rt.m_any(m3):
            break
        cont2 = FALSE
        m4 = m3
        # line 35: assign
        v_w = rt.sel(m4, (v_w - I1), v_w)
        # line 35: if
        _t2 = (v_w == I3)
        m5 = rt.m_and(m4, _t2)
        if rt.m_any(m5):
            # line 35: continue
            cont2 = rt.f_or(cont2, m5)
        m6 = rt.m_exit(m4, cont2)
        # line 35: if
        _t3 = (v_w == I1)
        m7 = rt.m_and(m6, _t3)
        if rt.m_any(m7):
            # line 35: break
            brk2 = rt.f_or(brk2, m7)
        m8 = rt.m_exit(m6, brk2)
        m3 = rt.m_exit(m3, brk2)
    # line 36: loop
    m9 = None
    brk3 = FALSE
    while True:
        if not rt.m_any(m9):
            break
        m10 = m9
        # line 36: break
        brk3 = rt.f_or(brk3, m10)
        m9 = rt.m_exit(m9, brk3)
    # line 37: for
    _t4 = U0
    _t5 = U3
    simt4 = not rt.uniform_trips(_t4, _t5)
    if not simt4:
        for v_q in rt.iteration_blocks(_t4, _t5, True, np.uint32, G, True):
            v_f = rt.accumulate(v_f, v_q.shape[0], rt.u2f(v_q))
    if simt4:
        _t6 = U3
        v_q = _t4
        m11 = rt.m_and(None, v_q <= _t6)
        while True:
            if not rt.m_any(m11):
                break
            m12 = m11
            # line 37: assign
            v_f = rt.sel(m12, (v_f + rt.u2f(v_q)), v_f)
            m11 = rt.m_andnot(m11, v_q == _t6)
            v_q = rt.sel(m11, v_q + U1, v_q)
    # line 38: let
    (_t7, _t8, _t9, _t10, _t11,) = rt.ld_n(p_verts[0:5], rt.urem(G.gid_x, n_verts, (F, 1, None, ())), (F, 2, None, ()))
    v_v__position_x = _t7
    v_v__position_y = _t8
    v_v__position_z = _t9
    v_v__uv_x = _t10
    v_v__uv_y = _t11
    # line 39: let
    v_pos_x = v_v__position_x
    v_pos_y = v_v__position_y
    v_pos_z = v_v__position_z
    # line 40: let
    v_s = ((v_pos_x + (v_pos_y * F2_0)) - (v_v__uv_y / F3_0))
    # line 41: let
    v_sel = np.where(s_flag, F1_0, Fm1_0)
    # line 42: let
    v__t0 = F0_0
    # line 42: if
    _t12 = rt.cmp_lin(G, s_n, 'lt')
    m13 = rt.m_and(None, _t12)
    m14 = rt.m_andnot(None, _t12)
    if rt.m_any(m13):
        # line 42: assign
        v__t0 = rt.sel(m13, rt.ld_lin(p_out, G, (F, 3, m13, ())).copy(), v__t0)
    if rt.m_any(m14):
        # line 42: assign
        v__t0 = rt.sel(m14, F0_0, v__t0)
    # line 42: let
    v_sel2 = v__t0
    # line 43: let
    _t13 = (rt.fma(np.sqrt(rt.fmin(rt.fmax(((v_s * v_sel) + v_sel2), F0_5), F2_0)), F2_0, F1_0) + rt.from_bits(U1065353216))
    v_c = (_t13 + F0_0010000000474974513)
    # line 44: let
    v_bits = (rt.shr_u32(rt.to_bits(v_c), U3) ^ (U255 & rt.shl_u32(v_acc, U2)))
    # line 45: let
    v_kk = (rt.irem(((-s_k) * I3), I7) + rt.abs_i32(s_k).astype(np.uint32).astype(np.int32))
    # line 46: let
    v_vv_x = F1_0
    v_vv_y = F2_0
    v_vv_z = v_pos_z
    v_vv_w = v_c
    # line 47: let
    v_ww_x = F0_5
    v_ww_y = F0_5
    v_ww_z = F0_5
    v_ww_w = F0_5
    # line 48: let
    v_m_c00 = u_p__m_c00
    v_m_c01 = u_p__m_c01
    v_m_c02 = u_p__m_c02
    v_m_c03 = u_p__m_c03
    v_m_c10 = u_p__m_c10
    v_m_c11 = u_p__m_c11
    v_m_c12 = u_p__m_c12
    v_m_c13 = u_p__m_c13
    v_m_c20 = u_p__m_c20
    v_m_c21 = u_p__m_c21
    v_m_c22 = u_p__m_c22
    v_m_c23 = u_p__m_c23
    v_m_c30 = u_p__m_c30
    v_m_c31 = u_p__m_c31
    v_m_c32 = u_p__m_c32
    v_m_c33 = u_p__m_c33
    # line 49: let
    v_tv_x = ((((v_m_c00 * v_vv_x) + (v_m_c10 * v_vv_y)) + (v_m_c20 * v_vv_z)) + (v_m_c30 * v_vv_w))
    v_tv_y = ((((v_m_c01 * v_vv_x) + (v_m_c11 * v_vv_y)) + (v_m_c21 * v_vv_z)) + (v_m_c31 * v_vv_w))
    v_tv_z = ((((v_m_c02 * v_vv_x) + (v_m_c12 * v_vv_y)) + (v_m_c22 * v_vv_z)) + (v_m_c32 * v_vv_w))
    v_tv_w = ((((v_m_c03 * v_vv_x) + (v_m_c13 * v_vv_y)) + (v_m_c23 * v_vv_z)) + (v_m_c33 * v_vv_w))
    # line 50: store
    _t14 = (rt.ld_t(p_t, rt.urem(G.gid_x, n_t, (F, 4, None, ())), (F, 5, None, ())) + rt.u2f((rt.tdim(d_t, U0) + r_t)))
    _t15 = (((_t14 + u_p__scale) + v_tv_w) + ((((v_vv_x * v_ww_x) + (v_vv_y * v_ww_y)) + (v_vv_z * v_ww_z)) + (v_vv_w * v_ww_w)))
    rt.st_w_lid(w_scratch, G, (_t15 + np.sqrt((((v_vv_x * v_vv_x) + (v_vv_y * v_vv_y)) + (v_vv_z * v_vv_z)))), None)
    # line 51: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
    # line 52: let
    v_total = F0_0
    # line 52: reduce
    _t16 = rt.reduce(w_scratch, G, 256, rt.ld_w_lid(w_scratch, G), None, np.add, True)
    v_total = _t16
    # line 53: let
    v_mx = F0_0
    # line 53: reduce
    _t17 = rt.reduce(w_scratch, G, 256, v_total, None, np.fmax, True)
    v_mx = _t17
    # line 55: if
    _t18 = rt.cmp_lin(G, n_out, 'ge')
    m15 = rt.m_and(None, _t18)
    if rt.m_any(m15):
        # line 55: return
        ret = rt.f_or(ret, m15)
    m16 = rt.m_exit(None, ret)
    # line 56: store
    _t19 = (((((v_mx + rt.fclamp(v_f, F0_0, F1_0)) + F3_1415927410125732) + rt.u2f(v_bits)) + rt.i2f(v_kk)) + rt.on_lanes(m16, rt.pow, F2_0, F3_0))
    rt.st_lin(p_out, G, _t19, m16)
    # line 57: let
    v_old = U0
    # line 57: atomicadd
    _t20 = rt.atomic_add(p_hist, G, rt.urem(v_bits, n_hist, (F, 6, m16, ())), U1, m16, True, (F, 7, m16, ()))
    v_old = rt.sel(m16, _t20, v_old)
    # line 58: atomicadd
    rt.atomic_add(p_hist, G, U0, v_old, m16, False, (F, 8, m16, ()))
    # line 59: store
    rt.st_lin(p_sc, G, v_kk, m16, (F, 9, m16, ()))
    # line 60: store
    rt.st_t_lin(p_tw, G, F1_0, m16, (F, 10, m16, ()))
    # line 61: store
    rt.st_img(p_img, iw_img, ih_img, rt.urem(G.gid_x, iw_img, (F, 11, m16, ())), U0, (F1_0, F0_0, F0_0, F1_0,), m16, (F, 12, m16, ()))
    # line 62: let
    v_x = U1
    # line 63: assign
    v_x = rt.sel(m16, rt.shl_u32(v_x, I2), v_x)
    # line 64: assign
    v_x = rt.sel(m16, (v_x | U1), v_x)
    # line 65: let
    v_vec3_x = U1
    v_vec3_y = U2
    v_vec3_z = U3
    # line 66: assign
    v_vec3_y = rt.sel(m16, U7, v_vec3_y)
    # line 67: let
    v_x_1 = (rt.u2f(v_x) * F2_5)
    # line 68: store
    rt.st_lin(p_out, G, (rt.ld_lin(p_out, G) + (((v_x_1 + rt.u2f(v_vec3_y)) + rt.i2f(I2147483647)) + rt.u2f(U4294967295))), m16)
    # line 69: if
    _t21 = (~s_flag)
    _t22 = (G.gid_x == U0)
    _t23 = (_t21 & (_t22 | (s_k != I2)))
    m17 = rt.m_and(m16, _t23)
    m18 = rt.m_andnot(m16, _t23)
    if rt.m_any(m17):
        # line 69: store
        _t24 = F0_0
        rt.st(p_out, U0, _t24, m17, (F, 13, m17, ()))
    if rt.m_any(m18):
        # line 69: if
        m19 = rt.m_and(m18, s_flag)
        m20 = rt.m_andnot(m18, s_flag)
        if rt.m_any(m19):
            # line 69: store
            _t25 = F1_0
            rt.st(p_out, U1, _t25, m19, (F, 14, m19, ()))
        if rt.m_any(m20):
            # line 69: store
            _t26 = Fm0_0
            rt.st(p_out, U2, _t26, m20, (F, 15, m20, ()))
