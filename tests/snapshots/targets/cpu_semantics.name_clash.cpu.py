# goldy-import CPU kernel `name_clash` from 'tests/data/cpu_semantics.rs' (generated code).
# Runs workgroups of 32x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F100_0 = np.float32(100.0)
F10_0 = np.float32(10.0)
F1_0 = np.float32(1.0)
F2_0 = np.float32(2.0)
F5_0 = np.float32(5.0)


def k_name_clash(G, R, F):
    'Names that meet once vectors are split into components: `x` (vector: x_y is a lane) and `x_y`.'
    (p_out, n_out, s_x_x,) = R
    # line 364: let
    # v_i is global_id().x: G.gid_x
    # line 365: let
    v_x_x = F1_0
    v_x_y = F2_0
    # line 366: let
    v_x_y_2 = F5_0
    # line 367: if
    _t1 = rt.cmp_lin(G, n_out, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 368: store
        rt.st_lin(p_out, G, (((v_x_x + (v_x_y * F10_0)) + (v_x_y_2 * F100_0)) + s_x_x), m1)
