# goldy-import CPU kernel `transpose` from 'rust_examples/transpose.rs' (generated code).
# Runs workgroups of 16x16x1 threads as a (W, S) lane grid; masks: None = all lanes.



def k_transpose(G, R, F):
    'out[c * rows + r] = input[r * cols + c] for a row-major `rows x cols` matrix.\nLaunched with `over_2d(cols, rows)`.'
    (p_input, n_input, p_out, n_out, s_rows, s_cols,) = R
    # line 7: let
    v_c = G.gid_x
    # line 8: let
    v_r = G.gid_y
    # line 9: if
    _t1 = (v_r < s_rows)
    _t2 = (_t1 & (v_c < s_cols))
    m1 = rt.m_and(None, _t2)
    if rt.m_any(m1):
        # line 10: store
        _t3 = rt.ld(p_input, ((v_r * s_cols) + v_c), (F, 0, m1, ()))
        rt.st(p_out, ((v_c * s_rows) + v_r), _t3, m1, (F, 1, m1, ()))
