# goldy-import CPU kernel `structs` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 32x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U1 = np.uint32(1)
U2 = np.uint32(2)
U3 = np.uint32(3)
U4 = np.uint32(4)


def k_structs(G, R, F):
    (p_verts, n_verts, u_p__scale, u_p__offset_x, u_p__offset_y, u_p__offset_z, u_p__m_c00, u_p__m_c01, u_p__m_c02, u_p__m_c10, u_p__m_c11, u_p__m_c12, u_p__m_c20, u_p__m_c21, u_p__m_c22, u_p__count, p_out, n_out, p_ids, n_ids,) = R
    # line 186: let
    # v_i is global_id().x: G.gid_x
    # line 187: if
    _t1 = rt.cmp_lin(G, u_p__count, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 188: let
        (_t2, _t3, _t4, _t5, _t6, _t7,) = rt.ld_n_lin(p_verts[0:6], G, (F, 0, m1, ()))
        v_v__position_x = _t2
        v_v__position_y = _t3
        v_v__position_z = _t4
        v_v__uv_x = _t5
        v_v__uv_y = _t6
        v_v__id = _t7
        # line 189: let
        _t8 = ((v_v__position_x * u_p__scale) + u_p__offset_x)
        _t9 = ((v_v__position_y * u_p__scale) + u_p__offset_y)
        _t10 = ((v_v__position_z * u_p__scale) + u_p__offset_z)
        v_moved_x = (((u_p__m_c00 * _t8) + (u_p__m_c10 * _t9)) + (u_p__m_c20 * _t10))
        v_moved_y = (((u_p__m_c01 * _t8) + (u_p__m_c11 * _t9)) + (u_p__m_c21 * _t10))
        v_moved_z = (((u_p__m_c02 * _t8) + (u_p__m_c12 * _t9)) + (u_p__m_c22 * _t10))
        # line 190: store
        _t11 = v_moved_x
        rt.st(p_out, (G.gid_x * U4), _t11, m1, (F, 1, m1, ()))
        # line 191: store
        _t12 = v_moved_y
        rt.st(p_out, ((G.gid_x * U4) + U1), _t12, m1, (F, 2, m1, ()))
        # line 192: store
        _t13 = v_moved_z
        rt.st(p_out, ((G.gid_x * U4) + U2), _t13, m1, (F, 3, m1, ()))
        # line 193: store
        (_t14, _t15,) = rt.ld_n_lin(p_verts[3:5], G, (F, 4, m1, ()))
        _t16 = (v_v__uv_x - _t15)
        rt.st(p_out, ((G.gid_x * U4) + U3), _t16, m1, (F, 5, m1, ()))
        # line 194: store
        rt.st_lin(p_ids, G, v_v__id, m1, (F, 6, m1, ()))
