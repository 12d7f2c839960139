# goldy-import CPU kernel `checked_image` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 8x8x1 threads as a (W, S) lane grid; masks: None = all lanes.

U10 = np.uint32(10)


def k_checked_image(G, R, F):
    (p_img, iw_img, ih_img, p_out, n_out,) = R
    # line 406: let
    v_g_x = G.gid_x
    v_g_y = G.gid_y
    v_g_z = G.gid_z
    # line 407: if
    _t1 = (v_g_x < U10)
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 408: store
        (_t2,) = rt.ld_img(p_img[0:1], iw_img, ih_img, v_g_x, v_g_y, (F, 0, m1, ()))
        _t3 = _t2
        rt.st(p_out, ((v_g_y * U10) + v_g_x), _t3, m1, (F, 1, m1, ()))
