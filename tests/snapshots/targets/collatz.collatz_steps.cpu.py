# goldy-import CPU kernel `collatz_steps` from 'rust_examples/collatz.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U0 = np.uint32(0)
U1 = np.uint32(1)
U2 = np.uint32(2)
U3 = np.uint32(3)


def k_collatz_steps(G, R, F):
    'Steps for each start value to reach 1 under the Collatz map, capped at `limit`:\nper-thread trip counts, `break`, `continue` and an early `return`.'
    (p_starts, n_starts, p_steps, n_steps, s_limit,) = R
    ret = FALSE  # lanes that returned
    # line 7: let
    # v_i is global_id().x: G.gid_x
    # line 8: if
    _t1 = rt.cmp_lin(G, n_starts, 'ge')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 9: return
        ret = rt.f_or(ret, m1)
    m2 = rt.m_exit(None, ret)
    # line 11: let
    v_n = rt.ld_lin(p_starts, G)
    # line 12: if
    _t2 = (v_n == U0)
    m3 = rt.m_and(m2, _t2)
    if rt.m_any(m3):
        # line 13: store
        rt.st_lin(p_steps, G, U0, m3, (F, 0, m3, ()))
        # line 14: return
        ret = rt.f_or(ret, m3)
    m4 = rt.m_exit(m2, ret)
    # line 16: let
    v_count = U0
    # line 17: loop
    m5 = m4
    brk1 = FALSE
    while True:
        if not rt.m_any(m5):
            break
        cont1 = FALSE
        m6 = m5
        # line 18: if
        _t3 = (v_n == U1)
        _t4 = (_t3 | (v_count >= s_limit))
        m7 = rt.m_and(m6, _t4)
        if rt.m_any(m7):
            # line 19: break
            brk1 = rt.f_or(brk1, m7)
        m8 = rt.m_exit(m6, brk1)
        # line 21: assign
        v_count = rt.sel(m8, (v_count + U1), v_count)
        # line 22: if
        _t5 = (rt.urem(v_n, U2) == U0)
        m9 = rt.m_and(m8, _t5)
        if rt.m_any(m9):
            # line 23: assign
            v_n = rt.sel(m9, rt.udiv(v_n, U2), v_n)
            # line 24: continue
            cont1 = rt.f_or(cont1, m9)
        m10 = rt.m_exit(m8, cont1)
        # line 26: assign
        v_n = rt.sel(m10, ((U3 * v_n) + U1), v_n)
        m5 = rt.m_exit(m5, brk1)
    # line 28: store
    rt.st_lin(p_steps, G, v_count, m4, (F, 1, m4, ()))
