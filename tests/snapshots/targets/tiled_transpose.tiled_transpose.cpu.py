# goldy-import CPU kernel `tiled_transpose` from 'rust_examples/tiled_transpose.rs' (generated code).
# Runs workgroups of 16x16x1 threads as a (W, S) lane grid; masks: None = all lanes.

U16 = np.uint32(16)
U17 = np.uint32(17)


def k_tiled_transpose(G, R, F):
    'out[c * rows + r] = input[r * cols + c] for a row-major `rows x cols` matrix, through a\n16 x 16 tile in workgroup memory: each workgroup reads a tile along rows of `input`\nand writes it along rows of `out`, so both sides touch consecutive addresses.\nThe tile has 17 columns so that a column of it spans all memory banks.\nLaunched with `groups((ceil(cols / 16), ceil(rows / 16), 1))`.'
    (p_input, n_input, p_out, n_out, s_rows, s_cols,) = R
    w_tile = G.wg_array(0, 272, np.float32)  # one row per workgroup
    # line 11: let
    v_tx = G.lid_x
    # line 12: let
    v_ty = G.lid_y
    # line 13: let
    v_col0 = (G.wgid_x * U16)
    # line 14: let
    v_row0 = (G.wgid_y * U16)
    # line 16: if
    _t1 = ((v_row0 + v_ty) < s_rows)
    _t2 = (_t1 & ((v_col0 + v_tx) < s_cols))
    m1 = rt.m_and(None, _t2)
    if rt.m_any(m1):
        # line 17: store
        _t3 = rt.ld(p_input, ((((v_row0 + v_ty) * s_cols) + v_col0) + v_tx), (F, 0, m1, ()))
        rt.st_w(w_tile, G, ((v_ty * U17) + v_tx), _t3, m1, (F, 1, m1, ()))
    # line 20: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
    # line 22: if
    _t4 = ((v_col0 + v_ty) < s_cols)
    _t5 = (_t4 & ((v_row0 + v_tx) < s_rows))
    m2 = rt.m_and(None, _t5)
    if rt.m_any(m2):
        # line 23: store
        _t6 = rt.ld_w(w_tile, G, ((v_tx * U17) + v_ty), (F, 2, m2, ()))
        rt.st(p_out, ((((v_col0 + v_ty) * s_rows) + v_row0) + v_tx), _t6, m2, (F, 3, m2, ()))
