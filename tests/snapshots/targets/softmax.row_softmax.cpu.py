# goldy-import CPU kernel `row_softmax` from 'rust_examples/softmax.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
Fm1e30 = np.float32(-1e+30)
U0 = np.uint32(0)
U1 = np.uint32(1)
U255 = np.uint32(255)
U256 = np.uint32(256)
U8 = np.uint32(8)


def k_row_softmax(G, R, F):
    'Numerically stable softmax of each row of a `rows x cols` matrix, one workgroup per\nrow: `groups((rows, 1, 1))`; rows longer than 256 are covered by each lane striding.'
    (p_x, n_x, s_cols,) = R
    w_scratch = G.wg_array(0, 256, np.float32)  # one row per workgroup
    # line 8: let
    v_row = G.wgid_x
    # line 9: let
    # v_softmax1_lane is local_id().x: G.lid_x
    # line 9: let
    v_softmax1_base = (v_row * s_cols)
    # line 9: let
    v_softmax1_count = s_cols
    # line 9: let
    v_softmax1_tiles = (rt.shr_u32(v_softmax1_count, U8) + np.where(((v_softmax1_count & U255) != U0), U1, U0))
    # line 9: let
    v_softmax1_x = Fm1e30
    # line 9: if
    _t1 = (G.lid_x < v_softmax1_count)
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 9: assign
        v_softmax1_x = rt.sel(m1, rt.ld(p_x, (v_softmax1_base + G.lid_x), (F, 0, m1, ())), v_softmax1_x)
    # line 9: let
    v_softmax1_lane_max = v_softmax1_x
    # line 9: for
    _t2 = v_softmax1_tiles
    v_softmax1_j = U1
    m2 = rt.m_and(None, v_softmax1_j < _t2)
    while True:
        if not rt.m_any(m2):
            break
        m3 = m2
        # line 9: if
        _t3 = (G.lid_x < (v_softmax1_count - (v_softmax1_j * U256)))
        m4 = rt.m_and(m3, _t3)
        if rt.m_any(m4):
            # line 9: let
            v_softmax1_t = ((v_softmax1_j * U256) + G.lid_x)
            # line 9: assign
            v_softmax1_lane_max = rt.sel(m4, rt.fmax(v_softmax1_lane_max, rt.ld(p_x, (v_softmax1_base + v_softmax1_t), (F, 1, m4, ()))), v_softmax1_lane_max)
        v_softmax1_j = rt.sel(m2, v_softmax1_j + U1, v_softmax1_j)
        m2 = rt.m_and(m2, v_softmax1_j < _t2)
    # line 9: let
    v_softmax1_max = F0_0
    # line 9: reduce
    _t4 = rt.reduce(w_scratch, G, 256, v_softmax1_lane_max, None, np.fmax, False)
    v_softmax1_max = _t4
    # line 9: let
    v_softmax1_e = F0_0
    # line 9: if
    _t5 = (G.lid_x < v_softmax1_count)
    m5 = rt.m_and(None, _t5)
    if rt.m_any(m5):
        # line 9: assign
        v_softmax1_e = rt.sel(m5, rt.on_lanes(m5, rt.exp, (v_softmax1_x - v_softmax1_max)), v_softmax1_e)
    # line 9: let
    v_softmax1_lane_sum = v_softmax1_e
    # line 9: for
    _t6 = v_softmax1_tiles
    v_softmax1_j_2 = U1
    m6 = rt.m_and(None, v_softmax1_j_2 < _t6)
    while True:
        if not rt.m_any(m6):
            break
        m7 = m6
        # line 9: if
        _t7 = (G.lid_x < (v_softmax1_count - (v_softmax1_j_2 * U256)))
        m8 = rt.m_and(m7, _t7)
        if rt.m_any(m8):
            # line 9: let
            v_softmax1_t_2 = ((v_softmax1_j_2 * U256) + G.lid_x)
            # line 9: assign
            _t8 = rt.on_lanes(m8, rt.exp, (rt.ld(p_x, (v_softmax1_base + v_softmax1_t_2), (F, 2, m8, ())) - v_softmax1_max))
            v_softmax1_lane_sum = rt.sel(m8, (v_softmax1_lane_sum + _t8), v_softmax1_lane_sum)
        v_softmax1_j_2 = rt.sel(m6, v_softmax1_j_2 + U1, v_softmax1_j_2)
        m6 = rt.m_and(m6, v_softmax1_j_2 < _t6)
    # line 9: let
    v_softmax1_sum = F0_0
    # line 9: reduce
    _t9 = rt.reduce(w_scratch, G, 256, v_softmax1_lane_sum, None, np.add, False)
    v_softmax1_sum = _t9
    # line 9: if
    _t10 = (G.lid_x < v_softmax1_count)
    m9 = rt.m_and(None, _t10)
    if rt.m_any(m9):
        # line 9: store
        _t11 = (v_softmax1_e / v_softmax1_sum)
        rt.st(p_x, (v_softmax1_base + G.lid_x), _t11, m9, (F, 3, m9, ()))
    # line 9: for
    _t12 = v_softmax1_tiles
    v_softmax1_j_3 = U1
    m10 = rt.m_and(None, v_softmax1_j_3 < _t12)
    while True:
        if not rt.m_any(m10):
            break
        m11 = m10
        # line 9: if
        _t13 = (G.lid_x < (v_softmax1_count - (v_softmax1_j_3 * U256)))
        m12 = rt.m_and(m11, _t13)
        if rt.m_any(m12):
            # line 9: let
            v_softmax1_t_3 = ((v_softmax1_j_3 * U256) + G.lid_x)
            # line 9: store
            _t14 = rt.on_lanes(m12, rt.exp, (rt.ld(p_x, (v_softmax1_base + v_softmax1_t_3), (F, 4, m12, ())) - v_softmax1_max))
            _t15 = (_t14 / v_softmax1_sum)
            rt.st(p_x, (v_softmax1_base + v_softmax1_t_3), _t15, m12, (F, 5, m12, ()))
        v_softmax1_j_3 = rt.sel(m10, v_softmax1_j_3 + U1, v_softmax1_j_3)
        m10 = rt.m_and(m10, v_softmax1_j_3 < _t12)
    # line 9: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
