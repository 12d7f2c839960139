# goldy-import CPU kernel `matmul_fast` from 'rust_examples/matmul.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
Fm0_0 = np.float32(-0.0)
U0 = np.uint32(0)
U1 = np.uint32(1)
U1024 = np.uint32(1024)
U128 = np.uint32(128)
U16 = np.uint32(16)
U2 = np.uint32(2)
U3 = np.uint32(3)
U32 = np.uint32(32)
U4 = np.uint32(4)
U64 = np.uint32(64)
U65 = np.uint32(65)
U66 = np.uint32(66)
U67 = np.uint32(67)
U7 = np.uint32(7)
U8 = np.uint32(8)


def k_matmul_fast(G, R, F):
    "c = a * b like `matmul`, written for speed: each workgroup of 256 threads computes a\n128 x 128 block of c, each thread an 8 x 8 block of it in 64 scalar accumulators\n(rows 4 ty + i and 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j, i, j < 4, for\ntx = l % 16, ty = l / 16). Launched with `groups((ceil(n / 128), ceil(m / 128), 1))`.\nK advances 8 at a time through two buffers of workgroup memory each (double buffering:\nthe next 128 x 8 and 8 x 128 tiles are read from global memory while the current ones are\nmultiplied, one barrier per step); `at` holds a's tile transposed (at[kk * 128 + r] =\na[row0 + r][p0 + kk]) so that both inner-loop reads are four consecutive floats.\n\nProduct order (the same on every backend, so results agree bit for bit): acc starts at\n0.0 and, for p = 0, 1, ..., k - 1 in order, becomes `a[row][p].mul_add(b[p][col], acc)`,\nrounded once (fused multiply-add). Past the end of k a's tile holds -0.0 and b's 0.0:\ntheir product is -0.0 and `-0.0 + acc` is `acc` for every acc, so the padding does not\nchange the result (rows past m and columns past n are computed and not stored)."
    (p_a, n_a, p_b, n_b, p_c, n_c, s_m, s_n, s_k,) = R
    w_at = G.wg_array(0, 2048, np.float32)  # one row per workgroup
    w_bt = G.wg_array(1, 2048, np.float32)  # one row per workgroup
    # line 66: let
    # v_l is local_id().x: G.lid_x
    # line 67: let
    v_tx = rt.urem(G.lid_x, U16)
    # line 68: let
    v_ty = rt.udiv(G.lid_x, U16)
    # line 69: let
    v_row0 = (G.wgid_y * U128)
    # line 70: let
    v_col0 = (G.wgid_x * U128)
    # line 72: let
    v_ar = (v_row0 + rt.udiv(G.lid_x, U2))
    # line 73: let
    v_ak = (rt.urem(G.lid_x, U2) * U4)
    # line 74: let
    v_bk = rt.udiv(G.lid_x, U32)
    # line 75: let
    v_bc = (v_col0 + (rt.urem(G.lid_x, U32) * U4))
    # line 76: let
    v_c00 = F0_0
    # line 76: let
    v_c01 = F0_0
    # line 76: let
    v_c02 = F0_0
    # line 76: let
    v_c03 = F0_0
    # line 76: let
    v_c04 = F0_0
    # line 76: let
    v_c05 = F0_0
    # line 76: let
    v_c06 = F0_0
    # line 76: let
    v_c07 = F0_0
    # line 77: let
    v_c10 = F0_0
    # line 77: let
    v_c11 = F0_0
    # line 77: let
    v_c12 = F0_0
    # line 77: let
    v_c13 = F0_0
    # line 77: let
    v_c14 = F0_0
    # line 77: let
    v_c15 = F0_0
    # line 77: let
    v_c16 = F0_0
    # line 77: let
    v_c17 = F0_0
    # line 78: let
    v_c20 = F0_0
    # line 78: let
    v_c21 = F0_0
    # line 78: let
    v_c22 = F0_0
    # line 78: let
    v_c23 = F0_0
    # line 78: let
    v_c24 = F0_0
    # line 78: let
    v_c25 = F0_0
    # line 78: let
    v_c26 = F0_0
    # line 78: let
    v_c27 = F0_0
    # line 79: let
    v_c30 = F0_0
    # line 79: let
    v_c31 = F0_0
    # line 79: let
    v_c32 = F0_0
    # line 79: let
    v_c33 = F0_0
    # line 79: let
    v_c34 = F0_0
    # line 79: let
    v_c35 = F0_0
    # line 79: let
    v_c36 = F0_0
    # line 79: let
    v_c37 = F0_0
    # line 80: let
    v_c40 = F0_0
    # line 80: let
    v_c41 = F0_0
    # line 80: let
    v_c42 = F0_0
    # line 80: let
    v_c43 = F0_0
    # line 80: let
    v_c44 = F0_0
    # line 80: let
    v_c45 = F0_0
    # line 80: let
    v_c46 = F0_0
    # line 80: let
    v_c47 = F0_0
    # line 81: let
    v_c50 = F0_0
    # line 81: let
    v_c51 = F0_0
    # line 81: let
    v_c52 = F0_0
    # line 81: let
    v_c53 = F0_0
    # line 81: let
    v_c54 = F0_0
    # line 81: let
    v_c55 = F0_0
    # line 81: let
    v_c56 = F0_0
    # line 81: let
    v_c57 = F0_0
    # line 82: let
    v_c60 = F0_0
    # line 82: let
    v_c61 = F0_0
    # line 82: let
    v_c62 = F0_0
    # line 82: let
    v_c63 = F0_0
    # line 82: let
    v_c64 = F0_0
    # line 82: let
    v_c65 = F0_0
    # line 82: let
    v_c66 = F0_0
    # line 82: let
    v_c67 = F0_0
    # line 83: let
    v_c70 = F0_0
    # line 83: let
    v_c71 = F0_0
    # line 83: let
    v_c72 = F0_0
    # line 83: let
    v_c73 = F0_0
    # line 83: let
    v_c74 = F0_0
    # line 83: let
    v_c75 = F0_0
    # line 83: let
    v_c76 = F0_0
    # line 83: let
    v_c77 = F0_0
    # line 85: let
    v_va0 = Fm0_0
    # line 86: let
    v_va1 = Fm0_0
    # line 87: let
    v_va2 = Fm0_0
    # line 88: let
    v_va3 = Fm0_0
    # line 89: let
    v_vb0 = F0_0
    # line 90: let
    v_vb1 = F0_0
    # line 91: let
    v_vb2 = F0_0
    # line 92: let
    v_vb3 = F0_0
    # line 93: if
    _t1 = (v_ar < s_m)
    _t2 = (_t1 & (((U0 + v_ak) + U3) < s_k))
    _t3 = (_t2 & ((U0 + v_bk) < s_k))
    _t4 = (_t3 & ((v_bc + U3) < s_n))
    m1 = rt.m_and(None, _t4)
    m2 = rt.m_andnot(None, _t4)
    if rt.m_any(m1):
        # line 95: let
        v_ia = (((v_ar * s_k) + U0) + v_ak)
        # line 96: let
        v_ib = (((U0 + v_bk) * s_n) + v_bc)
        # line 97: assign
        v_va0 = rt.sel(m1, rt.ld(p_a, (v_ia + U0), (F, 0, m1, ())), v_va0)
        # line 98: assign
        v_va1 = rt.sel(m1, rt.ld(p_a, (v_ia + U1), (F, 1, m1, ())), v_va1)
        # line 99: assign
        v_va2 = rt.sel(m1, rt.ld(p_a, (v_ia + U2), (F, 2, m1, ())), v_va2)
        # line 100: assign
        v_va3 = rt.sel(m1, rt.ld(p_a, (v_ia + U3), (F, 3, m1, ())), v_va3)
        # line 101: assign
        v_vb0 = rt.sel(m1, rt.ld(p_b, (v_ib + U0), (F, 4, m1, ())), v_vb0)
        # line 102: assign
        v_vb1 = rt.sel(m1, rt.ld(p_b, (v_ib + U1), (F, 5, m1, ())), v_vb1)
        # line 103: assign
        v_vb2 = rt.sel(m1, rt.ld(p_b, (v_ib + U2), (F, 6, m1, ())), v_vb2)
        # line 104: assign
        v_vb3 = rt.sel(m1, rt.ld(p_b, (v_ib + U3), (F, 7, m1, ())), v_vb3)
    if rt.m_any(m2):
        # line 106: if
        _t5 = (v_ar < s_m)
        _t6 = (_t5 & (((U0 + v_ak) + U0) < s_k))
        m3 = rt.m_and(m2, _t6)
        if rt.m_any(m3):
            # line 106: assign
            v_va0 = rt.sel(m3, rt.ld(p_a, ((((v_ar * s_k) + U0) + v_ak) + U0), (F, 8, m3, ())), v_va0)
        # line 107: if
        _t7 = (v_ar < s_m)
        _t8 = (_t7 & (((U0 + v_ak) + U1) < s_k))
        m4 = rt.m_and(m2, _t8)
        if rt.m_any(m4):
            # line 107: assign
            v_va1 = rt.sel(m4, rt.ld(p_a, ((((v_ar * s_k) + U0) + v_ak) + U1), (F, 9, m4, ())), v_va1)
        # line 108: if
        _t9 = (v_ar < s_m)
        _t10 = (_t9 & (((U0 + v_ak) + U2) < s_k))
        m5 = rt.m_and(m2, _t10)
        if rt.m_any(m5):
            # line 108: assign
            v_va2 = rt.sel(m5, rt.ld(p_a, ((((v_ar * s_k) + U0) + v_ak) + U2), (F, 10, m5, ())), v_va2)
        # line 109: if
        _t11 = (v_ar < s_m)
        _t12 = (_t11 & (((U0 + v_ak) + U3) < s_k))
        m6 = rt.m_and(m2, _t12)
        if rt.m_any(m6):
            # line 109: assign
            v_va3 = rt.sel(m6, rt.ld(p_a, ((((v_ar * s_k) + U0) + v_ak) + U3), (F, 11, m6, ())), v_va3)
        # line 110: if
        _t13 = ((U0 + v_bk) < s_k)
        _t14 = (_t13 & ((v_bc + U0) < s_n))
        m7 = rt.m_and(m2, _t14)
        if rt.m_any(m7):
            # line 110: assign
            v_vb0 = rt.sel(m7, rt.ld(p_b, ((((U0 + v_bk) * s_n) + v_bc) + U0), (F, 12, m7, ())), v_vb0)
        # line 111: if
        _t15 = ((U0 + v_bk) < s_k)
        _t16 = (_t15 & ((v_bc + U1) < s_n))
        m8 = rt.m_and(m2, _t16)
        if rt.m_any(m8):
            # line 111: assign
            v_vb1 = rt.sel(m8, rt.ld(p_b, ((((U0 + v_bk) * s_n) + v_bc) + U1), (F, 13, m8, ())), v_vb1)
        # line 112: if
        _t17 = ((U0 + v_bk) < s_k)
        _t18 = (_t17 & ((v_bc + U2) < s_n))
        m9 = rt.m_and(m2, _t18)
        if rt.m_any(m9):
            # line 112: assign
            v_vb2 = rt.sel(m9, rt.ld(p_b, ((((U0 + v_bk) * s_n) + v_bc) + U2), (F, 14, m9, ())), v_vb2)
        # line 113: if
        _t19 = ((U0 + v_bk) < s_k)
        _t20 = (_t19 & ((v_bc + U3) < s_n))
        m10 = rt.m_and(m2, _t20)
        if rt.m_any(m10):
            # line 113: assign
            v_vb3 = rt.sel(m10, rt.ld(p_b, ((((U0 + v_bk) * s_n) + v_bc) + U3), (F, 15, m10, ())), v_vb3)
    # line 115: store
    _t21 = v_va0
    rt.st_w(w_at, G, (((v_ak + U0) * U128) + rt.udiv(G.lid_x, U2)), _t21, None, (F, 16, None, ()))
    # line 116: store
    _t22 = v_va1
    rt.st_w(w_at, G, (((v_ak + U1) * U128) + rt.udiv(G.lid_x, U2)), _t22, None, (F, 17, None, ()))
    # line 117: store
    _t23 = v_va2
    rt.st_w(w_at, G, (((v_ak + U2) * U128) + rt.udiv(G.lid_x, U2)), _t23, None, (F, 18, None, ()))
    # line 118: store
    _t24 = v_va3
    rt.st_w(w_at, G, (((v_ak + U3) * U128) + rt.udiv(G.lid_x, U2)), _t24, None, (F, 19, None, ()))
    # line 119: store
    _t25 = v_vb0
    rt.st_w(w_bt, G, (((v_bk * U128) + (rt.urem(G.lid_x, U32) * U4)) + U0), _t25, None, (F, 20, None, ()))
    # line 120: store
    _t26 = v_vb1
    rt.st_w(w_bt, G, (((v_bk * U128) + (rt.urem(G.lid_x, U32) * U4)) + U1), _t26, None, (F, 21, None, ()))
    # line 121: store
    _t27 = v_vb2
    rt.st_w(w_bt, G, (((v_bk * U128) + (rt.urem(G.lid_x, U32) * U4)) + U2), _t27, None, (F, 22, None, ()))
    # line 122: store
    _t28 = v_vb3
    rt.st_w(w_bt, G, (((v_bk * U128) + (rt.urem(G.lid_x, U32) * U4)) + U3), _t28, None, (F, 23, None, ()))
    # line 123: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
    # line 124: for
    _t29 = rt.udiv((s_k + U7), U8)
    v_t = U0
    m11 = rt.m_and(None, v_t < _t29)
    while True:
        if not rt.m_any(m11):
            break
        m12 = m11
        # line 125: let
        v_cur = (rt.urem(v_t, U2) * U1024)
        # line 127: let
        v_p1 = ((v_t * U8) + U8)
        # line 128: let
        v_va0_1 = Fm0_0
        # line 129: let
        v_va1_1 = Fm0_0
        # line 130: let
        v_va2_1 = Fm0_0
        # line 131: let
        v_va3_1 = Fm0_0
        # line 132: let
        v_vb0_1 = F0_0
        # line 133: let
        v_vb1_1 = F0_0
        # line 134: let
        v_vb2_1 = F0_0
        # line 135: let
        v_vb3_1 = F0_0
        # line 136: if
        _t30 = (v_ar < s_m)
        _t31 = (_t30 & (((v_p1 + v_ak) + U3) < s_k))
        _t32 = (_t31 & ((v_p1 + v_bk) < s_k))
        _t33 = (_t32 & ((v_bc + U3) < s_n))
        m13 = rt.m_and(m12, _t33)
        m14 = rt.m_andnot(m12, _t33)
        if rt.m_any(m13):
            # line 138: let
            v_ia_1 = (((v_ar * s_k) + v_p1) + v_ak)
            # line 139: let
            v_ib_1 = (((v_p1 + v_bk) * s_n) + v_bc)
            # line 140: assign
            v_va0_1 = rt.sel(m13, rt.ld(p_a, (v_ia_1 + U0), (F, 24, m13, ())), v_va0_1)
            # line 141: assign
            v_va1_1 = rt.sel(m13, rt.ld(p_a, (v_ia_1 + U1), (F, 25, m13, ())), v_va1_1)
            # line 142: assign
            v_va2_1 = rt.sel(m13, rt.ld(p_a, (v_ia_1 + U2), (F, 26, m13, ())), v_va2_1)
            # line 143: assign
            v_va3_1 = rt.sel(m13, rt.ld(p_a, (v_ia_1 + U3), (F, 27, m13, ())), v_va3_1)
            # line 144: assign
            v_vb0_1 = rt.sel(m13, rt.ld(p_b, (v_ib_1 + U0), (F, 28, m13, ())), v_vb0_1)
            # line 145: assign
            v_vb1_1 = rt.sel(m13, rt.ld(p_b, (v_ib_1 + U1), (F, 29, m13, ())), v_vb1_1)
            # line 146: assign
            v_vb2_1 = rt.sel(m13, rt.ld(p_b, (v_ib_1 + U2), (F, 30, m13, ())), v_vb2_1)
            # line 147: assign
            v_vb3_1 = rt.sel(m13, rt.ld(p_b, (v_ib_1 + U3), (F, 31, m13, ())), v_vb3_1)
        if rt.m_any(m14):
            # line 149: if
            _t34 = (v_ar < s_m)
            _t35 = (_t34 & (((v_p1 + v_ak) + U0) < s_k))
            m15 = rt.m_and(m14, _t35)
            if rt.m_any(m15):
                # line 149: assign
                v_va0_1 = rt.sel(m15, rt.ld(p_a, ((((v_ar * s_k) + v_p1) + v_ak) + U0), (F, 32, m15, ())), v_va0_1)
            # line 150: if
            _t36 = (v_ar < s_m)
            _t37 = (_t36 & (((v_p1 + v_ak) + U1) < s_k))
            m16 = rt.m_and(m14, _t37)
            if rt.m_any(m16):
                # line 150: assign
                v_va1_1 = rt.sel(m16, rt.ld(p_a, ((((v_ar * s_k) + v_p1) + v_ak) + U1), (F, 33, m16, ())), v_va1_1)
            # line 151: if
            _t38 = (v_ar < s_m)
            _t39 = (_t38 & (((v_p1 + v_ak) + U2) < s_k))
            m17 = rt.m_and(m14, _t39)
            if rt.m_any(m17):
                # line 151: assign
                v_va2_1 = rt.sel(m17, rt.ld(p_a, ((((v_ar * s_k) + v_p1) + v_ak) + U2), (F, 34, m17, ())), v_va2_1)
            # line 152: if
            _t40 = (v_ar < s_m)
            _t41 = (_t40 & (((v_p1 + v_ak) + U3) < s_k))
            m18 = rt.m_and(m14, _t41)
            if rt.m_any(m18):
                # line 152: assign
                v_va3_1 = rt.sel(m18, rt.ld(p_a, ((((v_ar * s_k) + v_p1) + v_ak) + U3), (F, 35, m18, ())), v_va3_1)
            # line 153: if
            _t42 = ((v_p1 + v_bk) < s_k)
            _t43 = (_t42 & ((v_bc + U0) < s_n))
            m19 = rt.m_and(m14, _t43)
            if rt.m_any(m19):
                # line 153: assign
                v_vb0_1 = rt.sel(m19, rt.ld(p_b, ((((v_p1 + v_bk) * s_n) + v_bc) + U0), (F, 36, m19, ())), v_vb0_1)
            # line 154: if
            _t44 = ((v_p1 + v_bk) < s_k)
            _t45 = (_t44 & ((v_bc + U1) < s_n))
            m20 = rt.m_and(m14, _t45)
            if rt.m_any(m20):
                # line 154: assign
                v_vb1_1 = rt.sel(m20, rt.ld(p_b, ((((v_p1 + v_bk) * s_n) + v_bc) + U1), (F, 37, m20, ())), v_vb1_1)
            # line 155: if
            _t46 = ((v_p1 + v_bk) < s_k)
            _t47 = (_t46 & ((v_bc + U2) < s_n))
            m21 = rt.m_and(m14, _t47)
            if rt.m_any(m21):
                # line 155: assign
                v_vb2_1 = rt.sel(m21, rt.ld(p_b, ((((v_p1 + v_bk) * s_n) + v_bc) + U2), (F, 38, m21, ())), v_vb2_1)
            # line 156: if
            _t48 = ((v_p1 + v_bk) < s_k)
            _t49 = (_t48 & ((v_bc + U3) < s_n))
            m22 = rt.m_and(m14, _t49)
            if rt.m_any(m22):
                # line 156: assign
                v_vb3_1 = rt.sel(m22, rt.ld(p_b, ((((v_p1 + v_bk) * s_n) + v_bc) + U3), (F, 39, m22, ())), v_vb3_1)
        # line 158: for
        _t50 = U8
        v_kk = U0
        m23 = rt.m_and(m12, v_kk < _t50)
        while True:
            if not rt.m_any(m23):
                break
            m24 = m23
            # line 159: let
            v_ia_2 = ((v_cur + (v_kk * U128)) + (v_ty * U4))
            # line 160: let
            v_ib_2 = ((v_cur + (v_kk * U128)) + (v_tx * U4))
            # line 161: let
            v_a0 = rt.ld_w(w_at, G, (v_ia_2 + U0), (F, 40, m24, ()))
            # line 162: let
            v_a1 = rt.ld_w(w_at, G, (v_ia_2 + U1), (F, 41, m24, ()))
            # line 163: let
            v_a2 = rt.ld_w(w_at, G, (v_ia_2 + U2), (F, 42, m24, ()))
            # line 164: let
            v_a3 = rt.ld_w(w_at, G, (v_ia_2 + U3), (F, 43, m24, ()))
            # line 165: let
            v_a4 = rt.ld_w(w_at, G, (v_ia_2 + U64), (F, 44, m24, ()))
            # line 166: let
            v_a5 = rt.ld_w(w_at, G, (v_ia_2 + U65), (F, 45, m24, ()))
            # line 167: let
            v_a6 = rt.ld_w(w_at, G, (v_ia_2 + U66), (F, 46, m24, ()))
            # line 168: let
            v_a7 = rt.ld_w(w_at, G, (v_ia_2 + U67), (F, 47, m24, ()))
            # line 169: let
            v_b0 = rt.ld_w(w_bt, G, (v_ib_2 + U0), (F, 48, m24, ()))
            # line 170: let
            v_b1 = rt.ld_w(w_bt, G, (v_ib_2 + U1), (F, 49, m24, ()))
            # line 171: let
            v_b2 = rt.ld_w(w_bt, G, (v_ib_2 + U2), (F, 50, m24, ()))
            # line 172: let
            v_b3 = rt.ld_w(w_bt, G, (v_ib_2 + U3), (F, 51, m24, ()))
            # line 173: let
            v_b4 = rt.ld_w(w_bt, G, (v_ib_2 + U64), (F, 52, m24, ()))
            # line 174: let
            v_b5 = rt.ld_w(w_bt, G, (v_ib_2 + U65), (F, 53, m24, ()))
            # line 175: let
            v_b6 = rt.ld_w(w_bt, G, (v_ib_2 + U66), (F, 54, m24, ()))
            # line 176: let
            v_b7 = rt.ld_w(w_bt, G, (v_ib_2 + U67), (F, 55, m24, ()))
            # line 177: assign
            v_c00 = rt.sel(m24, rt.fma(v_a0, v_b0, v_c00), v_c00)
            # line 177: assign
            v_c01 = rt.sel(m24, rt.fma(v_a0, v_b1, v_c01), v_c01)
            # line 177: assign
            v_c02 = rt.sel(m24, rt.fma(v_a0, v_b2, v_c02), v_c02)
            # line 177: assign
            v_c03 = rt.sel(m24, rt.fma(v_a0, v_b3, v_c03), v_c03)
            # line 178: assign
            v_c04 = rt.sel(m24, rt.fma(v_a0, v_b4, v_c04), v_c04)
            # line 178: assign
            v_c05 = rt.sel(m24, rt.fma(v_a0, v_b5, v_c05), v_c05)
            # line 178: assign
            v_c06 = rt.sel(m24, rt.fma(v_a0, v_b6, v_c06), v_c06)
            # line 178: assign
            v_c07 = rt.sel(m24, rt.fma(v_a0, v_b7, v_c07), v_c07)
            # line 179: assign
            v_c10 = rt.sel(m24, rt.fma(v_a1, v_b0, v_c10), v_c10)
            # line 179: assign
            v_c11 = rt.sel(m24, rt.fma(v_a1, v_b1, v_c11), v_c11)
            # line 179: assign
            v_c12 = rt.sel(m24, rt.fma(v_a1, v_b2, v_c12), v_c12)
            # line 179: assign
            v_c13 = rt.sel(m24, rt.fma(v_a1, v_b3, v_c13), v_c13)
            # line 180: assign
            v_c14 = rt.sel(m24, rt.fma(v_a1, v_b4, v_c14), v_c14)
            # line 180: assign
            v_c15 = rt.sel(m24, rt.fma(v_a1, v_b5, v_c15), v_c15)
            # line 180: assign
            v_c16 = rt.sel(m24, rt.fma(v_a1, v_b6, v_c16), v_c16)
            # line 180: assign
            v_c17 = rt.sel(m24, rt.fma(v_a1, v_b7, v_c17), v_c17)
            # line 181: assign
            v_c20 = rt.sel(m24, rt.fma(v_a2, v_b0, v_c20), v_c20)
            # line 181: assign
            v_c21 = rt.sel(m24, rt.fma(v_a2, v_b1, v_c21), v_c21)
            # line 181: assign
            v_c22 = rt.sel(m24, rt.fma(v_a2, v_b2, v_c22), v_c22)
            # line 181: assign
            v_c23 = rt.sel(m24, rt.fma(v_a2, v_b3, v_c23), v_c23)
            # line 182: assign
            v_c24 = rt.sel(m24, rt.fma(v_a2, v_b4, v_c24), v_c24)
            # line 182: assign
            v_c25 = rt.sel(m24, rt.fma(v_a2, v_b5, v_c25), v_c25)
            # line 182: assign
            v_c26 = rt.sel(m24, rt.fma(v_a2, v_b6, v_c26), v_c26)
            # line 182: assign
            v_c27 = rt.sel(m24, rt.fma(v_a2, v_b7, v_c27), v_c27)
            # line 183: assign
            v_c30 = rt.sel(m24, rt.fma(v_a3, v_b0, v_c30), v_c30)
            # line 183: assign
            v_c31 = rt.sel(m24, rt.fma(v_a3, v_b1, v_c31), v_c31)
            # line 183: assign
            v_c32 = rt.sel(m24, rt.fma(v_a3, v_b2, v_c32), v_c32)
            # line 183: assign
            v_c33 = rt.sel(m24, rt.fma(v_a3, v_b3, v_c33), v_c33)
            # line 184: assign
            v_c34 = rt.sel(m24, rt.fma(v_a3, v_b4, v_c34), v_c34)
            # line 184: assign
            v_c35 = rt.sel(m24, rt.fma(v_a3, v_b5, v_c35), v_c35)
            # line 184: assign
            v_c36 = rt.sel(m24, rt.fma(v_a3, v_b6, v_c36), v_c36)
            # line 184: assign
            v_c37 = rt.sel(m24, rt.fma(v_a3, v_b7, v_c37), v_c37)
            # line 185: assign
            v_c40 = rt.sel(m24, rt.fma(v_a4, v_b0, v_c40), v_c40)
            # line 185: assign
            v_c41 = rt.sel(m24, rt.fma(v_a4, v_b1, v_c41), v_c41)
            # line 185: assign
            v_c42 = rt.sel(m24, rt.fma(v_a4, v_b2, v_c42), v_c42)
            # line 185: assign
            v_c43 = rt.sel(m24, rt.fma(v_a4, v_b3, v_c43), v_c43)
            # line 186: assign
            v_c44 = rt.sel(m24, rt.fma(v_a4, v_b4, v_c44), v_c44)
            # line 186: assign
            v_c45 = rt.sel(m24, rt.fma(v_a4, v_b5, v_c45), v_c45)
            # line 186: assign
            v_c46 = rt.sel(m24, rt.fma(v_a4, v_b6, v_c46), v_c46)
            # line 186: assign
            v_c47 = rt.sel(m24, rt.fma(v_a4, v_b7, v_c47), v_c47)
            # line 187: assign
            v_c50 = rt.sel(m24, rt.fma(v_a5, v_b0, v_c50), v_c50)
            # line 187: assign
            v_c51 = rt.sel(m24, rt.fma(v_a5, v_b1, v_c51), v_c51)
            # line 187: assign
            v_c52 = rt.sel(m24, rt.fma(v_a5, v_b2, v_c52), v_c52)
            # line 187: assign
            v_c53 = rt.sel(m24, rt.fma(v_a5, v_b3, v_c53), v_c53)
            # line 188: assign
            v_c54 = rt.sel(m24, rt.fma(v_a5, v_b4, v_c54), v_c54)
            # line 188: assign
            v_c55 = rt.sel(m24, rt.fma(v_a5, v_b5, v_c55), v_c55)
            # line 188: assign
            v_c56 = rt.sel(m24, rt.fma(v_a5, v_b6, v_c56), v_c56)
            # line 188: assign
            v_c57 = rt.sel(m24, rt.fma(v_a5, v_b7, v_c57), v_c57)
            # line 189: assign
            v_c60 = rt.sel(m24, rt.fma(v_a6, v_b0, v_c60), v_c60)
            # line 189: assign
            v_c61 = rt.sel(m24, rt.fma(v_a6, v_b1, v_c61), v_c61)
            # line 189: assign
            v_c62 = rt.sel(m24, rt.fma(v_a6, v_b2, v_c62), v_c62)
            # line 189: assign
            v_c63 = rt.sel(m24, rt.fma(v_a6, v_b3, v_c63), v_c63)
            # line 190: assign
            v_c64 = rt.sel(m24, rt.fma(v_a6, v_b4, v_c64), v_c64)
            # line 190: assign
            v_c65 = rt.sel(m24, rt.fma(v_a6, v_b5, v_c65), v_c65)
            # line 190: assign
            v_c66 = rt.sel(m24, rt.fma(v_a6, v_b6, v_c66), v_c66)
            # line 190: assign
            v_c67 = rt.sel(m24, rt.fma(v_a6, v_b7, v_c67), v_c67)
            # line 191: assign
            v_c70 = rt.sel(m24, rt.fma(v_a7, v_b0, v_c70), v_c70)
            # line 191: assign
            v_c71 = rt.sel(m24, rt.fma(v_a7, v_b1, v_c71), v_c71)
            # line 191: assign
            v_c72 = rt.sel(m24, rt.fma(v_a7, v_b2, v_c72), v_c72)
            # line 191: assign
            v_c73 = rt.sel(m24, rt.fma(v_a7, v_b3, v_c73), v_c73)
            # line 192: assign
            v_c74 = rt.sel(m24, rt.fma(v_a7, v_b4, v_c74), v_c74)
            # line 192: assign
            v_c75 = rt.sel(m24, rt.fma(v_a7, v_b5, v_c75), v_c75)
            # line 192: assign
            v_c76 = rt.sel(m24, rt.fma(v_a7, v_b6, v_c76), v_c76)
            # line 192: assign
            v_c77 = rt.sel(m24, rt.fma(v_a7, v_b7, v_c77), v_c77)
            v_kk = rt.sel(m23, v_kk + U1, v_kk)
            m23 = rt.m_and(m23, v_kk < _t50)
        # line 194: store
        _t51 = v_va0_1
        rt.st_w(w_at, G, (((U1024 - v_cur) + ((v_ak + U0) * U128)) + rt.udiv(G.lid_x, U2)), _t51, m12, (F, 56, m12, ()))
        # line 195: store
        _t52 = v_va1_1
        rt.st_w(w_at, G, (((U1024 - v_cur) + ((v_ak + U1) * U128)) + rt.udiv(G.lid_x, U2)), _t52, m12, (F, 57, m12, ()))
        # line 196: store
        _t53 = v_va2_1
        rt.st_w(w_at, G, (((U1024 - v_cur) + ((v_ak + U2) * U128)) + rt.udiv(G.lid_x, U2)), _t53, m12, (F, 58, m12, ()))
        # line 197: store
        _t54 = v_va3_1
        rt.st_w(w_at, G, (((U1024 - v_cur) + ((v_ak + U3) * U128)) + rt.udiv(G.lid_x, U2)), _t54, m12, (F, 59, m12, ()))
        # line 198: store
        _t55 = v_vb0_1
        rt.st_w(w_bt, G, ((((U1024 - v_cur) + (v_bk * U128)) + (rt.urem(G.lid_x, U32) * U4)) + U0), _t55, m12, (F, 60, m12, ()))
        # line 199: store
        _t56 = v_vb1_1
        rt.st_w(w_bt, G, ((((U1024 - v_cur) + (v_bk * U128)) + (rt.urem(G.lid_x, U32) * U4)) + U1), _t56, m12, (F, 61, m12, ()))
        # line 200: store
        _t57 = v_vb2_1
        rt.st_w(w_bt, G, ((((U1024 - v_cur) + (v_bk * U128)) + (rt.urem(G.lid_x, U32) * U4)) + U2), _t57, m12, (F, 62, m12, ()))
        # line 201: store
        _t58 = v_vb3_1
        rt.st_w(w_bt, G, ((((U1024 - v_cur) + (v_bk * U128)) + (rt.urem(G.lid_x, U32) * U4)) + U3), _t58, m12, (F, 63, m12, ()))
        # line 202: barrier
        pass  # workgroup_barrier: statements run in lock step, writes are visible
        v_t = rt.sel(m11, v_t + U1, v_t)
        m11 = rt.m_and(m11, v_t < _t29)
    # line 205: let
    v_r0 = ((v_row0 + (v_ty * U4)) + U0)
    # line 206: let
    v_r1 = ((v_row0 + (v_ty * U4)) + U1)
    # line 207: let
    v_r2 = ((v_row0 + (v_ty * U4)) + U2)
    # line 208: let
    v_r3 = ((v_row0 + (v_ty * U4)) + U3)
    # line 209: let
    v_r4 = ((v_row0 + (v_ty * U4)) + U64)
    # line 210: let
    v_r5 = ((v_row0 + (v_ty * U4)) + U65)
    # line 211: let
    v_r6 = ((v_row0 + (v_ty * U4)) + U66)
    # line 212: let
    v_r7 = ((v_row0 + (v_ty * U4)) + U67)
    # line 213: let
    v_q0 = ((v_col0 + (v_tx * U4)) + U0)
    # line 214: let
    v_q1 = ((v_col0 + (v_tx * U4)) + U1)
    # line 215: let
    v_q2 = ((v_col0 + (v_tx * U4)) + U2)
    # line 216: let
    v_q3 = ((v_col0 + (v_tx * U4)) + U3)
    # line 217: let
    v_q4 = ((v_col0 + (v_tx * U4)) + U64)
    # line 218: let
    v_q5 = ((v_col0 + (v_tx * U4)) + U65)
    # line 219: let
    v_q6 = ((v_col0 + (v_tx * U4)) + U66)
    # line 220: let
    v_q7 = ((v_col0 + (v_tx * U4)) + U67)
    # line 221: if
    _t59 = (v_r0 < s_m)
    _t60 = (_t59 & (v_q0 < s_n))
    m25 = rt.m_and(None, _t60)
    if rt.m_any(m25):
        # line 221: store
        _t61 = v_c00
        rt.st(p_c, ((v_r0 * s_n) + v_q0), _t61, m25, (F, 64, m25, ()))
    # line 222: if
    _t62 = (v_r0 < s_m)
    _t63 = (_t62 & (v_q1 < s_n))
    m26 = rt.m_and(None, _t63)
    if rt.m_any(m26):
        # line 222: store
        _t64 = v_c01
        rt.st(p_c, ((v_r0 * s_n) + v_q1), _t64, m26, (F, 65, m26, ()))
    # line 223: if
    _t65 = (v_r0 < s_m)
    _t66 = (_t65 & (v_q2 < s_n))
    m27 = rt.m_and(None, _t66)
    if rt.m_any(m27):
        # line 223: store
        _t67 = v_c02
        rt.st(p_c, ((v_r0 * s_n) + v_q2), _t67, m27, (F, 66, m27, ()))
    # line 224: if
    _t68 = (v_r0 < s_m)
    _t69 = (_t68 & (v_q3 < s_n))
    m28 = rt.m_and(None, _t69)
    if rt.m_any(m28):
        # line 224: store
        _t70 = v_c03
        rt.st(p_c, ((v_r0 * s_n) + v_q3), _t70, m28, (F, 67, m28, ()))
    # line 225: if
    _t71 = (v_r0 < s_m)
    _t72 = (_t71 & (v_q4 < s_n))
    m29 = rt.m_and(None, _t72)
    if rt.m_any(m29):
        # line 225: store
        _t73 = v_c04
        rt.st(p_c, ((v_r0 * s_n) + v_q4), _t73, m29, (F, 68, m29, ()))
    # line 226: if
    _t74 = (v_r0 < s_m)
    _t75 = (_t74 & (v_q5 < s_n))
    m30 = rt.m_and(None, _t75)
    if rt.m_any(m30):
        # line 226: store
        _t76 = v_c05
        rt.st(p_c, ((v_r0 * s_n) + v_q5), _t76, m30, (F, 69, m30, ()))
    # line 227: if
    _t77 = (v_r0 < s_m)
    _t78 = (_t77 & (v_q6 < s_n))
    m31 = rt.m_and(None, _t78)
    if rt.m_any(m31):
        # line 227: store
        _t79 = v_c06
        rt.st(p_c, ((v_r0 * s_n) + v_q6), _t79, m31, (F, 70, m31, ()))
    # line 228: if
    _t80 = (v_r0 < s_m)
    _t81 = (_t80 & (v_q7 < s_n))
    m32 = rt.m_and(None, _t81)
    if rt.m_any(m32):
        # line 228: store
        _t82 = v_c07
        rt.st(p_c, ((v_r0 * s_n) + v_q7), _t82, m32, (F, 71, m32, ()))
    # line 229: if
    _t83 = (v_r1 < s_m)
    _t84 = (_t83 & (v_q0 < s_n))
    m33 = rt.m_and(None, _t84)
    if rt.m_any(m33):
        # line 229: store
        _t85 = v_c10
        rt.st(p_c, ((v_r1 * s_n) + v_q0), _t85, m33, (F, 72, m33, ()))
    # line 230: if
    _t86 = (v_r1 < s_m)
    _t87 = (_t86 & (v_q1 < s_n))
    m34 = rt.m_and(None, _t87)
    if rt.m_any(m34):
        # line 230: store
        _t88 = v_c11
        rt.st(p_c, ((v_r1 * s_n) + v_q1), _t88, m34, (F, 73, m34, ()))
    # line 231: if
    _t89 = (v_r1 < s_m)
    _t90 = (_t89 & (v_q2 < s_n))
    m35 = rt.m_and(None, _t90)
    if rt.m_any(m35):
        # line 231: store
        _t91 = v_c12
        rt.st(p_c, ((v_r1 * s_n) + v_q2), _t91, m35, (F, 74, m35, ()))
    # line 232: if
    _t92 = (v_r1 < s_m)
    _t93 = (_t92 & (v_q3 < s_n))
    m36 = rt.m_and(None, _t93)
    if rt.m_any(m36):
        # line 232: store
        _t94 = v_c13
        rt.st(p_c, ((v_r1 * s_n) + v_q3), _t94, m36, (F, 75, m36, ()))
    # line 233: if
    _t95 = (v_r1 < s_m)
    _t96 = (_t95 & (v_q4 < s_n))
    m37 = rt.m_and(None, _t96)
    if rt.m_any(m37):
        # line 233: store
        _t97 = v_c14
        rt.st(p_c, ((v_r1 * s_n) + v_q4), _t97, m37, (F, 76, m37, ()))
    # line 234: if
    _t98 = (v_r1 < s_m)
    _t99 = (_t98 & (v_q5 < s_n))
    m38 = rt.m_and(None, _t99)
    if rt.m_any(m38):
        # line 234: store
        _t100 = v_c15
        rt.st(p_c, ((v_r1 * s_n) + v_q5), _t100, m38, (F, 77, m38, ()))
    # line 235: if
    _t101 = (v_r1 < s_m)
    _t102 = (_t101 & (v_q6 < s_n))
    m39 = rt.m_and(None, _t102)
    if rt.m_any(m39):
        # line 235: store
        _t103 = v_c16
        rt.st(p_c, ((v_r1 * s_n) + v_q6), _t103, m39, (F, 78, m39, ()))
    # line 236: if
    _t104 = (v_r1 < s_m)
    _t105 = (_t104 & (v_q7 < s_n))
    m40 = rt.m_and(None, _t105)
    if rt.m_any(m40):
        # line 236: store
        _t106 = v_c17
        rt.st(p_c, ((v_r1 * s_n) + v_q7), _t106, m40, (F, 79, m40, ()))
    # line 237: if
    _t107 = (v_r2 < s_m)
    _t108 = (_t107 & (v_q0 < s_n))
    m41 = rt.m_and(None, _t108)
    if rt.m_any(m41):
        # line 237: store
        _t109 = v_c20
        rt.st(p_c, ((v_r2 * s_n) + v_q0), _t109, m41, (F, 80, m41, ()))
    # line 238: if
    _t110 = (v_r2 < s_m)
    _t111 = (_t110 & (v_q1 < s_n))
    m42 = rt.m_and(None, _t111)
    if rt.m_any(m42):
        # line 238: store
        _t112 = v_c21
        rt.st(p_c, ((v_r2 * s_n) + v_q1), _t112, m42, (F, 81, m42, ()))
    # line 239: if
    _t113 = (v_r2 < s_m)
    _t114 = (_t113 & (v_q2 < s_n))
    m43 = rt.m_and(None, _t114)
    if rt.m_any(m43):
        # line 239: store
        _t115 = v_c22
        rt.st(p_c, ((v_r2 * s_n) + v_q2), _t115, m43, (F, 82, m43, ()))
    # line 240: if
    _t116 = (v_r2 < s_m)
    _t117 = (_t116 & (v_q3 < s_n))
    m44 = rt.m_and(None, _t117)
    if rt.m_any(m44):
        # line 240: store
        _t118 = v_c23
        rt.st(p_c, ((v_r2 * s_n) + v_q3), _t118, m44, (F, 83, m44, ()))
    # line 241: if
    _t119 = (v_r2 < s_m)
    _t120 = (_t119 & (v_q4 < s_n))
    m45 = rt.m_and(None, _t120)
    if rt.m_any(m45):
        # line 241: store
        _t121 = v_c24
        rt.st(p_c, ((v_r2 * s_n) + v_q4), _t121, m45, (F, 84, m45, ()))
    # line 242: if
    _t122 = (v_r2 < s_m)
    _t123 = (_t122 & (v_q5 < s_n))
    m46 = rt.m_and(None, _t123)
    if rt.m_any(m46):
        # line 242: store
        _t124 = v_c25
        rt.st(p_c, ((v_r2 * s_n) + v_q5), _t124, m46, (F, 85, m46, ()))
    # line 243: if
    _t125 = (v_r2 < s_m)
    _t126 = (_t125 & (v_q6 < s_n))
    m47 = rt.m_and(None, _t126)
    if rt.m_any(m47):
        # line 243: store
        _t127 = v_c26
        rt.st(p_c, ((v_r2 * s_n) + v_q6), _t127, m47, (F, 86, m47, ()))
    # line 244: if
    _t128 = (v_r2 < s_m)
    _t129 = (_t128 & (v_q7 < s_n))
    m48 = rt.m_and(None, _t129)
    if rt.m_any(m48):
        # line 244: store
        _t130 = v_c27
        rt.st(p_c, ((v_r2 * s_n) + v_q7), _t130, m48, (F, 87, m48, ()))
    # line 245: if
    _t131 = (v_r3 < s_m)
    _t132 = (_t131 & (v_q0 < s_n))
    m49 = rt.m_and(None, _t132)
    if rt.m_any(m49):
        # line 245: store
        _t133 = v_c30
        rt.st(p_c, ((v_r3 * s_n) + v_q0), _t133, m49, (F, 88, m49, ()))
    # line 246: if
    _t134 = (v_r3 < s_m)
    _t135 = (_t134 & (v_q1 < s_n))
    m50 = rt.m_and(None, _t135)
    if rt.m_any(m50):
        # line 246: store
        _t136 = v_c31
        rt.st(p_c, ((v_r3 * s_n) + v_q1), _t136, m50, (F, 89, m50, ()))
    # line 247: if
    _t137 = (v_r3 < s_m)
    _t138 = (_t137 & (v_q2 < s_n))
    m51 = rt.m_and(None, _t138)
    if rt.m_any(m51):
        # line 247: store
        _t139 = v_c32
        rt.st(p_c, ((v_r3 * s_n) + v_q2), _t139, m51, (F, 90, m51, ()))
    # line 248: if
    _t140 = (v_r3 < s_m)
    _t141 = (_t140 & (v_q3 < s_n))
    m52 = rt.m_and(None, _t141)
    if rt.m_any(m52):
        # line 248: store
        _t142 = v_c33
        rt.st(p_c, ((v_r3 * s_n) + v_q3), _t142, m52, (F, 91, m52, ()))
    # line 249: if
    _t143 = (v_r3 < s_m)
    _t144 = (_t143 & (v_q4 < s_n))
    m53 = rt.m_and(None, _t144)
    if rt.m_any(m53):
        # line 249: store
        _t145 = v_c34
        rt.st(p_c, ((v_r3 * s_n) + v_q4), _t145, m53, (F, 92, m53, ()))
    # line 250: if
    _t146 = (v_r3 < s_m)
    _t147 = (_t146 & (v_q5 < s_n))
    m54 = rt.m_and(None, _t147)
    if rt.m_any(m54):
        # line 250: store
        _t148 = v_c35
        rt.st(p_c, ((v_r3 * s_n) + v_q5), _t148, m54, (F, 93, m54, ()))
    # line 251: if
    _t149 = (v_r3 < s_m)
    _t150 = (_t149 & (v_q6 < s_n))
    m55 = rt.m_and(None, _t150)
    if rt.m_any(m55):
        # line 251: store
        _t151 = v_c36
        rt.st(p_c, ((v_r3 * s_n) + v_q6), _t151, m55, (F, 94, m55, ()))
    # line 252: if
    _t152 = (v_r3 < s_m)
    _t153 = (_t152 & (v_q7 < s_n))
    m56 = rt.m_and(None, _t153)
    if rt.m_any(m56):
        # line 252: store
        _t154 = v_c37
        rt.st(p_c, ((v_r3 * s_n) + v_q7), _t154, m56, (F, 95, m56, ()))
    # line 253: if
    _t155 = (v_r4 < s_m)
    _t156 = (_t155 & (v_q0 < s_n))
    m57 = rt.m_and(None, _t156)
    if rt.m_any(m57):
        # line 253: store
        _t157 = v_c40
        rt.st(p_c, ((v_r4 * s_n) + v_q0), _t157, m57, (F, 96, m57, ()))
    # line 254: if
    _t158 = (v_r4 < s_m)
    _t159 = (_t158 & (v_q1 < s_n))
    m58 = rt.m_and(None, _t159)
    if rt.m_any(m58):
        # line 254: store
        _t160 = v_c41
        rt.st(p_c, ((v_r4 * s_n) + v_q1), _t160, m58, (F, 97, m58, ()))
    # line 255: if
    _t161 = (v_r4 < s_m)
    _t162 = (_t161 & (v_q2 < s_n))
    m59 = rt.m_and(None, _t162)
    if rt.m_any(m59):
        # line 255: store
        _t163 = v_c42
        rt.st(p_c, ((v_r4 * s_n) + v_q2), _t163, m59, (F, 98, m59, ()))
    # line 256: if
    _t164 = (v_r4 < s_m)
    _t165 = (_t164 & (v_q3 < s_n))
    m60 = rt.m_and(None, _t165)
    if rt.m_any(m60):
        # line 256: store
        _t166 = v_c43
        rt.st(p_c, ((v_r4 * s_n) + v_q3), _t166, m60, (F, 99, m60, ()))
    # line 257: if
    _t167 = (v_r4 < s_m)
    _t168 = (_t167 & (v_q4 < s_n))
    m61 = rt.m_and(None, _t168)
    if rt.m_any(m61):
        # line 257: store
        _t169 = v_c44
        rt.st(p_c, ((v_r4 * s_n) + v_q4), _t169, m61, (F, 100, m61, ()))
    # line 258: if
    _t170 = (v_r4 < s_m)
    _t171 = (_t170 & (v_q5 < s_n))
    m62 = rt.m_and(None, _t171)
    if rt.m_any(m62):
        # line 258: store
        _t172 = v_c45
        rt.st(p_c, ((v_r4 * s_n) + v_q5), _t172, m62, (F, 101, m62, ()))
    # line 259: if
    _t173 = (v_r4 < s_m)
    _t174 = (_t173 & (v_q6 < s_n))
    m63 = rt.m_and(None, _t174)
    if rt.m_any(m63):
        # line 259: store
        _t175 = v_c46
        rt.st(p_c, ((v_r4 * s_n) + v_q6), _t175, m63, (F, 102, m63, ()))
    # line 260: if
    _t176 = (v_r4 < s_m)
    _t177 = (_t176 & (v_q7 < s_n))
    m64 = rt.m_and(None, _t177)
    if rt.m_any(m64):
        # line 260: store
        _t178 = v_c47
        rt.st(p_c, ((v_r4 * s_n) + v_q7), _t178, m64, (F, 103, m64, ()))
    # line 261: if
    _t179 = (v_r5 < s_m)
    _t180 = (_t179 & (v_q0 < s_n))
    m65 = rt.m_and(None, _t180)
    if rt.m_any(m65):
        # line 261: store
        _t181 = v_c50
        rt.st(p_c, ((v_r5 * s_n) + v_q0), _t181, m65, (F, 104, m65, ()))
    # line 262: if
    _t182 = (v_r5 < s_m)
    _t183 = (_t182 & (v_q1 < s_n))
    m66 = rt.m_and(None, _t183)
    if rt.m_any(m66):
        # line 262: store
        _t184 = v_c51
        rt.st(p_c, ((v_r5 * s_n) + v_q1), _t184, m66, (F, 105, m66, ()))
    # line 263: if
    _t185 = (v_r5 < s_m)
    _t186 = (_t185 & (v_q2 < s_n))
    m67 = rt.m_and(None, _t186)
    if rt.m_any(m67):
        # line 263: store
        _t187 = v_c52
        rt.st(p_c, ((v_r5 * s_n) + v_q2), _t187, m67, (F, 106, m67, ()))
    # line 264: if
    _t188 = (v_r5 < s_m)
    _t189 = (_t188 & (v_q3 < s_n))
    m68 = rt.m_and(None, _t189)
    if rt.m_any(m68):
        # line 264: store
        _t190 = v_c53
        rt.st(p_c, ((v_r5 * s_n) + v_q3), _t190, m68, (F, 107, m68, ()))
    # line 265: if
    _t191 = (v_r5 < s_m)
    _t192 = (_t191 & (v_q4 < s_n))
    m69 = rt.m_and(None, _t192)
    if rt.m_any(m69):
        # line 265: store
        _t193 = v_c54
        rt.st(p_c, ((v_r5 * s_n) + v_q4), _t193, m69, (F, 108, m69, ()))
    # line 266: if
    _t194 = (v_r5 < s_m)
    _t195 = (_t194 & (v_q5 < s_n))
    m70 = rt.m_and(None, _t195)
    if rt.m_any(m70):
        # line 266: store
        _t196 = v_c55
        rt.st(p_c, ((v_r5 * s_n) + v_q5), _t196, m70, (F, 109, m70, ()))
    # line 267: if
    _t197 = (v_r5 < s_m)
    _t198 = (_t197 & (v_q6 < s_n))
    m71 = rt.m_and(None, _t198)
    if rt.m_any(m71):
        # line 267: store
        _t199 = v_c56
        rt.st(p_c, ((v_r5 * s_n) + v_q6), _t199, m71, (F, 110, m71, ()))
    # line 268: if
    _t200 = (v_r5 < s_m)
    _t201 = (_t200 & (v_q7 < s_n))
    m72 = rt.m_and(None, _t201)
    if rt.m_any(m72):
        # line 268: store
        _t202 = v_c57
        rt.st(p_c, ((v_r5 * s_n) + v_q7), _t202, m72, (F, 111, m72, ()))
    # line 269: if
    _t203 = (v_r6 < s_m)
    _t204 = (_t203 & (v_q0 < s_n))
    m73 = rt.m_and(None, _t204)
    if rt.m_any(m73):
        # line 269: store
        _t205 = v_c60
        rt.st(p_c, ((v_r6 * s_n) + v_q0), _t205, m73, (F, 112, m73, ()))
    # line 270: if
    _t206 = (v_r6 < s_m)
    _t207 = (_t206 & (v_q1 < s_n))
    m74 = rt.m_and(None, _t207)
    if rt.m_any(m74):
        # line 270: store
        _t208 = v_c61
        rt.st(p_c, ((v_r6 * s_n) + v_q1), _t208, m74, (F, 113, m74, ()))
    # line 271: if
    _t209 = (v_r6 < s_m)
    _t210 = (_t209 & (v_q2 < s_n))
    m75 = rt.m_and(None, _t210)
    if rt.m_any(m75):
        # line 271: store
        _t211 = v_c62
        rt.st(p_c, ((v_r6 * s_n) + v_q2), _t211, m75, (F, 114, m75, ()))
    # line 272: if
    _t212 = (v_r6 < s_m)
    _t213 = (_t212 & (v_q3 < s_n))
    m76 = rt.m_and(None, _t213)
    if rt.m_any(m76):
        # line 272: store
        _t214 = v_c63
        rt.st(p_c, ((v_r6 * s_n) + v_q3), _t214, m76, (F, 115, m76, ()))
    # line 273: if
    _t215 = (v_r6 < s_m)
    _t216 = (_t215 & (v_q4 < s_n))
    m77 = rt.m_and(None, _t216)
    if rt.m_any(m77):
        # line 273: store
        _t217 = v_c64
        rt.st(p_c, ((v_r6 * s_n) + v_q4), _t217, m77, (F, 116, m77, ()))
    # line 274: if
    _t218 = (v_r6 < s_m)
    _t219 = (_t218 & (v_q5 < s_n))
    m78 = rt.m_and(None, _t219)
    if rt.m_any(m78):
        # line 274: store
        _t220 = v_c65
        rt.st(p_c, ((v_r6 * s_n) + v_q5), _t220, m78, (F, 117, m78, ()))
    # line 275: if
    _t221 = (v_r6 < s_m)
    _t222 = (_t221 & (v_q6 < s_n))
    m79 = rt.m_and(None, _t222)
    if rt.m_any(m79):
        # line 275: store
        _t223 = v_c66
        rt.st(p_c, ((v_r6 * s_n) + v_q6), _t223, m79, (F, 118, m79, ()))
    # line 276: if
    _t224 = (v_r6 < s_m)
    _t225 = (_t224 & (v_q7 < s_n))
    m80 = rt.m_and(None, _t225)
    if rt.m_any(m80):
        # line 276: store
        _t226 = v_c67
        rt.st(p_c, ((v_r6 * s_n) + v_q7), _t226, m80, (F, 119, m80, ()))
    # line 277: if
    _t227 = (v_r7 < s_m)
    _t228 = (_t227 & (v_q0 < s_n))
    m81 = rt.m_and(None, _t228)
    if rt.m_any(m81):
        # line 277: store
        _t229 = v_c70
        rt.st(p_c, ((v_r7 * s_n) + v_q0), _t229, m81, (F, 120, m81, ()))
    # line 278: if
    _t230 = (v_r7 < s_m)
    _t231 = (_t230 & (v_q1 < s_n))
    m82 = rt.m_and(None, _t231)
    if rt.m_any(m82):
        # line 278: store
        _t232 = v_c71
        rt.st(p_c, ((v_r7 * s_n) + v_q1), _t232, m82, (F, 121, m82, ()))
    # line 279: if
    _t233 = (v_r7 < s_m)
    _t234 = (_t233 & (v_q2 < s_n))
    m83 = rt.m_and(None, _t234)
    if rt.m_any(m83):
        # line 279: store
        _t235 = v_c72
        rt.st(p_c, ((v_r7 * s_n) + v_q2), _t235, m83, (F, 122, m83, ()))
    # line 280: if
    _t236 = (v_r7 < s_m)
    _t237 = (_t236 & (v_q3 < s_n))
    m84 = rt.m_and(None, _t237)
    if rt.m_any(m84):
        # line 280: store
        _t238 = v_c73
        rt.st(p_c, ((v_r7 * s_n) + v_q3), _t238, m84, (F, 123, m84, ()))
    # line 281: if
    _t239 = (v_r7 < s_m)
    _t240 = (_t239 & (v_q4 < s_n))
    m85 = rt.m_and(None, _t240)
    if rt.m_any(m85):
        # line 281: store
        _t241 = v_c74
        rt.st(p_c, ((v_r7 * s_n) + v_q4), _t241, m85, (F, 124, m85, ()))
    # line 282: if
    _t242 = (v_r7 < s_m)
    _t243 = (_t242 & (v_q5 < s_n))
    m86 = rt.m_and(None, _t243)
    if rt.m_any(m86):
        # line 282: store
        _t244 = v_c75
        rt.st(p_c, ((v_r7 * s_n) + v_q5), _t244, m86, (F, 125, m86, ()))
    # line 283: if
    _t245 = (v_r7 < s_m)
    _t246 = (_t245 & (v_q6 < s_n))
    m87 = rt.m_and(None, _t246)
    if rt.m_any(m87):
        # line 283: store
        _t247 = v_c76
        rt.st(p_c, ((v_r7 * s_n) + v_q6), _t247, m87, (F, 126, m87, ()))
    # line 284: if
    _t248 = (v_r7 < s_m)
    _t249 = (_t248 & (v_q7 < s_n))
    m88 = rt.m_and(None, _t249)
    if rt.m_any(m88):
        # line 284: store
        _t250 = v_c77
        rt.st(p_c, ((v_r7 * s_n) + v_q7), _t250, m88, (F, 127, m88, ()))
