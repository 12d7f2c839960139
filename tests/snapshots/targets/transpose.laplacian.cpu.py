# goldy-import CPU kernel `laplacian` from 'rust_examples/transpose.rs' (generated code).
# Runs workgroups of 8x8x1 threads as a (W, S) lane grid; masks: None = all lanes.

F4_0 = np.float32(4.0)
U0 = np.uint32(0)
U1 = np.uint32(1)


def k_laplacian(G, R, F):
    'A 5-point Laplacian stencil on a `width x height` grid; border cells copy through.'
    (p_grid, n_grid, p_out, n_out, s_width, s_height,) = R
    ret = FALSE  # lanes that returned
    # line 17: let
    v_x = G.gid_x
    # line 18: let
    v_y = G.gid_y
    # line 19: if
    _t1 = (v_x >= s_width)
    _t2 = (_t1 | (v_y >= s_height))
    m1 = rt.m_and(None, _t2)
    if rt.m_any(m1):
        # line 20: return
        ret = rt.f_or(ret, m1)
    m2 = rt.m_exit(None, ret)
    # line 22: let
    v_i = ((v_y * s_width) + v_x)
    # line 23: if
    _t3 = (v_x == U0)
    _t4 = (_t3 | (v_y == U0))
    _t5 = (_t4 | (v_x == (s_width - U1)))
    _t6 = (_t5 | (v_y == (s_height - U1)))
    m3 = rt.m_and(m2, _t6)
    m4 = rt.m_andnot(m2, _t6)
    if rt.m_any(m3):
        # line 24: store
        _t7 = rt.ld(p_grid, v_i, (F, 0, m3, ()))
        rt.st(p_out, v_i, _t7, m3, (F, 1, m3, ()))
    if rt.m_any(m4):
        # line 26: let
        _t8 = ((rt.ld(p_grid, (v_i - U1), (F, 2, m4, ())) + rt.ld(p_grid, (v_i + U1), (F, 3, m4, ()))) + rt.ld(p_grid, (v_i - s_width), (F, 4, m4, ())))
        v_around = (_t8 + rt.ld(p_grid, (v_i + s_width), (F, 5, m4, ())))
        # line 27: store
        _t9 = (v_around - (F4_0 * rt.ld(p_grid, v_i, (F, 6, m4, ()))))
        rt.st(p_out, v_i, _t9, m4, (F, 7, m4, ()))
