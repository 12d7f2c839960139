# goldy-import CPU kernel `matmul` from 'rust_examples/matmul.rs' (generated code).
# Runs workgroups of 16x16x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
U0 = np.uint32(0)
U1 = np.uint32(1)
U15 = np.uint32(15)
U16 = np.uint32(16)


def k_matmul(G, R, F):
    'c = a * b for row-major f32 matrices a (m x k), b (k x n), c (m x n), with 16 x 16\ntiles of a and b staged in workgroup memory. Launched with\n`groups((ceil(n / 16), ceil(m / 16), 1))`; thread (tx, ty) of workgroup (gx, gy)\ncomputes c[16 gy + ty][16 gx + tx].\n\nProduct order (the same on every backend, so results agree bit for bit):\nacc starts at 0.0 and, for p = 0, 1, ..., k - 1 in order, becomes\n`acc + a[row][p] * b[p][col]`, the product and the sum each rounded to f32 (no fused\nmultiply-add). Tiles past the matrix edge hold zeros, and adding the product 0 leaves\n`acc` unchanged, so the padding does not change the result.'
    (p_a, n_a, p_b, n_b, p_c, n_c, s_m, s_n, s_k,) = R
    w_ta = G.wg_array(0, 256, np.float32)  # one row per workgroup
    w_tb = G.wg_array(1, 256, np.float32)  # one row per workgroup
    # line 17: let
    v_tx = G.lid_x
    # line 18: let
    v_ty = G.lid_y
    # line 19: let
    v_row = ((G.wgid_y * U16) + v_ty)
    # line 20: let
    v_col = ((G.wgid_x * U16) + v_tx)
    # line 21: let
    v_acc = F0_0
    # line 23: let
    v_tiles = rt.udiv((s_k + U15), U16)
    # line 24: for
    _t1 = v_tiles
    v_t = U0
    m1 = rt.m_and(None, v_t < _t1)
    while True:
        if not rt.m_any(m1):
            break
        m2 = m1
        # line 25: let
        v_ka = ((v_t * U16) + v_tx)
        # line 26: let
        v_kb = ((v_t * U16) + v_ty)
        # line 27: let
        v_va = F0_0
        # line 28: if
        _t2 = (v_row < s_m)
        _t3 = (_t2 & (v_ka < s_k))
        m3 = rt.m_and(m2, _t3)
        if rt.m_any(m3):
            # line 29: assign
            v_va = rt.sel(m3, rt.ld(p_a, ((v_row * s_k) + v_ka), (F, 0, m3, ())), v_va)
        # line 31: let
        v_vb = F0_0
        # line 32: if
        _t4 = (v_kb < s_k)
        _t5 = (_t4 & (v_col < s_n))
        m4 = rt.m_and(m2, _t5)
        if rt.m_any(m4):
            # line 33: assign
            v_vb = rt.sel(m4, rt.ld(p_b, ((v_kb * s_n) + v_col), (F, 1, m4, ())), v_vb)
        # line 35: store
        _t6 = v_va
        rt.st_w(w_ta, G, ((v_ty * U16) + v_tx), _t6, m2, (F, 2, m2, ()))
        # line 36: store
        _t7 = v_vb
        rt.st_w(w_tb, G, ((v_ty * U16) + v_tx), _t7, m2, (F, 3, m2, ()))
        # line 37: barrier
        pass  # workgroup_barrier: statements run in lock step, writes are visible
        # line 38: for
        _t8 = U16
        v_j = U0
        m5 = rt.m_and(m2, v_j < _t8)
        while True:
            if not rt.m_any(m5):
                break
            m6 = m5
            # line 39: assign
            _t9 = (rt.ld_w(w_ta, G, ((v_ty * U16) + v_j), (F, 4, m6, ())) * rt.ld_w(w_tb, G, ((v_j * U16) + v_tx), (F, 5, m6, ())))
            v_acc = rt.sel(m6, (v_acc + _t9), v_acc)
            v_j = rt.sel(m5, v_j + U1, v_j)
            m5 = rt.m_and(m5, v_j < _t8)
        # line 41: barrier
        pass  # workgroup_barrier: statements run in lock step, writes are visible
        v_t = rt.sel(m1, v_t + U1, v_t)
        m1 = rt.m_and(m1, v_t < _t1)
    # line 43: if
    _t10 = (v_row < s_m)
    _t11 = (_t10 & (v_col < s_n))
    m7 = rt.m_and(None, _t11)
    if rt.m_any(m7):
        # line 44: store
        _t12 = v_acc
        rt.st(p_c, ((v_row * s_n) + v_col), _t12, m7, (F, 6, m7, ()))
