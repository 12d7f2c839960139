# goldy-import CPU kernel `checked` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 32x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U0 = np.uint32(0)
U1 = np.uint32(1)
U100 = np.uint32(100)
U1000000 = np.uint32(1000000)
U3 = np.uint32(3)
U64 = np.uint32(64)
U7 = np.uint32(7)


def k_checked(G, R, F):
    'Trapping checks: only lanes that really perform an access may fault.'
    (p_x, n_x, p_out, n_out, s_lim, s_d,) = R
    # line 388: let
    # v_i is global_id().x: G.gid_x
    # line 389: if
    _t1 = rt.cmp_lin(G, rt.ld(p_x, U0, (F, 0, None, ())), 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 390: store
        rt.st_lin(p_out, G, rt.ld_lin(p_x, G, (F, 1, m1, ())), m1, (F, 2, m1, ()))
    # line 392: if
    _t2 = rt.cmp_lin(G, s_lim, 'lt')
    _t3 = (_t2 & (rt.ld_lin(p_x, G, (F, 3, None, (_t2, ))) > U1000000))
    m2 = rt.m_and(None, _t3)
    if rt.m_any(m2):
        # line 393: store
        _t4 = U1
        rt.st(p_out, U0, _t4, m2, (F, 4, m2, ()))
    # line 395: let
    v_j = G.gid_x
    # line 396: while
    m3 = None
    while True:
        _t5 = (v_j < n_x)
        m3 = rt.m_and(m3, (_t5 & (rt.ld(p_x, v_j, (F, 5, m3, (_t5, ))) != U7)))
        if not rt.m_any(m3):
            break
        m4 = m3
        # line 397: assign
        v_j = rt.sel(m4, (v_j + U64), v_j)
    # line 399: if
    _t6 = (G.gid_x == U3)
    m5 = rt.m_and(None, _t6)
    if rt.m_any(m5):
        # line 400: store
        _t7 = rt.udiv(U100, s_d, (F, 6, m5, ()))
        rt.st(p_out, U1, _t7, m5, (F, 7, m5, ()))
