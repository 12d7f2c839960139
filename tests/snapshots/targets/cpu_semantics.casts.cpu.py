# goldy-import CPU kernel `casts` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U1 = np.uint32(1)
U2 = np.uint32(2)


def k_casts(G, R, F):
    (p_f, n_f, p_n, n_n, p_to_i, n_to_i, p_to_u, n_to_u, p_to_f, n_to_f,) = R
    # line 64: let
    # v_i is global_id().x: G.gid_x
    # line 65: if
    _t1 = rt.cmp_lin(G, n_f, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 66: store
        rt.st_lin(p_to_i, G, rt.f2i(rt.ld_lin(p_f, G)), m1, (F, 0, m1, ()))
        # line 67: store
        rt.st_lin(p_to_u, G, rt.f2u(rt.ld_lin(p_f, G)), m1, (F, 1, m1, ()))
        # line 68: store
        _t2 = rt.i2f(rt.ld_lin(p_n, G, (F, 2, m1, ())))
        rt.st(p_to_f, (U2 * G.gid_x), _t2, m1, (F, 3, m1, ()))
        # line 69: store
        _t3 = rt.u2f(rt.ld_lin(p_n, G, (F, 4, m1, ())).astype(np.uint32))
        rt.st(p_to_f, ((U2 * G.gid_x) + U1), _t3, m1, (F, 5, m1, ()))
