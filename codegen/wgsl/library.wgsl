// WGSL support library of codegen/wgsl: the helpers Rust's semantics need that are not a
// sequence of ir/rules.py or ir/mathlib.py (exact f32 `/`, `%`, `sqrt` and `mul_add` in integer
// arithmetic, since WGSL promises neither correctly rounded `/` and `sqrt` nor a single-rounding
// `fma`). Each helper starts at a `// @helper NAME [needs DEP ...]` line and runs to the next;
// the emitter copies the ones a module uses, dependencies first (codegen/wgsl/library.py).

// @helper gi_fdiv_f32
// Correctly rounded f32 division (round to nearest even, subnormals kept), by long
// division of the significands: WGSL only promises 2.5 ulp for `/`.
fn gi_fdiv_f32(a: f32, b: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let sign = (ua ^ ub) & 0x80000000u;
    let aa = ua & 0x7fffffffu;
    let ab = ub & 0x7fffffffu;
    if (aa > 0x7f800000u || ab > 0x7f800000u) { return bitcast<f32>(0x7fc00000u); }
    if (aa == 0x7f800000u) {
        if (ab == 0x7f800000u) { return bitcast<f32>(0x7fc00000u); }
        return bitcast<f32>(sign | 0x7f800000u);
    }
    if (ab == 0x7f800000u) { return bitcast<f32>(sign); }
    if (ab == 0u) {
        if (aa == 0u) { return bitcast<f32>(0x7fc00000u); }
        return bitcast<f32>(sign | 0x7f800000u);
    }
    if (aa == 0u) { return bitcast<f32>(sign); }
    // significands with the leading one at bit 23 (subnormals normalised)
    var ma = aa & 0x7fffffu;
    var ea = i32(aa >> 23u);
    if (ea == 0i) { ea = 1i; while (ma < 0x800000u) { ma = ma << 1u; ea = ea - 1i; } } else { ma = ma | 0x800000u; }
    var mb = ab & 0x7fffffu;
    var eb = i32(ab >> 23u);
    if (eb == 0i) { eb = 1i; while (mb < 0x800000u) { mb = mb << 1u; eb = eb - 1i; } } else { mb = mb | 0x800000u; }
    var e = ea - eb + 127i;
    if (ma < mb) { ma = ma << 1u; e = e - 1i; }
    // 26 quotient bits (24 kept + 2 for rounding); the remainder decides ties
    var r = ma;
    var q = 0u;
    for (var i = 0u; i < 26u; i = i + 1u) {
        q = q << 1u;
        if (r >= mb) { r = r - mb; q = q | 1u; }
        r = r << 1u;
    }
    if (e >= 255i) { return bitcast<f32>(sign | 0x7f800000u); }
    let drop = u32(min(2i + max(0i, 1i - e), 31i));
    var kept = q >> drop;
    let rest = q & ((1u << drop) - 1u);
    let half = 1u << (drop - 1u);
    if (rest > half || (rest == half && (r != 0u || (kept & 1u) == 1u))) { kept = kept + 1u; }
    // the leading one of a normal result lands in the exponent field; a carry from
    // rounding moves to the next binade (or to infinity) by itself
    return bitcast<f32>(sign | ((u32(max(e, 1i) - 1i) << 23u) + kept));
}

// @helper gi_sqrt_f32
// Correctly rounded square root, digit by digit on the significand: WGSL does not
// promise a correctly rounded sqrt.
fn gi_sqrt_f32(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    if ((u & 0x7fffffffu) == 0u || u == 0x7f800000u) { return x; }
    if (u > 0x7f800000u) { return bitcast<f32>(0x7fc00000u); }
    var m = u & 0x7fffffu;
    var e = i32(u >> 23u);
    if (e == 0i) { e = 1i; while (m < 0x800000u) { m = m << 1u; e = e - 1i; } } else { m = m | 0x800000u; }
    // x = m * 2^p with p even, m in [2^23, 2^25)
    var p = e - 150i;
    if ((p & 1i) != 0i) { m = m << 1u; p = p - 1i; }
    // root = floor(sqrt(m * 2^26)), in [2^24, 2^26): 26 two-bit digits, the top 13 from m
    var root = 0u;
    var rem = 0u;
    for (var i = 0i; i < 26i; i = i + 1i) {
        let shift = 2i * (25i - i) - 26i;
        var digits = 0u;
        if (shift >= 0i) { digits = (m >> u32(shift)) & 3u; }
        rem = (rem << 2u) | digits;
        let trial = (root << 2u) | 1u;
        if (rem >= trial) { rem = rem - trial; root = (root << 1u) | 1u; } else { root = root << 1u; }
    }
    var drop = 1u;
    if (root >= 0x2000000u) { drop = 2u; }
    var kept = root >> drop;
    let rest = root & ((1u << drop) - 1u);
    let half = 1u << (drop - 1u);
    if (rest > half || (rest == half && (rem != 0u || (kept & 1u) == 1u))) { kept = kept + 1u; }
    let biased = p / 2i - 13i + i32(drop) + 150i;
    return bitcast<f32>((u32(biased - 1i) << 23u) + kept);
}

// @helper gi_fmod_f32
// Rust's f32 `%`: the exact truncated remainder (WGSL's `%` is x - y * trunc(x / y),
// which rounds). Shift-and-subtract on the significands.
fn gi_fmod_f32(x: f32, y: f32) -> f32 {
    let ux = bitcast<u32>(x);
    let sx = ux & 0x80000000u;
    let ax = ux & 0x7fffffffu;
    let ay = bitcast<u32>(y) & 0x7fffffffu;
    if (ay == 0u || ax >= 0x7f800000u || ay > 0x7f800000u) { return bitcast<f32>(0x7fc00000u); }
    if (ax < ay) { return x; }
    var mx = ax & 0x7fffffu;
    var ex = i32(ax >> 23u);
    if (ex == 0i) { ex = 1i; while (mx < 0x800000u) { mx = mx << 1u; ex = ex - 1i; } } else { mx = mx | 0x800000u; }
    var my = ay & 0x7fffffu;
    var ey = i32(ay >> 23u);
    if (ey == 0i) { ey = 1i; while (my < 0x800000u) { my = my << 1u; ey = ey - 1i; } } else { my = my | 0x800000u; }
    for (; ex > ey; ex = ex - 1i) {
        if (mx >= my) { mx = mx - my; }
        if (mx == 0u) { return bitcast<f32>(sx); }
        mx = mx << 1u;
    }
    if (mx >= my) { mx = mx - my; }
    if (mx == 0u) { return bitcast<f32>(sx); }
    while (mx < 0x800000u) { mx = mx << 1u; ex = ex - 1i; }
    if (ex >= 1i) { return bitcast<f32>(sx | ((u32(ex - 1i) << 23u) + mx)); }
    return bitcast<f32>(sx | (mx >> u32(1i - ex)));
}

// @helper gi_u64
// 64-bit unsigned integers as vec2<u32>(low word, high word), for the exact fma.
fn gi_u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn gi_u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn gi_u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn gi_u64_shl(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) { return a; }
    if (s >= 64u) { return vec2<u32>(0u, 0u); }
    if (s >= 32u) { return vec2<u32>(0u, a.x << (s - 32u)); }
    return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}

fn gi_u64_shr(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) { return a; }
    if (s >= 64u) { return vec2<u32>(0u, 0u); }
    if (s >= 32u) { return vec2<u32>(a.y >> (s - 32u), 0u); }
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
}

fn gi_u64_clz(a: vec2<u32>) -> u32 {
    if (a.y != 0u) { return countLeadingZeros(a.y); }
    return 32u + countLeadingZeros(a.x);
}

// Significand and exponent of a finite nonzero magnitude: value = m * 2^x, leading one
// moved to bit 61 of a 64-bit word.
fn gi_u64_unpack_f32(bits: u32) -> vec3<u32> {
    let e = bits >> 23u;
    var m = bits & 0x7fffffu;
    if (e != 0u) { m = m | 0x800000u; }
    let w = vec2<u32>(m, 0u);
    let sh = gi_u64_clz(w) - 2u;
    let n = gi_u64_shl(w, sh);
    return vec3<u32>(n.x, n.y, bitcast<u32>(i32(max(e, 1u)) - 150i - i32(sh)));
}

// @helper gi_fma_f32 needs gi_u64
// Rust mul_add: a * b + c with a single rounding. WGSL's fma may round twice (lavapipe
// does), so the exact product and sum are formed in 64-bit integer arithmetic.
fn gi_fma_f32(a: f32, b: f32, c: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let uc = bitcast<u32>(c);
    let aa = ua & 0x7fffffffu;
    let ab = ub & 0x7fffffffu;
    let ac = uc & 0x7fffffffu;
    let sp = (ua ^ ub) & 0x80000000u;
    let sc = uc & 0x80000000u;
    if (aa > 0x7f800000u || ab > 0x7f800000u || ac > 0x7f800000u) { return bitcast<f32>(0x7fc00000u); }
    if (aa == 0x7f800000u || ab == 0x7f800000u) {
        if (aa == 0u || ab == 0u || (ac == 0x7f800000u && sc != sp)) { return bitcast<f32>(0x7fc00000u); }
        return bitcast<f32>(sp | 0x7f800000u);
    }
    if (ac == 0x7f800000u) { return c; }
    if (aa == 0u || ab == 0u) {
        if (ac == 0u) { return bitcast<f32>(sp & sc); }
        return c;
    }
    // exact 48-bit product of the 24-bit significands, from 16-bit limbs
    let ma = (aa & 0x7fffffu) | select(0u, 0x800000u, aa >= 0x800000u);
    let mb = (ab & 0x7fffffu) | select(0u, 0x800000u, ab >= 0x800000u);
    let mid = (ma >> 16u) * (mb & 0xffffu) + (ma & 0xffffu) * (mb >> 16u);
    var p = gi_u64_add(vec2<u32>((ma & 0xffffu) * (mb & 0xffffu), (ma >> 16u) * (mb >> 16u)),
                       vec2<u32>(mid << 16u, mid >> 16u));
    let shp = gi_u64_clz(p) - 2u;
    p = gi_u64_shl(p, shp);
    var xp = i32(max(aa >> 23u, 1u)) + i32(max(ab >> 23u, 1u)) - 300i - i32(shp);
    // the addend, leading one at bit 61 as well (zero contributes nothing)
    var q = vec2<u32>(0u, 0u);
    var xq = xp;
    if (ac != 0u) {
        let u = gi_u64_unpack_f32(ac);
        q = u.xy;
        xq = bitcast<i32>(u.z);
    }
    // big is the larger magnitude; small is shifted to its scale, lost bits kept as a sticky one
    var big = p;
    var xb = xp;
    var sb = sp;
    var small = q;
    var xs = xq;
    if (xq > xp || (xq == xp && gi_u64_lt(p, q))) {
        big = q; xb = xq; sb = sc; small = p; xs = xp;
    }
    let d = u32(xb - xs);
    let shifted = gi_u64_shr(small, d);
    if (d >= 64u || gi_u64_lt(gi_u64_shl(shifted, d), small)) { small = shifted | vec2<u32>(1u, 0u); } else { small = shifted; }
    var r = gi_u64_add(big, small);
    if (sp != sc) { r = gi_u64_sub(big, small); }
    if (r.x == 0u && r.y == 0u) { return 0.0f; }
    let lead = 63i - i32(gi_u64_clz(r));
    let e = lead + xb + 127i;
    if (e >= 255i) { return bitcast<f32>(sb | 0x7f800000u); }
    var drop = lead - 23i;
    if (e < 1i) { drop = drop + 1i - e; }
    var kept = 0u;
    if (drop <= 0i) {
        kept = gi_u64_shl(r, u32(-drop)).x;
    } else if (drop < 64i) {
        kept = gi_u64_shr(r, u32(drop)).x;
        let rest = gi_u64_sub(r, gi_u64_shl(vec2<u32>(kept, 0u), u32(drop)));
        let half = gi_u64_shl(vec2<u32>(1u, 0u), u32(drop - 1i));
        if (gi_u64_lt(half, rest) || (all(rest == half) && (kept & 1u) == 1u)) { kept = kept + 1u; }
    }
    return bitcast<f32>(sb | ((u32(max(e, 1i) - 1i) << 23u) + kept));
}

// @helper gi_floor_f32
// floor, ceil and trunc for drivers that flush subnormal inputs (exact_subnormals: a
// flushing driver gives -0 for floor(-1e-45), Rust -1): a subnormal's result decided on
// the bits, as arithmetic on the sign bit rather than a select: Mesa's NIR (typeless)
// rewrites a select between the bit patterns of -1.0 and 0.0 as `-f32(c)`, a -0.0.
fn gi_floor_f32(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    if ((u & 0x7f800000u) != 0u || (u & 0x7fffffu) == 0u) { return floor(x); }
    return bitcast<f32>((u >> 31u) * 0xbf800000u);
}

// @helper gi_ceil_f32
fn gi_ceil_f32(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    if ((u & 0x7f800000u) != 0u || (u & 0x7fffffu) == 0u) { return ceil(x); }
    return bitcast<f32>(0x3f800000u + (u >> 31u) * 0x40800000u);
}

// @helper gi_trunc_f32
fn gi_trunc_f32(x: f32) -> f32 {
    let u = bitcast<u32>(x);
    if ((u & 0x7f800000u) != 0u || (u & 0x7fffffu) == 0u) { return trunc(x); }
    return bitcast<f32>(u & 0x80000000u);
}
