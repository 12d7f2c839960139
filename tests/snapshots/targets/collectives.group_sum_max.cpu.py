# goldy-import CPU kernel `group_sum_max` from 'rust_examples/collectives.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
Fminf = np.float32('-inf')
U0 = np.uint32(0)


def k_group_sum_max(G, R, F):
    "Per-workgroup sum and maximum with the dialect's collectives: the same\npairwise tree on every backend, so float sums agree bit for bit."
    (p_input, n_input, p_sums, n_sums, p_maxes, n_maxes,) = R
    w_scratch = G.wg_array(0, 256, np.float32)  # one row per workgroup
    # line 8: let
    # v_i is global_id().x: G.gid_x
    # line 9: let
    v_v = F0_0
    # line 10: let
    v_m = Fminf
    # line 11: if
    _t1 = rt.cmp_lin(G, n_input, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 12: assign
        v_v = rt.sel(m1, rt.ld_lin(p_input, G), v_v)
        # line 13: assign
        v_m = rt.sel(m1, rt.ld_lin(p_input, G), v_m)
    # line 15: let
    v_total = F0_0
    # line 15: reduce
    _t2 = rt.reduce(w_scratch, G, 256, v_v, None, np.add, False)
    v_total = _t2
    # line 16: let
    v_biggest = F0_0
    # line 16: reduce
    _t3 = rt.reduce(w_scratch, G, 256, v_m, None, np.fmax, False)
    v_biggest = _t3
    # line 17: if
    _t4 = (G.lid_x == U0)
    m2 = rt.m_and(None, _t4)
    if rt.m_any(m2):
        # line 18: let
        v_g = G.wgid_x
        # line 19: store
        _t5 = v_total
        rt.st(p_sums, v_g, _t5, m2, (F, 0, m2, ()))
        # line 20: store
        _t6 = v_biggest
        rt.st(p_maxes, v_g, _t6, m2, (F, 1, m2, ()))
