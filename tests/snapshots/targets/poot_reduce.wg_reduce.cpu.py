# goldy-import CPU kernel `wg_reduce` from 'rust_examples/poot_reduce.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
U0 = np.uint32(0)
U1 = np.uint32(1)
U64 = np.uint32(64)


def k_wg_reduce(G, R, F):
    "out[g] = the sum of workgroup g's 64 inputs, added left to right by lane 0 (poot's\n`wg_reduce`, over a whole array: inputs past the end count as 0)."
    (p_a, n_a, p_out, n_out,) = R
    w_lds0 = G.wg_array(0, 1024, np.float32)  # one row per workgroup
    # line 9: let
    v_WORKGROUP_SIZE = U64
    # line 10: let
    # v_lane is local_id().x: G.lid_x
    # line 11: let
    # v_i is global_id().x: G.gid_x
    # line 12: let
    v_v = F0_0
    # line 13: if
    _t1 = rt.cmp_lin(G, n_a, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 14: assign
        v_v = rt.sel(m1, rt.ld_lin(p_a, G), v_v)
    # line 16: store
    rt.st_w_lid(w_lds0, G, v_v, None)
    # line 17: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
    # line 18: if
    _t2 = (G.lid_x == U0)
    m2 = rt.m_and(None, _t2)
    if rt.m_any(m2):
        # line 19: let
        v_acc = F0_0
        # line 20: for
        _t3 = v_WORKGROUP_SIZE
        v_j = U0
        m3 = rt.m_and(m2, v_j < _t3)
        while True:
            if not rt.m_any(m3):
                break
            m4 = m3
            # line 21: assign
            v_acc = rt.sel(m4, (v_acc + rt.ld_w(w_lds0, G, v_j, (F, 0, m4, ()))), v_acc)
            v_j = rt.sel(m3, v_j + U1, v_j)
            m3 = rt.m_and(m3, v_j < _t3)
        # line 23: store
        _t4 = v_acc
        rt.st(p_out, G.wgid_x, _t4, m2, (F, 1, m2, ()))
