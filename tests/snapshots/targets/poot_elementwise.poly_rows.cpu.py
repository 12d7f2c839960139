# goldy-import CPU kernel `poly_rows` from 'rust_examples/poot_elementwise.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
F1_0 = np.float32(1.0)
U0 = np.uint32(0)
U1 = np.uint32(1)


def k_poly_rows(G, R, F):
    "A polynomial per element of a row-major `rows x n` matrix: the rows along the grid's\nY workgroups, the columns along X. out = c[0] + c[1] x + c[2] x^2 + ..."
    (p_x, n_x, p_coeffs, n_coeffs, p_out, n_out, s_n,) = R
    # line 32: let
    v_row = G.wgid_y
    # line 33: let
    # v_col is global_id().x: G.gid_x
    # line 34: if
    _t1 = rt.cmp_lin(G, s_n, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 35: let
        v_v = rt.ld(p_x, ((v_row * s_n) + G.gid_x), (F, 0, m1, ()))
        # line 36: let
        v_acc = F0_0
        # line 37: let
        v_power = F1_0
        # line 38: for
        _t2 = n_coeffs
        v__k = U0
        m2 = rt.m_and(m1, v__k < _t2)
        while True:
            if not rt.m_any(m2):
                break
            m3 = m2
            # line 38: let
            v_c = rt.ld(p_coeffs, v__k)
            # line 39: assign
            v_acc = rt.sel(m3, (v_acc + (v_c * v_power)), v_acc)
            # line 40: assign
            v_power = rt.sel(m3, (v_power * v_v), v_power)
            v__k = rt.sel(m2, v__k + U1, v__k)
            m2 = rt.m_and(m2, v__k < _t2)
        # line 42: store
        _t3 = v_acc
        rt.st(p_out, ((v_row * s_n) + G.gid_x), _t3, m1, (F, 1, m1, ()))
