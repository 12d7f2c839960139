# goldy-import CPU kernel `clamp_inplace` from 'rust_examples/gated_mlp.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.



def k_clamp_inplace(G, R, F):
    '`y = clamp(y, -limit, limit)` in place.'
    (p_y, n_y, s_n, s_limit,) = R
    # line 30: let
    # v_i is global_id().x: G.gid_x
    # line 31: if
    _t1 = rt.cmp_lin(G, s_n, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 32: store
        rt.st_lin(p_y, G, rt.fclamp(rt.ld_lin(p_y, G, (F, 0, m1, ())), (-s_limit), s_limit), m1, (F, 1, m1, ()))
