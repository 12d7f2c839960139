# goldy-import CPU kernel `scale_bias` from 'rust_examples/poot_elementwise.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U0 = np.uint32(0)
U1 = np.uint32(1)
U256 = np.uint32(256)


def k_scale_bias(G, R, F):
    'out[i] = x[i] * scale + bias, with the scale and bias packed as bits in a metadata\nbuffer and an addition no backend may fuse into an FMA.'
    (p_x, n_x, p_meta, n_meta, p_out, n_out,) = R
    # line 19: let
    v_WORKGROUP_SIZE = U256
    # line 20: let
    # v_i is global_id().x: G.gid_x
    # line 21: if
    _t1 = rt.cmp_lin(G, n_x, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 22: let
        v_scale = rt.from_bits(rt.ld(p_meta, U0, (F, 0, m1, ())))
        # line 23: let
        v_bias = rt.from_bits(rt.ld(p_meta, U1, (F, 1, m1, ())))
        # line 24: store
        rt.st_lin(p_out, G, ((rt.ld_lin(p_x, G) * v_scale) + v_bias), m1, (F, 2, m1, ()))
