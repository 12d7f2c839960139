# goldy-import CPU kernel `saxpy` from 'rust_examples/saxpy.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.



def k_saxpy(G, R, F):
    'y = a * x + y, one element per thread.'
    (p_x, n_x, p_y, n_y, s_a,) = R
    # line 6: let
    # v_i is global_id().x: G.gid_x
    # line 7: if
    _t1 = rt.cmp_lin(G, n_y, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 8: store
        rt.st_lin(p_y, G, ((s_a * rt.ld_lin(p_x, G, (F, 0, m1, ()))) + rt.ld_lin(p_y, G)), m1)
