# goldy-import CPU kernel `histogram` from 'rust_examples/histogram.rs' (generated code).
# Runs workgroups of 128x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U1 = np.uint32(1)


def k_histogram(G, R, F):
    'Histogram of byte values: each thread adds one to its bin with `atomic_add`.'
    (p_values, n_values, p_bins, n_bins,) = R
    # line 6: let
    # v_i is global_id().x: G.gid_x
    # line 7: if
    _t1 = rt.cmp_lin(G, n_values, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 8: let
        v_bin = rt.urem(rt.ld_lin(p_values, G), n_bins, (F, 0, m1, ()))
        # line 9: atomicadd
        rt.atomic_add(p_bins, G, v_bin, U1, m1, False, (F, 1, m1, ()))
