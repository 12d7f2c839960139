# goldy-import CPU kernel `rmsnorm` from 'rust_examples/rmsnorm.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
F1_0 = np.float32(1.0)
U1 = np.uint32(1)
U256 = np.uint32(256)


def k_rmsnorm(G, R, F):
    'RMS normalisation of each row of a `[rows, dim]` tensor:\n`out[r, c] = x[r, c] * weight[c] / sqrt(mean(x[r, :]^2) + eps)`.\nOne workgroup per row (`groups((rows, 1, 1))`); the shape contracts make a\nmismatched `weight` or `out` an error at record time, not a wrong answer.'
    (p_x, n_x, d_x, r_x, p_weight, n_weight, d_weight, r_weight, p_out, n_out, d_out, r_out, s_eps,) = R
    w_scratch = G.wg_array(0, 256, np.float32)  # one row per workgroup
    # line 15: let
    v_row = G.wgid_x
    # line 16: let
    # v_lid is local_id().x: G.lid_x
    # line 17: let
    v_dim = rt.tdim(d_x, U1)
    # line 18: let
    v_acc = F0_0
    # line 19: let
    v_c = G.lid_x
    # line 20: while
    m1 = None
    while True:
        m1 = rt.m_and(m1, (v_c < v_dim))
        if not rt.m_any(m1):
            break
        m2 = m1
        # line 21: let
        v_v = rt.ld_t(p_x, ((v_row * v_dim) + v_c), (F, 0, m2, ()))
        # line 22: assign
        v_acc = rt.sel(m2, (v_acc + (v_v * v_v)), v_acc)
        # line 23: assign
        v_c = rt.sel(m2, (v_c + U256), v_c)
    # line 25: let
    v_total = F0_0
    # line 25: reduce
    _t1 = rt.reduce(w_scratch, G, 256, v_acc, None, np.add, False)
    v_total = _t1
    # line 26: let
    v_inv = (F1_0 / np.sqrt(((v_total / rt.u2f(v_dim)) + s_eps)))
    # line 27: assign
    v_c = G.lid_x
    # line 28: while
    m3 = None
    while True:
        m3 = rt.m_and(m3, (v_c < v_dim))
        if not rt.m_any(m3):
            break
        m4 = m3
        # line 29: store
        _t2 = ((rt.ld_t(p_x, ((v_row * v_dim) + v_c), (F, 1, m4, ())) * v_inv) * rt.ld_t(p_weight, v_c, (F, 2, m4, ())))
        _t3 = _t2
        rt.st_t(p_out, ((v_row * v_dim) + v_c), _t3, m4, (F, 3, m4, ()))
        # line 30: assign
        v_c = rt.sel(m4, (v_c + U256), v_c)
