# goldy-import CPU kernel `matmul_fast` from 'rust_examples/matmul.rs' (generated code).
# Runs workgroups of 256x1x1 threads as a (W, S) lane grid; masks: None = all lanes.

F0_0 = np.float32(0.0)
Fm0_0 = np.float32(-0.0)
U0 = np.uint32(0)
U1 = np.uint32(1)
U1024 = np.uint32(1024)
U128 = np.uint32(128)
U2 = np.uint32(2)
U256 = np.uint32(256)
U3 = np.uint32(3)
U32 = np.uint32(32)
U384 = np.uint32(384)
U4 = np.uint32(4)
U64 = np.uint32(64)
U65 = np.uint32(65)
U66 = np.uint32(66)
U67 = np.uint32(67)
U7 = np.uint32(7)
U8 = np.uint32(8)


def k_matmul_fast(G, R, F):
    "c = a * b like `matmul`, written for speed: each workgroup of 256 threads computes a\n128 x 128 block of c, each thread an 8 x 8 block of it in 64 scalar accumulators\n(rows 4 ty + i and 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j, i, j < 4, for\ntx, ty < 16 from the thread l, below). Launched with `groups((ceil(n / 128), ceil(m / 128), 1))`.\nK advances 8 at a time through two buffers of workgroup memory each (double buffering:\nthe next 128 x 8 and 8 x 128 tiles are read from global memory while the current ones are\nmultiplied, one barrier per step); `at` holds a's tile transposed (at[kk * 128 + r] =\na[row0 + r][p0 + kk]) so that both inner-loop reads are four consecutive floats. Each\nthread stages four consecutive floats of a row of a and four of a row of b per step:\ninside the matrix they are read as `x[i]`, `x[i + 1]`, `x[i + 2]`, `x[i + 3]`, which the\nCUDA backend loads as one vector where the row allows (codegen/ptx/tiles.py).\n\nProduct order (the same on every backend, so results agree bit for bit): acc starts at\n0.0 and, for p = 0, 1, ..., k - 1 in order, becomes `a[row][p].mul_add(b[p][col], acc)`,\nrounded once (fused multiply-add). Past the end of k a's tile holds -0.0 and b's 0.0:\ntheir product is -0.0 and `-0.0 + acc` is `acc` for every acc, so the padding does not\nchange the result (rows past m and columns past n are computed and not stored)."
    (p_a, n_a, p_b, n_b, p_c, n_c, s_m, s_n, s_k,) = R
    w_at = G.wg_array(0, 2048, np.float32)  # one row per workgroup
    w_bt = G.wg_array(1, 2048, np.float32)  # one row per workgroup
    # line 69: let
    # v_l is local_id().x: G.lid_x
    # line 72: let
    v_tx = ((rt.urem(rt.udiv(G.lid_x, U32), U2) * U8) + rt.urem(G.lid_x, U8))
    # line 73: let
    v_ty = ((rt.udiv(G.lid_x, U64) * U4) + rt.urem(rt.udiv(G.lid_x, U8), U4))
    # line 74: let
    v_row0 = (G.wgid_y * U128)
    # line 75: let
    v_col0 = (G.wgid_x * U128)
    # line 78: let
    v_ar = (v_row0 + rt.udiv(G.lid_x, U2))
    # line 79: let
    v_ak = (rt.urem(G.lid_x, U2) * U4)
    # line 80: let
    v_bk = rt.udiv(G.lid_x, U32)
    # line 81: let
    v_bc = (v_col0 + (rt.urem(G.lid_x, U32) * U4))
    # line 82: let
    v_sa = ((v_ak * U128) + rt.udiv(G.lid_x, U2))
    # line 83: let
    v_sb = ((v_bk * U128) + (rt.urem(G.lid_x, U32) * U4))
    # line 84: let
    _t1 = (v_ar < s_m)
    v_inside = (_t1 & ((v_bc + U3) < s_n))
    # line 85: let
    v_c00 = F0_0
    # line 85: let
    v_c01 = F0_0
    # line 85: let
    v_c02 = F0_0
    # line 85: let
    v_c03 = F0_0
    # line 85: let
    v_c04 = F0_0
    # line 85: let
    v_c05 = F0_0
    # line 85: let
    v_c06 = F0_0
    # line 85: let
    v_c07 = F0_0
    # line 86: let
    v_c10 = F0_0
    # line 86: let
    v_c11 = F0_0
    # line 86: let
    v_c12 = F0_0
    # line 86: let
    v_c13 = F0_0
    # line 86: let
    v_c14 = F0_0
    # line 86: let
    v_c15 = F0_0
    # line 86: let
    v_c16 = F0_0
    # line 86: let
    v_c17 = F0_0
    # line 87: let
    v_c20 = F0_0
    # line 87: let
    v_c21 = F0_0
    # line 87: let
    v_c22 = F0_0
    # line 87: let
    v_c23 = F0_0
    # line 87: let
    v_c24 = F0_0
    # line 87: let
    v_c25 = F0_0
    # line 87: let
    v_c26 = F0_0
    # line 87: let
    v_c27 = F0_0
    # line 88: let
    v_c30 = F0_0
    # line 88: let
    v_c31 = F0_0
    # line 88: let
    v_c32 = F0_0
    # line 88: let
    v_c33 = F0_0
    # line 88: let
    v_c34 = F0_0
    # line 88: let
    v_c35 = F0_0
    # line 88: let
    v_c36 = F0_0
    # line 88: let
    v_c37 = F0_0
    # line 89: let
    v_c40 = F0_0
    # line 89: let
    v_c41 = F0_0
    # line 89: let
    v_c42 = F0_0
    # line 89: let
    v_c43 = F0_0
    # line 89: let
    v_c44 = F0_0
    # line 89: let
    v_c45 = F0_0
    # line 89: let
    v_c46 = F0_0
    # line 89: let
    v_c47 = F0_0
    # line 90: let
    v_c50 = F0_0
    # line 90: let
    v_c51 = F0_0
    # line 90: let
    v_c52 = F0_0
    # line 90: let
    v_c53 = F0_0
    # line 90: let
    v_c54 = F0_0
    # line 90: let
    v_c55 = F0_0
    # line 90: let
    v_c56 = F0_0
    # line 90: let
    v_c57 = F0_0
    # line 91: let
    v_c60 = F0_0
    # line 91: let
    v_c61 = F0_0
    # line 91: let
    v_c62 = F0_0
    # line 91: let
    v_c63 = F0_0
    # line 91: let
    v_c64 = F0_0
    # line 91: let
    v_c65 = F0_0
    # line 91: let
    v_c66 = F0_0
    # line 91: let
    v_c67 = F0_0
    # line 92: let
    v_c70 = F0_0
    # line 92: let
    v_c71 = F0_0
    # line 92: let
    v_c72 = F0_0
    # line 92: let
    v_c73 = F0_0
    # line 92: let
    v_c74 = F0_0
    # line 92: let
    v_c75 = F0_0
    # line 92: let
    v_c76 = F0_0
    # line 92: let
    v_c77 = F0_0
    # line 94: let
    v_ga = ((v_ar * s_k) + v_ak)
    # line 95: let
    v_gb = ((v_bk * s_n) + v_bc)
    # line 96: let
    v_n8 = (s_n * U8)
    # line 97: let
    v_va0 = Fm0_0
    # line 98: let
    v_va1 = Fm0_0
    # line 99: let
    v_va2 = Fm0_0
    # line 100: let
    v_va3 = Fm0_0
    # line 101: let
    v_vb0 = F0_0
    # line 102: let
    v_vb1 = F0_0
    # line 103: let
    v_vb2 = F0_0
    # line 104: let
    v_vb3 = F0_0
    # line 105: if
    _t2 = (v_inside & (U8 <= s_k))
    m1 = rt.m_and(None, _t2)
    m2 = rt.m_andnot(None, _t2)
    if rt.m_any(m1):
        # line 107: assign
        v_va0 = rt.sel(m1, rt.ld(p_a, v_ga, (F, 0, m1, ())), v_va0)
        # line 108: assign
        v_va1 = rt.sel(m1, rt.ld(p_a, (v_ga + U1), (F, 1, m1, ())), v_va1)
        # line 109: assign
        v_va2 = rt.sel(m1, rt.ld(p_a, (v_ga + U2), (F, 2, m1, ())), v_va2)
        # line 110: assign
        v_va3 = rt.sel(m1, rt.ld(p_a, (v_ga + U3), (F, 3, m1, ())), v_va3)
        # line 111: assign
        v_vb0 = rt.sel(m1, rt.ld(p_b, v_gb, (F, 4, m1, ())), v_vb0)
        # line 112: assign
        v_vb1 = rt.sel(m1, rt.ld(p_b, (v_gb + U1), (F, 5, m1, ())), v_vb1)
        # line 113: assign
        v_vb2 = rt.sel(m1, rt.ld(p_b, (v_gb + U2), (F, 6, m1, ())), v_vb2)
        # line 114: assign
        v_vb3 = rt.sel(m1, rt.ld(p_b, (v_gb + U3), (F, 7, m1, ())), v_vb3)
    if rt.m_any(m2):
        # line 117: if
        _t3 = (v_ar < s_m)
        _t4 = (_t3 & (v_ak < s_k))
        m3 = rt.m_and(m2, _t4)
        if rt.m_any(m3):
            # line 117: assign
            v_va0 = rt.sel(m3, rt.ld(p_a, v_ga, (F, 8, m3, ())), v_va0)
        # line 118: if
        _t5 = (v_ar < s_m)
        _t6 = (_t5 & ((v_ak + U1) < s_k))
        m4 = rt.m_and(m2, _t6)
        if rt.m_any(m4):
            # line 118: assign
            v_va1 = rt.sel(m4, rt.ld(p_a, (v_ga + U1), (F, 9, m4, ())), v_va1)
        # line 119: if
        _t7 = (v_ar < s_m)
        _t8 = (_t7 & ((v_ak + U2) < s_k))
        m5 = rt.m_and(m2, _t8)
        if rt.m_any(m5):
            # line 119: assign
            v_va2 = rt.sel(m5, rt.ld(p_a, (v_ga + U2), (F, 10, m5, ())), v_va2)
        # line 120: if
        _t9 = (v_ar < s_m)
        _t10 = (_t9 & ((v_ak + U3) < s_k))
        m6 = rt.m_and(m2, _t10)
        if rt.m_any(m6):
            # line 120: assign
            v_va3 = rt.sel(m6, rt.ld(p_a, (v_ga + U3), (F, 11, m6, ())), v_va3)
        # line 121: if
        _t11 = (v_bk < s_k)
        _t12 = (_t11 & (v_bc < s_n))
        m7 = rt.m_and(m2, _t12)
        if rt.m_any(m7):
            # line 121: assign
            v_vb0 = rt.sel(m7, rt.ld(p_b, v_gb, (F, 12, m7, ())), v_vb0)
        # line 122: if
        _t13 = (v_bk < s_k)
        _t14 = (_t13 & ((v_bc + U1) < s_n))
        m8 = rt.m_and(m2, _t14)
        if rt.m_any(m8):
            # line 122: assign
            v_vb1 = rt.sel(m8, rt.ld(p_b, (v_gb + U1), (F, 13, m8, ())), v_vb1)
        # line 123: if
        _t15 = (v_bk < s_k)
        _t16 = (_t15 & ((v_bc + U2) < s_n))
        m9 = rt.m_and(m2, _t16)
        if rt.m_any(m9):
            # line 123: assign
            v_vb2 = rt.sel(m9, rt.ld(p_b, (v_gb + U2), (F, 14, m9, ())), v_vb2)
        # line 124: if
        _t17 = (v_bk < s_k)
        _t18 = (_t17 & ((v_bc + U3) < s_n))
        m10 = rt.m_and(m2, _t18)
        if rt.m_any(m10):
            # line 124: assign
            v_vb3 = rt.sel(m10, rt.ld(p_b, (v_gb + U3), (F, 15, m10, ())), v_vb3)
    # line 126: store
    _t19 = v_va0
    rt.st_w(w_at, G, v_sa, _t19, None, (F, 16, None, ()))
    # line 127: store
    _t20 = v_va1
    rt.st_w(w_at, G, (v_sa + U128), _t20, None, (F, 17, None, ()))
    # line 128: store
    _t21 = v_va2
    rt.st_w(w_at, G, (v_sa + U256), _t21, None, (F, 18, None, ()))
    # line 129: store
    _t22 = v_va3
    rt.st_w(w_at, G, (v_sa + U384), _t22, None, (F, 19, None, ()))
    # line 130: store
    _t23 = v_vb0
    rt.st_w(w_bt, G, v_sb, _t23, None, (F, 20, None, ()))
    # line 131: store
    _t24 = v_vb1
    rt.st_w(w_bt, G, (v_sb + U1), _t24, None, (F, 21, None, ()))
    # line 132: store
    _t25 = v_vb2
    rt.st_w(w_bt, G, (v_sb + U2), _t25, None, (F, 22, None, ()))
    # line 133: store
    _t26 = v_vb3
    rt.st_w(w_bt, G, (v_sb + U3), _t26, None, (F, 23, None, ()))
    # line 134: barrier
    pass  # workgroup_barrier: statements run in lock step, writes are visible
    # line 135: for
    _t27 = rt.udiv((s_k + U7), U8)
    v_t = U0
    m11 = rt.m_and(None, v_t < _t27)
    while True:
        if not rt.m_any(m11):
            break
        m12 = m11
        # line 136: let
        v_cur = ((v_t & U1) * U1024)
        # line 137: let
        v_nxt = (U1024 - v_cur)
        # line 139: let
        v_p = ((v_t * U8) + U8)
        # line 140: assign
        v_ga = rt.sel(m12, (v_ga + U8), v_ga)
        # line 141: assign
        v_gb = rt.sel(m12, (v_gb + v_n8), v_gb)
        # line 142: if
        _t28 = (v_inside & ((v_p + U8) <= s_k))
        m13 = rt.m_and(m12, _t28)
        m14 = rt.m_andnot(m12, _t28)
        if rt.m_any(m13):
            # line 144: assign
            v_va0 = rt.sel(m13, rt.ld(p_a, v_ga, (F, 24, m13, ())), v_va0)
            # line 145: assign
            v_va1 = rt.sel(m13, rt.ld(p_a, (v_ga + U1), (F, 25, m13, ())), v_va1)
            # line 146: assign
            v_va2 = rt.sel(m13, rt.ld(p_a, (v_ga + U2), (F, 26, m13, ())), v_va2)
            # line 147: assign
            v_va3 = rt.sel(m13, rt.ld(p_a, (v_ga + U3), (F, 27, m13, ())), v_va3)
            # line 148: assign
            v_vb0 = rt.sel(m13, rt.ld(p_b, v_gb, (F, 28, m13, ())), v_vb0)
            # line 149: assign
            v_vb1 = rt.sel(m13, rt.ld(p_b, (v_gb + U1), (F, 29, m13, ())), v_vb1)
            # line 150: assign
            v_vb2 = rt.sel(m13, rt.ld(p_b, (v_gb + U2), (F, 30, m13, ())), v_vb2)
            # line 151: assign
            v_vb3 = rt.sel(m13, rt.ld(p_b, (v_gb + U3), (F, 31, m13, ())), v_vb3)
        if rt.m_any(m14):
            # line 154: assign
            v_va0 = rt.sel(m14, Fm0_0, v_va0)
            # line 155: assign
            v_va1 = rt.sel(m14, Fm0_0, v_va1)
            # line 156: assign
            v_va2 = rt.sel(m14, Fm0_0, v_va2)
            # line 157: assign
            v_va3 = rt.sel(m14, Fm0_0, v_va3)
            # line 158: assign
            v_vb0 = rt.sel(m14, F0_0, v_vb0)
            # line 159: assign
            v_vb1 = rt.sel(m14, F0_0, v_vb1)
            # line 160: assign
            v_vb2 = rt.sel(m14, F0_0, v_vb2)
            # line 161: assign
            v_vb3 = rt.sel(m14, F0_0, v_vb3)
            # line 162: if
            _t29 = (v_ar < s_m)
            _t30 = (_t29 & ((v_p + v_ak) < s_k))
            m15 = rt.m_and(m14, _t30)
            if rt.m_any(m15):
                # line 162: assign
                v_va0 = rt.sel(m15, rt.ld(p_a, v_ga, (F, 32, m15, ())), v_va0)
            # line 163: if
            _t31 = (v_ar < s_m)
            _t32 = (_t31 & (((v_p + v_ak) + U1) < s_k))
            m16 = rt.m_and(m14, _t32)
            if rt.m_any(m16):
                # line 163: assign
                v_va1 = rt.sel(m16, rt.ld(p_a, (v_ga + U1), (F, 33, m16, ())), v_va1)
            # line 164: if
            _t33 = (v_ar < s_m)
            _t34 = (_t33 & (((v_p + v_ak) + U2) < s_k))
            m17 = rt.m_and(m14, _t34)
            if rt.m_any(m17):
                # line 164: assign
                v_va2 = rt.sel(m17, rt.ld(p_a, (v_ga + U2), (F, 34, m17, ())), v_va2)
            # line 165: if
            _t35 = (v_ar < s_m)
            _t36 = (_t35 & (((v_p + v_ak) + U3) < s_k))
            m18 = rt.m_and(m14, _t36)
            if rt.m_any(m18):
                # line 165: assign
                v_va3 = rt.sel(m18, rt.ld(p_a, (v_ga + U3), (F, 35, m18, ())), v_va3)
            # line 166: if
            _t37 = ((v_p + v_bk) < s_k)
            _t38 = (_t37 & (v_bc < s_n))
            m19 = rt.m_and(m14, _t38)
            if rt.m_any(m19):
                # line 166: assign
                v_vb0 = rt.sel(m19, rt.ld(p_b, v_gb, (F, 36, m19, ())), v_vb0)
            # line 167: if
            _t39 = ((v_p + v_bk) < s_k)
            _t40 = (_t39 & ((v_bc + U1) < s_n))
            m20 = rt.m_and(m14, _t40)
            if rt.m_any(m20):
                # line 167: assign
                v_vb1 = rt.sel(m20, rt.ld(p_b, (v_gb + U1), (F, 37, m20, ())), v_vb1)
            # line 168: if
            _t41 = ((v_p + v_bk) < s_k)
            _t42 = (_t41 & ((v_bc + U2) < s_n))
            m21 = rt.m_and(m14, _t42)
            if rt.m_any(m21):
                # line 168: assign
                v_vb2 = rt.sel(m21, rt.ld(p_b, (v_gb + U2), (F, 38, m21, ())), v_vb2)
            # line 169: if
            _t43 = ((v_p + v_bk) < s_k)
            _t44 = (_t43 & ((v_bc + U3) < s_n))
            m22 = rt.m_and(m14, _t44)
            if rt.m_any(m22):
                # line 169: assign
                v_vb3 = rt.sel(m22, rt.ld(p_b, (v_gb + U3), (F, 39, m22, ())), v_vb3)
        # line 171: for
        _t45 = U8
        v_kk = U0
        m23 = rt.m_and(m12, v_kk < _t45)
        while True:
            if not rt.m_any(m23):
                break
            m24 = m23
            # line 172: let
            v_ia = ((v_cur + (v_kk * U128)) + (v_ty * U4))
            # line 173: let
            v_ib = ((v_cur + (v_kk * U128)) + (v_tx * U4))
            # line 174: let
            v_a0 = rt.ld_w(w_at, G, (v_ia + U0), (F, 40, m24, ()))
            # line 175: let
            v_a1 = rt.ld_w(w_at, G, (v_ia + U1), (F, 41, m24, ()))
            # line 176: let
            v_a2 = rt.ld_w(w_at, G, (v_ia + U2), (F, 42, m24, ()))
            # line 177: let
            v_a3 = rt.ld_w(w_at, G, (v_ia + U3), (F, 43, m24, ()))
            # line 178: let
            v_a4 = rt.ld_w(w_at, G, (v_ia + U64), (F, 44, m24, ()))
            # line 179: let
            v_a5 = rt.ld_w(w_at, G, (v_ia + U65), (F, 45, m24, ()))
            # line 180: let
            v_a6 = rt.ld_w(w_at, G, (v_ia + U66), (F, 46, m24, ()))
            # line 181: let
            v_a7 = rt.ld_w(w_at, G, (v_ia + U67), (F, 47, m24, ()))
            # line 182: let
            v_b0 = rt.ld_w(w_bt, G, (v_ib + U0), (F, 48, m24, ()))
            # line 183: let
            v_b1 = rt.ld_w(w_bt, G, (v_ib + U1), (F, 49, m24, ()))
            # line 184: let
            v_b2 = rt.ld_w(w_bt, G, (v_ib + U2), (F, 50, m24, ()))
            # line 185: let
            v_b3 = rt.ld_w(w_bt, G, (v_ib + U3), (F, 51, m24, ()))
            # line 186: let
            v_b4 = rt.ld_w(w_bt, G, (v_ib + U64), (F, 52, m24, ()))
            # line 187: let
            v_b5 = rt.ld_w(w_bt, G, (v_ib + U65), (F, 53, m24, ()))
            # line 188: let
            v_b6 = rt.ld_w(w_bt, G, (v_ib + U66), (F, 54, m24, ()))
            # line 189: let
            v_b7 = rt.ld_w(w_bt, G, (v_ib + U67), (F, 55, m24, ()))
            # line 190: assign
            v_c00 = rt.sel(m24, rt.fma(v_a0, v_b0, v_c00), v_c00)
            # line 190: assign
            v_c01 = rt.sel(m24, rt.fma(v_a0, v_b1, v_c01), v_c01)
            # line 190: assign
            v_c02 = rt.sel(m24, rt.fma(v_a0, v_b2, v_c02), v_c02)
            # line 190: assign
            v_c03 = rt.sel(m24, rt.fma(v_a0, v_b3, v_c03), v_c03)
            # line 191: assign
            v_c04 = rt.sel(m24, rt.fma(v_a0, v_b4, v_c04), v_c04)
            # line 191: assign
            v_c05 = rt.sel(m24, rt.fma(v_a0, v_b5, v_c05), v_c05)
            # line 191: assign
            v_c06 = rt.sel(m24, rt.fma(v_a0, v_b6, v_c06), v_c06)
            # line 191: assign
            v_c07 = rt.sel(m24, rt.fma(v_a0, v_b7, v_c07), v_c07)
            # line 192: assign
            v_c10 = rt.sel(m24, rt.fma(v_a1, v_b0, v_c10), v_c10)
            # line 192: assign
            v_c11 = rt.sel(m24, rt.fma(v_a1, v_b1, v_c11), v_c11)
            # line 192: assign
            v_c12 = rt.sel(m24, rt.fma(v_a1, v_b2, v_c12), v_c12)
            # line 192: assign
            v_c13 = rt.sel(m24, rt.fma(v_a1, v_b3, v_c13), v_c13)
            # line 193: assign
            v_c14 = rt.sel(m24, rt.fma(v_a1, v_b4, v_c14), v_c14)
            # line 193: assign
            v_c15 = rt.sel(m24, rt.fma(v_a1, v_b5, v_c15), v_c15)
            # line 193: assign
            v_c16 = rt.sel(m24, rt.fma(v_a1, v_b6, v_c16), v_c16)
            # line 193: assign
            v_c17 = rt.sel(m24, rt.fma(v_a1, v_b7, v_c17), v_c17)
            # line 194: assign
            v_c20 = rt.sel(m24, rt.fma(v_a2, v_b0, v_c20), v_c20)
            # line 194: assign
            v_c21 = rt.sel(m24, rt.fma(v_a2, v_b1, v_c21), v_c21)
            # line 194: assign
            v_c22 = rt.sel(m24, rt.fma(v_a2, v_b2, v_c22), v_c22)
            # line 194: assign
            v_c23 = rt.sel(m24, rt.fma(v_a2, v_b3, v_c23), v_c23)
            # line 195: assign
            v_c24 = rt.sel(m24, rt.fma(v_a2, v_b4, v_c24), v_c24)
            # line 195: assign
            v_c25 = rt.sel(m24, rt.fma(v_a2, v_b5, v_c25), v_c25)
            # line 195: assign
            v_c26 = rt.sel(m24, rt.fma(v_a2, v_b6, v_c26), v_c26)
            # line 195: assign
            v_c27 = rt.sel(m24, rt.fma(v_a2, v_b7, v_c27), v_c27)
            # line 196: assign
            v_c30 = rt.sel(m24, rt.fma(v_a3, v_b0, v_c30), v_c30)
            # line 196: assign
            v_c31 = rt.sel(m24, rt.fma(v_a3, v_b1, v_c31), v_c31)
            # line 196: assign
            v_c32 = rt.sel(m24, rt.fma(v_a3, v_b2, v_c32), v_c32)
            # line 196: assign
            v_c33 = rt.sel(m24, rt.fma(v_a3, v_b3, v_c33), v_c33)
            # line 197: assign
            v_c34 = rt.sel(m24, rt.fma(v_a3, v_b4, v_c34), v_c34)
            # line 197: assign
            v_c35 = rt.sel(m24, rt.fma(v_a3, v_b5, v_c35), v_c35)
            # line 197: assign
            v_c36 = rt.sel(m24, rt.fma(v_a3, v_b6, v_c36), v_c36)
            # line 197: assign
            v_c37 = rt.sel(m24, rt.fma(v_a3, v_b7, v_c37), v_c37)
            # line 198: assign
            v_c40 = rt.sel(m24, rt.fma(v_a4, v_b0, v_c40), v_c40)
            # line 198: assign
            v_c41 = rt.sel(m24, rt.fma(v_a4, v_b1, v_c41), v_c41)
            # line 198: assign
            v_c42 = rt.sel(m24, rt.fma(v_a4, v_b2, v_c42), v_c42)
            # line 198: assign
            v_c43 = rt.sel(m24, rt.fma(v_a4, v_b3, v_c43), v_c43)
            # line 199: assign
            v_c44 = rt.sel(m24, rt.fma(v_a4, v_b4, v_c44), v_c44)
            # line 199: assign
            v_c45 = rt.sel(m24, rt.fma(v_a4, v_b5, v_c45), v_c45)
            # line 199: assign
            v_c46 = rt.sel(m24, rt.fma(v_a4, v_b6, v_c46), v_c46)
            # line 199: assign
            v_c47 = rt.sel(m24, rt.fma(v_a4, v_b7, v_c47), v_c47)
            # line 200: assign
            v_c50 = rt.sel(m24, rt.fma(v_a5, v_b0, v_c50), v_c50)
            # line 200: assign
            v_c51 = rt.sel(m24, rt.fma(v_a5, v_b1, v_c51), v_c51)
            # line 200: assign
            v_c52 = rt.sel(m24, rt.fma(v_a5, v_b2, v_c52), v_c52)
            # line 200: assign
            v_c53 = rt.sel(m24, rt.fma(v_a5, v_b3, v_c53), v_c53)
            # line 201: assign
            v_c54 = rt.sel(m24, rt.fma(v_a5, v_b4, v_c54), v_c54)
            # line 201: assign
            v_c55 = rt.sel(m24, rt.fma(v_a5, v_b5, v_c55), v_c55)
            # line 201: assign
            v_c56 = rt.sel(m24, rt.fma(v_a5, v_b6, v_c56), v_c56)
            # line 201: assign
            v_c57 = rt.sel(m24, rt.fma(v_a5, v_b7, v_c57), v_c57)
            # line 202: assign
            v_c60 = rt.sel(m24, rt.fma(v_a6, v_b0, v_c60), v_c60)
            # line 202: assign
            v_c61 = rt.sel(m24, rt.fma(v_a6, v_b1, v_c61), v_c61)
            # line 202: assign
            v_c62 = rt.sel(m24, rt.fma(v_a6, v_b2, v_c62), v_c62)
            # line 202: assign
            v_c63 = rt.sel(m24, rt.fma(v_a6, v_b3, v_c63), v_c63)
            # line 203: assign
            v_c64 = rt.sel(m24, rt.fma(v_a6, v_b4, v_c64), v_c64)
            # line 203: assign
            v_c65 = rt.sel(m24, rt.fma(v_a6, v_b5, v_c65), v_c65)
            # line 203: assign
            v_c66 = rt.sel(m24, rt.fma(v_a6, v_b6, v_c66), v_c66)
            # line 203: assign
            v_c67 = rt.sel(m24, rt.fma(v_a6, v_b7, v_c67), v_c67)
            # line 204: assign
            v_c70 = rt.sel(m24, rt.fma(v_a7, v_b0, v_c70), v_c70)
            # line 204: assign
            v_c71 = rt.sel(m24, rt.fma(v_a7, v_b1, v_c71), v_c71)
            # line 204: assign
            v_c72 = rt.sel(m24, rt.fma(v_a7, v_b2, v_c72), v_c72)
            # line 204: assign
            v_c73 = rt.sel(m24, rt.fma(v_a7, v_b3, v_c73), v_c73)
            # line 205: assign
            v_c74 = rt.sel(m24, rt.fma(v_a7, v_b4, v_c74), v_c74)
            # line 205: assign
            v_c75 = rt.sel(m24, rt.fma(v_a7, v_b5, v_c75), v_c75)
            # line 205: assign
            v_c76 = rt.sel(m24, rt.fma(v_a7, v_b6, v_c76), v_c76)
            # line 205: assign
            v_c77 = rt.sel(m24, rt.fma(v_a7, v_b7, v_c77), v_c77)
            v_kk = rt.sel(m23, v_kk + U1, v_kk)
            m23 = rt.m_and(m23, v_kk < _t45)
        # line 207: store
        _t46 = v_va0
        rt.st_w(w_at, G, (v_nxt + v_sa), _t46, m12, (F, 56, m12, ()))
        # line 208: store
        _t47 = v_va1
        rt.st_w(w_at, G, ((v_nxt + v_sa) + U128), _t47, m12, (F, 57, m12, ()))
        # line 209: store
        _t48 = v_va2
        rt.st_w(w_at, G, ((v_nxt + v_sa) + U256), _t48, m12, (F, 58, m12, ()))
        # line 210: store
        _t49 = v_va3
        rt.st_w(w_at, G, ((v_nxt + v_sa) + U384), _t49, m12, (F, 59, m12, ()))
        # line 211: store
        _t50 = v_vb0
        rt.st_w(w_bt, G, (v_nxt + v_sb), _t50, m12, (F, 60, m12, ()))
        # line 212: store
        _t51 = v_vb1
        rt.st_w(w_bt, G, ((v_nxt + v_sb) + U1), _t51, m12, (F, 61, m12, ()))
        # line 213: store
        _t52 = v_vb2
        rt.st_w(w_bt, G, ((v_nxt + v_sb) + U2), _t52, m12, (F, 62, m12, ()))
        # line 214: store
        _t53 = v_vb3
        rt.st_w(w_bt, G, ((v_nxt + v_sb) + U3), _t53, m12, (F, 63, m12, ()))
        # line 215: barrier
        pass  # workgroup_barrier: statements run in lock step, writes are visible
        v_t = rt.sel(m11, v_t + U1, v_t)
        m11 = rt.m_and(m11, v_t < _t27)
    # line 218: let
    v_r0 = ((v_row0 + (v_ty * U4)) + U0)
    # line 219: let
    v_r1 = ((v_row0 + (v_ty * U4)) + U1)
    # line 220: let
    v_r2 = ((v_row0 + (v_ty * U4)) + U2)
    # line 221: let
    v_r3 = ((v_row0 + (v_ty * U4)) + U3)
    # line 222: let
    v_r4 = ((v_row0 + (v_ty * U4)) + U64)
    # line 223: let
    v_r5 = ((v_row0 + (v_ty * U4)) + U65)
    # line 224: let
    v_r6 = ((v_row0 + (v_ty * U4)) + U66)
    # line 225: let
    v_r7 = ((v_row0 + (v_ty * U4)) + U67)
    # line 226: let
    v_q0 = ((v_col0 + (v_tx * U4)) + U0)
    # line 227: let
    v_q1 = ((v_col0 + (v_tx * U4)) + U1)
    # line 228: let
    v_q2 = ((v_col0 + (v_tx * U4)) + U2)
    # line 229: let
    v_q3 = ((v_col0 + (v_tx * U4)) + U3)
    # line 230: let
    v_q4 = ((v_col0 + (v_tx * U4)) + U64)
    # line 231: let
    v_q5 = ((v_col0 + (v_tx * U4)) + U65)
    # line 232: let
    v_q6 = ((v_col0 + (v_tx * U4)) + U66)
    # line 233: let
    v_q7 = ((v_col0 + (v_tx * U4)) + U67)
    # line 234: if
    _t54 = (v_r0 < s_m)
    _t55 = (_t54 & (v_q0 < s_n))
    m25 = rt.m_and(None, _t55)
    if rt.m_any(m25):
        # line 234: store
        _t56 = v_c00
        rt.st(p_c, ((v_r0 * s_n) + v_q0), _t56, m25, (F, 64, m25, ()))
    # line 235: if
    _t57 = (v_r0 < s_m)
    _t58 = (_t57 & (v_q1 < s_n))
    m26 = rt.m_and(None, _t58)
    if rt.m_any(m26):
        # line 235: store
        _t59 = v_c01
        rt.st(p_c, ((v_r0 * s_n) + v_q1), _t59, m26, (F, 65, m26, ()))
    # line 236: if
    _t60 = (v_r0 < s_m)
    _t61 = (_t60 & (v_q2 < s_n))
    m27 = rt.m_and(None, _t61)
    if rt.m_any(m27):
        # line 236: store
        _t62 = v_c02
        rt.st(p_c, ((v_r0 * s_n) + v_q2), _t62, m27, (F, 66, m27, ()))
    # line 237: if
    _t63 = (v_r0 < s_m)
    _t64 = (_t63 & (v_q3 < s_n))
    m28 = rt.m_and(None, _t64)
    if rt.m_any(m28):
        # line 237: store
        _t65 = v_c03
        rt.st(p_c, ((v_r0 * s_n) + v_q3), _t65, m28, (F, 67, m28, ()))
    # line 238: if
    _t66 = (v_r0 < s_m)
    _t67 = (_t66 & (v_q4 < s_n))
    m29 = rt.m_and(None, _t67)
    if rt.m_any(m29):
        # line 238: store
        _t68 = v_c04
        rt.st(p_c, ((v_r0 * s_n) + v_q4), _t68, m29, (F, 68, m29, ()))
    # line 239: if
    _t69 = (v_r0 < s_m)
    _t70 = (_t69 & (v_q5 < s_n))
    m30 = rt.m_and(None, _t70)
    if rt.m_any(m30):
        # line 239: store
        _t71 = v_c05
        rt.st(p_c, ((v_r0 * s_n) + v_q5), _t71, m30, (F, 69, m30, ()))
    # line 240: if
    _t72 = (v_r0 < s_m)
    _t73 = (_t72 & (v_q6 < s_n))
    m31 = rt.m_and(None, _t73)
    if rt.m_any(m31):
        # line 240: store
        _t74 = v_c06
        rt.st(p_c, ((v_r0 * s_n) + v_q6), _t74, m31, (F, 70, m31, ()))
    # line 241: if
    _t75 = (v_r0 < s_m)
    _t76 = (_t75 & (v_q7 < s_n))
    m32 = rt.m_and(None, _t76)
    if rt.m_any(m32):
        # line 241: store
        _t77 = v_c07
        rt.st(p_c, ((v_r0 * s_n) + v_q7), _t77, m32, (F, 71, m32, ()))
    # line 242: if
    _t78 = (v_r1 < s_m)
    _t79 = (_t78 & (v_q0 < s_n))
    m33 = rt.m_and(None, _t79)
    if rt.m_any(m33):
        # line 242: store
        _t80 = v_c10
        rt.st(p_c, ((v_r1 * s_n) + v_q0), _t80, m33, (F, 72, m33, ()))
    # line 243: if
    _t81 = (v_r1 < s_m)
    _t82 = (_t81 & (v_q1 < s_n))
    m34 = rt.m_and(None, _t82)
    if rt.m_any(m34):
        # line 243: store
        _t83 = v_c11
        rt.st(p_c, ((v_r1 * s_n) + v_q1), _t83, m34, (F, 73, m34, ()))
    # line 244: if
    _t84 = (v_r1 < s_m)
    _t85 = (_t84 & (v_q2 < s_n))
    m35 = rt.m_and(None, _t85)
    if rt.m_any(m35):
        # line 244: store
        _t86 = v_c12
        rt.st(p_c, ((v_r1 * s_n) + v_q2), _t86, m35, (F, 74, m35, ()))
    # line 245: if
    _t87 = (v_r1 < s_m)
    _t88 = (_t87 & (v_q3 < s_n))
    m36 = rt.m_and(None, _t88)
    if rt.m_any(m36):
        # line 245: store
        _t89 = v_c13
        rt.st(p_c, ((v_r1 * s_n) + v_q3), _t89, m36, (F, 75, m36, ()))
    # line 246: if
    _t90 = (v_r1 < s_m)
    _t91 = (_t90 & (v_q4 < s_n))
    m37 = rt.m_and(None, _t91)
    if rt.m_any(m37):
        # line 246: store
        _t92 = v_c14
        rt.st(p_c, ((v_r1 * s_n) + v_q4), _t92, m37, (F, 76, m37, ()))
    # line 247: if
    _t93 = (v_r1 < s_m)
    _t94 = (_t93 & (v_q5 < s_n))
    m38 = rt.m_and(None, _t94)
    if rt.m_any(m38):
        # line 247: store
        _t95 = v_c15
        rt.st(p_c, ((v_r1 * s_n) + v_q5), _t95, m38, (F, 77, m38, ()))
    # line 248: if
    _t96 = (v_r1 < s_m)
    _t97 = (_t96 & (v_q6 < s_n))
    m39 = rt.m_and(None, _t97)
    if rt.m_any(m39):
        # line 248: store
        _t98 = v_c16
        rt.st(p_c, ((v_r1 * s_n) + v_q6), _t98, m39, (F, 78, m39, ()))
    # line 249: if
    _t99 = (v_r1 < s_m)
    _t100 = (_t99 & (v_q7 < s_n))
    m40 = rt.m_and(None, _t100)
    if rt.m_any(m40):
        # line 249: store
        _t101 = v_c17
        rt.st(p_c, ((v_r1 * s_n) + v_q7), _t101, m40, (F, 79, m40, ()))
    # line 250: if
    _t102 = (v_r2 < s_m)
    _t103 = (_t102 & (v_q0 < s_n))
    m41 = rt.m_and(None, _t103)
    if rt.m_any(m41):
        # line 250: store
        _t104 = v_c20
        rt.st(p_c, ((v_r2 * s_n) + v_q0), _t104, m41, (F, 80, m41, ()))
    # line 251: if
    _t105 = (v_r2 < s_m)
    _t106 = (_t105 & (v_q1 < s_n))
    m42 = rt.m_and(None, _t106)
    if rt.m_any(m42):
        # line 251: store
        _t107 = v_c21
        rt.st(p_c, ((v_r2 * s_n) + v_q1), _t107, m42, (F, 81, m42, ()))
    # line 252: if
    _t108 = (v_r2 < s_m)
    _t109 = (_t108 & (v_q2 < s_n))
    m43 = rt.m_and(None, _t109)
    if rt.m_any(m43):
        # line 252: store
        _t110 = v_c22
        rt.st(p_c, ((v_r2 * s_n) + v_q2), _t110, m43, (F, 82, m43, ()))
    # line 253: if
    _t111 = (v_r2 < s_m)
    _t112 = (_t111 & (v_q3 < s_n))
    m44 = rt.m_and(None, _t112)
    if rt.m_any(m44):
        # line 253: store
        _t113 = v_c23
        rt.st(p_c, ((v_r2 * s_n) + v_q3), _t113, m44, (F, 83, m44, ()))
    # line 254: if
    _t114 = (v_r2 < s_m)
    _t115 = (_t114 & (v_q4 < s_n))
    m45 = rt.m_and(None, _t115)
    if rt.m_any(m45):
        # line 254: store
        _t116 = v_c24
        rt.st(p_c, ((v_r2 * s_n) + v_q4), _t116, m45, (F, 84, m45, ()))
    # line 255: if
    _t117 = (v_r2 < s_m)
    _t118 = (_t117 & (v_q5 < s_n))
    m46 = rt.m_and(None, _t118)
    if rt.m_any(m46):
        # line 255: store
        _t119 = v_c25
        rt.st(p_c, ((v_r2 * s_n) + v_q5), _t119, m46, (F, 85, m46, ()))
    # line 256: if
    _t120 = (v_r2 < s_m)
    _t121 = (_t120 & (v_q6 < s_n))
    m47 = rt.m_and(None, _t121)
    if rt.m_any(m47):
        # line 256: store
        _t122 = v_c26
        rt.st(p_c, ((v_r2 * s_n) + v_q6), _t122, m47, (F, 86, m47, ()))
    # line 257: if
    _t123 = (v_r2 < s_m)
    _t124 = (_t123 & (v_q7 < s_n))
    m48 = rt.m_and(None, _t124)
    if rt.m_any(m48):
        # line 257: store
        _t125 = v_c27
        rt.st(p_c, ((v_r2 * s_n) + v_q7), _t125, m48, (F, 87, m48, ()))
    # line 258: if
    _t126 = (v_r3 < s_m)
    _t127 = (_t126 & (v_q0 < s_n))
    m49 = rt.m_and(None, _t127)
    if rt.m_any(m49):
        # line 258: store
        _t128 = v_c30
        rt.st(p_c, ((v_r3 * s_n) + v_q0), _t128, m49, (F, 88, m49, ()))
    # line 259: if
    _t129 = (v_r3 < s_m)
    _t130 = (_t129 & (v_q1 < s_n))
    m50 = rt.m_and(None, _t130)
    if rt.m_any(m50):
        # line 259: store
        _t131 = v_c31
        rt.st(p_c, ((v_r3 * s_n) + v_q1), _t131, m50, (F, 89, m50, ()))
    # line 260: if
    _t132 = (v_r3 < s_m)
    _t133 = (_t132 & (v_q2 < s_n))
    m51 = rt.m_and(None, _t133)
    if rt.m_any(m51):
        # line 260: store
        _t134 = v_c32
        rt.st(p_c, ((v_r3 * s_n) + v_q2), _t134, m51, (F, 90, m51, ()))
    # line 261: if
    _t135 = (v_r3 < s_m)
    _t136 = (_t135 & (v_q3 < s_n))
    m52 = rt.m_and(None, _t136)
    if rt.m_any(m52):
        # line 261: store
        _t137 = v_c33
        rt.st(p_c, ((v_r3 * s_n) + v_q3), _t137, m52, (F, 91, m52, ()))
    # line 262: if
    _t138 = (v_r3 < s_m)
    _t139 = (_t138 & (v_q4 < s_n))
    m53 = rt.m_and(None, _t139)
    if rt.m_any(m53):
        # line 262: store
        _t140 = v_c34
        rt.st(p_c, ((v_r3 * s_n) + v_q4), _t140, m53, (F, 92, m53, ()))
    # line 263: if
    _t141 = (v_r3 < s_m)
    _t142 = (_t141 & (v_q5 < s_n))
    m54 = rt.m_and(None, _t142)
    if rt.m_any(m54):
        # line 263: store
        _t143 = v_c35
        rt.st(p_c, ((v_r3 * s_n) + v_q5), _t143, m54, (F, 93, m54, ()))
    # line 264: if
    _t144 = (v_r3 < s_m)
    _t145 = (_t144 & (v_q6 < s_n))
    m55 = rt.m_and(None, _t145)
    if rt.m_any(m55):
        # line 264: store
        _t146 = v_c36
        rt.st(p_c, ((v_r3 * s_n) + v_q6), _t146, m55, (F, 94, m55, ()))
    # line 265: if
    _t147 = (v_r3 < s_m)
    _t148 = (_t147 & (v_q7 < s_n))
    m56 = rt.m_and(None, _t148)
    if rt.m_any(m56):
        # line 265: store
        _t149 = v_c37
        rt.st(p_c, ((v_r3 * s_n) + v_q7), _t149, m56, (F, 95, m56, ()))
    # line 266: if
    _t150 = (v_r4 < s_m)
    _t151 = (_t150 & (v_q0 < s_n))
    m57 = rt.m_and(None, _t151)
    if rt.m_any(m57):
        # line 266: store
        _t152 = v_c40
        rt.st(p_c, ((v_r4 * s_n) + v_q0), _t152, m57, (F, 96, m57, ()))
    # line 267: if
    _t153 = (v_r4 < s_m)
    _t154 = (_t153 & (v_q1 < s_n))
    m58 = rt.m_and(None, _t154)
    if rt.m_any(m58):
        # line 267: store
        _t155 = v_c41
        rt.st(p_c, ((v_r4 * s_n) + v_q1), _t155, m58, (F, 97, m58, ()))
    # line 268: if
    _t156 = (v_r4 < s_m)
    _t157 = (_t156 & (v_q2 < s_n))
    m59 = rt.m_and(None, _t157)
    if rt.m_any(m59):
        # line 268: store
        _t158 = v_c42
        rt.st(p_c, ((v_r4 * s_n) + v_q2), _t158, m59, (F, 98, m59, ()))
    # line 269: if
    _t159 = (v_r4 < s_m)
    _t160 = (_t159 & (v_q3 < s_n))
    m60 = rt.m_and(None, _t160)
    if rt.m_any(m60):
        # line 269: store
        _t161 = v_c43
        rt.st(p_c, ((v_r4 * s_n) + v_q3), _t161, m60, (F, 99, m60, ()))
    # line 270: if
    _t162 = (v_r4 < s_m)
    _t163 = (_t162 & (v_q4 < s_n))
    m61 = rt.m_and(None, _t163)
    if rt.m_any(m61):
        # line 270: store
        _t164 = v_c44
        rt.st(p_c, ((v_r4 * s_n) + v_q4), _t164, m61, (F, 100, m61, ()))
    # line 271: if
    _t165 = (v_r4 < s_m)
    _t166 = (_t165 & (v_q5 < s_n))
    m62 = rt.m_and(None, _t166)
    if rt.m_any(m62):
        # line 271: store
        _t167 = v_c45
        rt.st(p_c, ((v_r4 * s_n) + v_q5), _t167, m62, (F, 101, m62, ()))
    # line 272: if
    _t168 = (v_r4 < s_m)
    _t169 = (_t168 & (v_q6 < s_n))
    m63 = rt.m_and(None, _t169)
    if rt.m_any(m63):
        # line 272: store
        _t170 = v_c46
        rt.st(p_c, ((v_r4 * s_n) + v_q6), _t170, m63, (F, 102, m63, ()))
    # line 273: if
    _t171 = (v_r4 < s_m)
    _t172 = (_t171 & (v_q7 < s_n))
    m64 = rt.m_and(None, _t172)
    if rt.m_any(m64):
        # line 273: store
        _t173 = v_c47
        rt.st(p_c, ((v_r4 * s_n) + v_q7), _t173, m64, (F, 103, m64, ()))
    # line 274: if
    _t174 = (v_r5 < s_m)
    _t175 = (_t174 & (v_q0 < s_n))
    m65 = rt.m_and(None, _t175)
    if rt.m_any(m65):
        # line 274: store
        _t176 = v_c50
        rt.st(p_c, ((v_r5 * s_n) + v_q0), _t176, m65, (F, 104, m65, ()))
    # line 275: if
    _t177 = (v_r5 < s_m)
    _t178 = (_t177 & (v_q1 < s_n))
    m66 = rt.m_and(None, _t178)
    if rt.m_any(m66):
        # line 275: store
        _t179 = v_c51
        rt.st(p_c, ((v_r5 * s_n) + v_q1), _t179, m66, (F, 105, m66, ()))
    # line 276: if
    _t180 = (v_r5 < s_m)
    _t181 = (_t180 & (v_q2 < s_n))
    m67 = rt.m_and(None, _t181)
    if rt.m_any(m67):
        # line 276: store
        _t182 = v_c52
        rt.st(p_c, ((v_r5 * s_n) + v_q2), _t182, m67, (F, 106, m67, ()))
    # line 277: if
    _t183 = (v_r5 < s_m)
    _t184 = (_t183 & (v_q3 < s_n))
    m68 = rt.m_and(None, _t184)
    if rt.m_any(m68):
        # line 277: store
        _t185 = v_c53
        rt.st(p_c, ((v_r5 * s_n) + v_q3), _t185, m68, (F, 107, m68, ()))
    # line 278: if
    _t186 = (v_r5 < s_m)
    _t187 = (_t186 & (v_q4 < s_n))
    m69 = rt.m_and(None, _t187)
    if rt.m_any(m69):
        # line 278: store
        _t188 = v_c54
        rt.st(p_c, ((v_r5 * s_n) + v_q4), _t188, m69, (F, 108, m69, ()))
    # line 279: if
    _t189 = (v_r5 < s_m)
    _t190 = (_t189 & (v_q5 < s_n))
    m70 = rt.m_and(None, _t190)
    if rt.m_any(m70):
        # line 279: store
        _t191 = v_c55
        rt.st(p_c, ((v_r5 * s_n) + v_q5), _t191, m70, (F, 109, m70, ()))
    # line 280: if
    _t192 = (v_r5 < s_m)
    _t193 = (_t192 & (v_q6 < s_n))
    m71 = rt.m_and(None, _t193)
    if rt.m_any(m71):
        # line 280: store
        _t194 = v_c56
        rt.st(p_c, ((v_r5 * s_n) + v_q6), _t194, m71, (F, 110, m71, ()))
    # line 281: if
    _t195 = (v_r5 < s_m)
    _t196 = (_t195 & (v_q7 < s_n))
    m72 = rt.m_and(None, _t196)
    if rt.m_any(m72):
        # line 281: store
        _t197 = v_c57
        rt.st(p_c, ((v_r5 * s_n) + v_q7), _t197, m72, (F, 111, m72, ()))
    # line 282: if
    _t198 = (v_r6 < s_m)
    _t199 = (_t198 & (v_q0 < s_n))
    m73 = rt.m_and(None, _t199)
    if rt.m_any(m73):
        # line 282: store
        _t200 = v_c60
        rt.st(p_c, ((v_r6 * s_n) + v_q0), _t200, m73, (F, 112, m73, ()))
    # line 283: if
    _t201 = (v_r6 < s_m)
    _t202 = (_t201 & (v_q1 < s_n))
    m74 = rt.m_and(None, _t202)
    if rt.m_any(m74):
        # line 283: store
        _t203 = v_c61
        rt.st(p_c, ((v_r6 * s_n) + v_q1), _t203, m74, (F, 113, m74, ()))
    # line 284: if
    _t204 = (v_r6 < s_m)
    _t205 = (_t204 & (v_q2 < s_n))
    m75 = rt.m_and(None, _t205)
    if rt.m_any(m75):
        # line 284: store
        _t206 = v_c62
        rt.st(p_c, ((v_r6 * s_n) + v_q2), _t206, m75, (F, 114, m75, ()))
    # line 285: if
    _t207 = (v_r6 < s_m)
    _t208 = (_t207 & (v_q3 < s_n))
    m76 = rt.m_and(None, _t208)
    if rt.m_any(m76):
        # line 285: store
        _t209 = v_c63
        rt.st(p_c, ((v_r6 * s_n) + v_q3), _t209, m76, (F, 115, m76, ()))
    # line 286: if
    _t210 = (v_r6 < s_m)
    _t211 = (_t210 & (v_q4 < s_n))
    m77 = rt.m_and(None, _t211)
    if rt.m_any(m77):
        # line 286: store
        _t212 = v_c64
        rt.st(p_c, ((v_r6 * s_n) + v_q4), _t212, m77, (F, 116, m77, ()))
    # line 287: if
    _t213 = (v_r6 < s_m)
    _t214 = (_t213 & (v_q5 < s_n))
    m78 = rt.m_and(None, _t214)
    if rt.m_any(m78):
        # line 287: store
        _t215 = v_c65
        rt.st(p_c, ((v_r6 * s_n) + v_q5), _t215, m78, (F, 117, m78, ()))
    # line 288: if
    _t216 = (v_r6 < s_m)
    _t217 = (_t216 & (v_q6 < s_n))
    m79 = rt.m_and(None, _t217)
    if rt.m_any(m79):
        # line 288: store
        _t218 = v_c66
        rt.st(p_c, ((v_r6 * s_n) + v_q6), _t218, m79, (F, 118, m79, ()))
    # line 289: if
    _t219 = (v_r6 < s_m)
    _t220 = (_t219 & (v_q7 < s_n))
    m80 = rt.m_and(None, _t220)
    if rt.m_any(m80):
        # line 289: store
        _t221 = v_c67
        rt.st(p_c, ((v_r6 * s_n) + v_q7), _t221, m80, (F, 119, m80, ()))
    # line 290: if
    _t222 = (v_r7 < s_m)
    _t223 = (_t222 & (v_q0 < s_n))
    m81 = rt.m_and(None, _t223)
    if rt.m_any(m81):
        # line 290: store
        _t224 = v_c70
        rt.st(p_c, ((v_r7 * s_n) + v_q0), _t224, m81, (F, 120, m81, ()))
    # line 291: if
    _t225 = (v_r7 < s_m)
    _t226 = (_t225 & (v_q1 < s_n))
    m82 = rt.m_and(None, _t226)
    if rt.m_any(m82):
        # line 291: store
        _t227 = v_c71
        rt.st(p_c, ((v_r7 * s_n) + v_q1), _t227, m82, (F, 121, m82, ()))
    # line 292: if
    _t228 = (v_r7 < s_m)
    _t229 = (_t228 & (v_q2 < s_n))
    m83 = rt.m_and(None, _t229)
    if rt.m_any(m83):
        # line 292: store
        _t230 = v_c72
        rt.st(p_c, ((v_r7 * s_n) + v_q2), _t230, m83, (F, 122, m83, ()))
    # line 293: if
    _t231 = (v_r7 < s_m)
    _t232 = (_t231 & (v_q3 < s_n))
    m84 = rt.m_and(None, _t232)
    if rt.m_any(m84):
        # line 293: store
        _t233 = v_c73
        rt.st(p_c, ((v_r7 * s_n) + v_q3), _t233, m84, (F, 123, m84, ()))
    # line 294: if
    _t234 = (v_r7 < s_m)
    _t235 = (_t234 & (v_q4 < s_n))
    m85 = rt.m_and(None, _t235)
    if rt.m_any(m85):
        # line 294: store
        _t236 = v_c74
        rt.st(p_c, ((v_r7 * s_n) + v_q4), _t236, m85, (F, 124, m85, ()))
    # line 295: if
    _t237 = (v_r7 < s_m)
    _t238 = (_t237 & (v_q5 < s_n))
    m86 = rt.m_and(None, _t238)
    if rt.m_any(m86):
        # line 295: store
        _t239 = v_c75
        rt.st(p_c, ((v_r7 * s_n) + v_q5), _t239, m86, (F, 125, m86, ()))
    # line 296: if
    _t240 = (v_r7 < s_m)
    _t241 = (_t240 & (v_q6 < s_n))
    m87 = rt.m_and(None, _t241)
    if rt.m_any(m87):
        # line 296: store
        _t242 = v_c76
        rt.st(p_c, ((v_r7 * s_n) + v_q6), _t242, m87, (F, 126, m87, ()))
    # line 297: if
    _t243 = (v_r7 < s_m)
    _t244 = (_t243 & (v_q7 < s_n))
    m88 = rt.m_and(None, _t244)
    if rt.m_any(m88):
        # line 297: store
        _t245 = v_c77
        rt.st(p_c, ((v_r7 * s_n) + v_q7), _t245, m88, (F, 127, m88, ()))
