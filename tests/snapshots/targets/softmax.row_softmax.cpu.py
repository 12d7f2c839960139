# goldy-import CPU kernel `row_softmax` from 'rust_examples/softmax.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.



def k_row_softmax(G, R, F):
    'Numerically stable softmax of each row of a `rows x cols` matrix (cols <= 256),\none workgroup per row: `groups((rows, 1, 1))`.'
    (p_x, n_x, s_cols,) = R
    w_scratch = G.wg_array(0, 256, np.float32)  # one row per workgroup
    # line 8: let
    v_row = G.wgid_x
    # line 9: softmax
    rt.softmax(p_x, rt.ld, rt.st, w_scratch, G, 256, (v_row * s_cols), s_cols, None, False)
