# goldy-import CPU kernel `tensor_scale` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 32x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F2_0 = np.float32(2.0)
U0 = np.uint32(0)
U1 = np.uint32(1)
U2 = np.uint32(2)
U3 = np.uint32(3)
U4 = np.uint32(4)


def k_tensor_scale(G, R, F):
    (p_src, n_src, d_src, r_src, p_dst, n_dst, d_dst, r_dst, p_info, n_info,) = R
    # line 295: let
    # v_i is global_id().x: G.gid_x
    # line 296: if
    _t1 = rt.cmp_lin(G, n_src, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 297: store
        rt.st_t_lin(p_dst, G, ((rt.ld_t_lin(p_src, G) * F2_0) + rt.ld_t_lin(p_dst, G, (F, 0, m1, ()))), m1, (F, 1, m1, ()))
    # line 299: if
    _t2 = (G.gid_x == U0)
    m2 = rt.m_and(None, _t2)
    if rt.m_any(m2):
        # line 300: store
        _t3 = r_src
        rt.st(p_info, U0, _t3, m2, (F, 2, m2, ()))
        # line 301: store
        _t4 = rt.tdim(d_src, U0)
        rt.st(p_info, U1, _t4, m2, (F, 3, m2, ()))
        # line 302: store
        _t5 = rt.tdim(d_src, U1)
        rt.st(p_info, U2, _t5, m2, (F, 4, m2, ()))
        # line 303: store
        _t6 = n_src
        rt.st(p_info, U3, _t6, m2, (F, 5, m2, ()))
        # line 304: store
        _t7 = n_dst
        rt.st(p_info, U4, _t7, m2, (F, 6, m2, ()))
