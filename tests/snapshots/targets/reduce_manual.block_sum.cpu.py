# goldy-import CPU kernel `block_sum` from 'rust_examples/reduce_manual.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
I1 = np.int32(1)
U0 = np.uint32(0)
U128 = np.uint32(128)


def k_block_sum(G, R, F):
    'Sum of each block of 256 elements, written out by hand: a workgroup array,\nbarriers, and a halving tree (lane l adds lane l + stride).'
    (p_input, n_input, p_sums, n_sums,) = R
    w_scratch = G.wg_array(0, 256, np.float32)  # one row per workgroup
    # line 8: let
    # v_lid is local_id().x: G.lid_x
    # line 9: let
    # v_i is global_id().x: G.gid_x
    # line 10: let
    v_v = F0_0
    # line 11: if
    _t1 = rt.cmp_lin(G, n_input, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 12: assign
        v_v = rt.sel(m1, rt.ld_lin(p_input, G), v_v)
    # line 14: store
    rt.st_w_lid(w_scratch, G, v_v, None)
    # line 15: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
    # line 16: let
    v_stride = U128
    # line 17: while
    m2 = None
    while True:
        m2 = rt.m_and(m2, (v_stride > U0))
        if not rt.m_any(m2):
            break
        m3 = m2
        # line 18: if
        _t2 = (G.lid_x < v_stride)
        m4 = rt.m_and(m3, _t2)
        if rt.m_any(m4):
            # line 19: store
            rt.st_w_lid(w_scratch, G, (rt.ld_w_lid(w_scratch, G) + rt.ld_w(w_scratch, G, (G.lid_x + v_stride), (F, 0, m4, ()))), m4)
        # line 21: barrier
        pass  # workgroup_barrier: statements run in lock step, writes are visible
        # line 22: assign
        v_stride = rt.sel(m3, rt.shr_u32(v_stride, I1), v_stride)
    # line 24: if
    _t3 = (G.lid_x == U0)
    m5 = rt.m_and(None, _t3)
    if rt.m_any(m5):
        # line 25: store
        _t4 = rt.ld_w(w_scratch, G, U0)
        rt.st(p_sums, G.wgid_x, _t4, m5, (F, 1, m5, ()))
