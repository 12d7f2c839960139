# goldy-import CPU kernel `elementwise_add` from 'rust_examples/poot_elementwise.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.



def k_elementwise_add(G, R, F):
    'out[i] = a[i] + b[i]'
    (p_a, n_a, p_b, n_b, p_out, n_out,) = R
    # line 9: let
    # v_i is global_id().x: G.gid_x
    # line 10: if
    _t1 = rt.cmp_lin(G, n_out, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 11: store
        rt.st_lin(p_out, G, (rt.ld_lin(p_a, G, (F, 0, m1, ())) + rt.ld_lin(p_b, G, (F, 1, m1, ()))), m1)
