# goldy-import CPU kernel `hist2d` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 8x4x1 threads as a (W, S) lane grid; masks: None = all lanes.

I1000000000 = np.int32(1000000000)
U0 = np.uint32(0)


def k_hist2d(G, R, F):
    'Atomics from a 2-D grid of 2-D workgroups: thread order interleaves workgroups.'
    (p_values, n_values, s_width, p_bins, n_bins, p_olds, n_olds, p_total, n_total,) = R
    # line 284: let
    v_g_x = G.gid_x
    v_g_y = G.gid_y
    v_g_z = G.gid_z
    # line 285: let
    v_i = ((v_g_y * s_width) + v_g_x)
    # line 286: if
    _t1 = (v_g_x < s_width)
    _t2 = (_t1 & (v_i < n_values))
    m1 = rt.m_and(None, _t2)
    if rt.m_any(m1):
        # line 287: let
        v_old = U0
        # line 287: atomicadd
        _t3 = rt.atomic_add(p_bins, G, rt.urem(rt.ld(p_values, v_i), n_bins, (F, 0, m1, ())), rt.ld(p_values, v_i), m1, True, (F, 1, m1, ()))
        v_old = rt.sel(m1, _t3, v_old)
        # line 288: store
        _t4 = v_old
        rt.st(p_olds, v_i, _t4, m1, (F, 2, m1, ()))
        # line 289: atomicadd
        rt.atomic_add(p_total, G, U0, (rt.ld(p_values, v_i).astype(np.int32) - I1000000000), m1, False, (F, 3, m1, ()))
