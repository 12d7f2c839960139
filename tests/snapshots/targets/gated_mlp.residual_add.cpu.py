# goldy-import CPU kernel `residual_add` from 'rust_examples/gated_mlp.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.



def k_residual_add(G, R, F):
    '`y = residual + alpha * h`.'
    (p_h, n_h, p_residual, n_residual, p_y, n_y, s_n, s_alpha,) = R
    # line 21: let
    # v_i is global_id().x: G.gid_x
    # line 22: if
    _t1 = rt.cmp_lin(G, s_n, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 23: store
        rt.st_lin(p_y, G, (rt.ld_lin(p_residual, G, (F, 0, m1, ())) + (s_alpha * rt.ld_lin(p_h, G, (F, 1, m1, ())))), m1, (F, 2, m1, ()))
