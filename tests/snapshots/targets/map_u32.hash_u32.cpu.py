# goldy-import CPU kernel `hash_u32` from 'rust_examples/map_u32.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

U15 = np.uint32(15)
U16 = np.uint32(16)
U2146121005 = np.uint32(2146121005)
U2221713035 = np.uint32(2221713035)


def k_hash_u32(G, R, F):
    'A 32-bit integer hash (xorshift-multiply) of every element: wrapping\narithmetic and logical shifts, exactly as Rust computes them.'
    (p_input, n_input, p_output, n_output, s_seed,) = R
    ret = FALSE  # lanes that returned
    # line 7: let
    # v_i is global_id().x: G.gid_x
    # line 8: if
    _t1 = rt.cmp_lin(G, n_output, 'ge')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 9: return
        ret = rt.f_or(ret, m1)
    m2 = rt.m_exit(None, ret)
    # line 11: let
    v_h = (rt.ld_lin(p_input, G, (F, 0, m2, ())) ^ s_seed)
    # line 12: assign
    v_h = rt.sel(m2, (v_h ^ rt.shr_u32(v_h, U16)), v_h)
    # line 13: assign
    v_h = rt.sel(m2, (v_h * U2146121005), v_h)
    # line 14: assign
    v_h = rt.sel(m2, (v_h ^ rt.shr_u32(v_h, U15)), v_h)
    # line 15: assign
    v_h = rt.sel(m2, (v_h * U2221713035), v_h)
    # line 16: assign
    v_h = rt.sel(m2, (v_h ^ rt.shr_u32(v_h, U16)), v_h)
    # line 17: store
    rt.st_lin(p_output, G, v_h, m2)
