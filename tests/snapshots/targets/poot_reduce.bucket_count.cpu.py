# goldy-import CPU kernel `bucket_count` from 'rust_examples/poot_reduce.rs' (generated code).
# Runs workgroups of 64x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
U1 = np.uint32(1)


def k_bucket_count(G, R, F):
    'counts[b] = how many inputs fall in bucket b of `counts.len()` equal buckets over [0, 1)\n(values outside land in the first or last bucket).'
    (p_xs, n_xs, p_counts, n_counts,) = R
    # line 31: let
    # v_i is global_id().x: G.gid_x
    # line 32: if
    _t1 = rt.cmp_lin(G, n_xs, 'lt')
    m1 = rt.m_and(None, _t1)
    if rt.m_any(m1):
        # line 33: let
        v_last = rt.u2f((n_counts - U1))
        # line 34: let
        v_bucket = rt.f2u(rt.fmin(rt.fmax(np.floor((rt.ld_lin(p_xs, G) * rt.u2f(n_counts))), F0_0), v_last))
        # line 35: atomicadd
        rt.atomic_add(p_counts, G, v_bucket, U1, m1, False, (F, 0, m1, ()))
