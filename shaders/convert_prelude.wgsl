// Helpers for the conversion kernels locus generates per pair of element types
// (src/buffer/convert_kernels.rs): Rust's `as` semantics in u32 arithmetic only, since
// WGSL has no 64-bit types and its float conversions leave NaN and out-of-range values
// to the implementation. A 64-bit value is a vec2<u32>: x the low word, y the high word.

fn shl64(v: vec2<u32>, r: u32) -> vec2<u32> {
    // r in 0..63 (WGSL takes shift amounts modulo 32: each case shifts by less).
    if (r == 0u) { return v; }
    if (r >= 32u) { return vec2<u32>(0u, v.x << (r - 32u)); }
    return vec2<u32>(v.x << r, (v.y << r) | (v.x >> (32u - r)));
}

fn shr64(v: vec2<u32>, r: u32) -> vec2<u32> {
    // r in 0..63.
    if (r == 0u) { return v; }
    if (r >= 32u) { return vec2<u32>(v.y >> (r - 32u), 0u); }
    return vec2<u32>((v.x >> r) | (v.y << (32u - r)), v.y >> r);
}

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}

fn neg64(v: vec2<u32>) -> vec2<u32> {
    return add64(~v, vec2<u32>(1u, 0u));
}

fn lt64(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn clz64(v: vec2<u32>) -> u32 {
    if (v.y != 0u) { return countLeadingZeros(v.y); }
    return 32u + countLeadingZeros(v.x);
}

// v >> r rounded to nearest, ties to even; r in 1..63.
fn shr64_rne(v: vec2<u32>, r: u32) -> vec2<u32> {
    let q = shr64(v, r);
    let rem = sub64(v, shl64(q, r));
    let half = shl64(vec2<u32>(1u, 0u), r - 1u);
    let tie = rem.x == half.x && rem.y == half.y;
    if (lt64(half, rem) || (tie && (q.x & 1u) == 1u)) {
        return add64(q, vec2<u32>(1u, 0u));
    }
    return q;
}

// An integer given as sign and magnitude, rounded to f32 bits (`as`: nearest, ties even).
fn int_to_f32(neg: bool, m: vec2<u32>) -> u32 {
    if (m.x == 0u && m.y == 0u) { return 0u; }
    let msb = 63u - clz64(m);
    var q: vec2<u32>;
    if (msb <= 23u) { q = shl64(m, 23u - msb); } else { q = shr64_rne(m, msb - 23u); }
    // q holds the implicit bit (2^23); a rounding carry to 2^24 moves into the exponent.
    return (((msb + 126u) << 23u) + q.x) | select(0u, 0x80000000u, neg);
}

// The same to f64 bits.
fn int_to_f64(neg: bool, m: vec2<u32>) -> vec2<u32> {
    if (m.x == 0u && m.y == 0u) { return vec2<u32>(0u, 0u); }
    let msb = 63u - clz64(m);
    var q: vec2<u32>;
    if (msb <= 52u) { q = shl64(m, 52u - msb); } else { q = shr64_rne(m, msb - 52u); }
    var bits = add64(vec2<u32>(0u, (msb + 1022u) << 20u), q);
    bits.y = bits.y | select(0u, 0x80000000u, neg);
    return bits;
}

// f32 bits to f64 bits (exact; a NaN keeps its payload and becomes quiet, as on x86).
fn f32_to_f64(w: u32) -> vec2<u32> {
    let s = w & 0x80000000u;
    let e = (w >> 23u) & 0xffu;
    var m = w & 0x7fffffu;
    if (e == 255u) {
        let quiet = select(0u, 0x80000u, m != 0u);
        return vec2<u32>(m << 29u, s | 0x7ff00000u | quiet | (m >> 3u));
    }
    var big_e: u32;
    if (e == 0u) {
        if (m == 0u) { return vec2<u32>(0u, s); }
        // Subnormal: normalise (the leading one to bit 23).
        let shift = countLeadingZeros(m) - 8u;
        m = (m << shift) & 0x7fffffu;
        big_e = 897u - shift;
    } else {
        big_e = e + 896u;
    }
    return vec2<u32>(m << 29u, s | (big_e << 20u) | (m >> 3u));
}

// f64 bits to f32 bits (`as`: nearest, ties even; overflow to infinity, underflow
// through the subnormals to zero; a NaN keeps the top of its payload, quiet).
fn f64_to_f32(v: vec2<u32>) -> u32 {
    let s = v.y & 0x80000000u;
    let big_e = (v.y >> 20u) & 0x7ffu;
    let mh = v.y & 0xfffffu;
    if (big_e == 0x7ffu) {
        if (mh != 0u || v.x != 0u) {
            return s | 0x7fc00000u | (mh << 3u) | (v.x >> 29u);
        }
        return s | 0x7f800000u;
    }
    if (big_e == 0u) { return s; } // zero, or an f64 subnormal: far below f32's least
    let e = i32(big_e) - 896;
    if (e >= 255) { return s | 0x7f800000u; }
    let sig = vec2<u32>(v.x, mh | 0x100000u);
    var r = 29u;
    var base = 0u;
    if (e >= 1) { base = u32(e - 1) << 23u; } else { r = u32(30 - e); }
    if (r >= 55u) { return s; }
    // The implicit bit lands in the exponent (base counts one less); a rounding carry
    // goes on into it, up to infinity.
    return s | (base + shr64_rne(sig, r).x);
}

// A float's integer part, toward zero: x is the unbiased exponent, p the mantissa bits.
struct Whole { nan: bool, neg: bool, big: bool, mag: vec2<u32> }

fn whole(nan: bool, neg: bool, inf: bool, x: i32, sig: vec2<u32>, p: i32) -> Whole {
    if (nan) { return Whole(true, neg, false, vec2<u32>(0u, 0u)); }
    if (inf || x >= 64) { return Whole(false, neg, true, vec2<u32>(0u, 0u)); }
    if (x < 0) { return Whole(false, neg, false, vec2<u32>(0u, 0u)); }
    let k = x - p;
    if (k >= 0) { return Whole(false, neg, false, shl64(sig, u32(k))); }
    return Whole(false, neg, false, shr64(sig, u32(-k)));
}

fn whole_f32(w: u32) -> Whole {
    let e = (w >> 23u) & 0xffu;
    let m = w & 0x7fffffu;
    let neg = (w >> 31u) == 1u;
    if (e == 0u) { return whole(false, neg, false, -1, vec2<u32>(0u, 0u), 23); }
    return whole(e == 255u && m != 0u, neg, e == 255u, i32(e) - 127, vec2<u32>(m | 0x800000u, 0u), 23);
}

fn whole_f64(v: vec2<u32>) -> Whole {
    let big_e = (v.y >> 20u) & 0x7ffu;
    let mh = v.y & 0xfffffu;
    let neg = (v.y >> 31u) == 1u;
    if (big_e == 0u) { return whole(false, neg, false, -1, vec2<u32>(0u, 0u), 52); }
    let special = big_e == 0x7ffu;
    return whole(special && (mh != 0u || v.x != 0u), neg, special, i32(big_e) - 1023, vec2<u32>(v.x, mh | 0x100000u), 52);
}

// Saturating to each integer type, NaN to 0 (`as`).
fn sat_u32(h: Whole) -> u32 {
    if (h.nan || h.neg) { return 0u; }
    if (h.big || h.mag.y != 0u) { return 0xffffffffu; }
    return h.mag.x;
}

fn sat_u64(h: Whole) -> vec2<u32> {
    if (h.nan || h.neg) { return vec2<u32>(0u, 0u); }
    if (h.big) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
    return h.mag;
}

fn sat_i32(h: Whole) -> u32 {
    if (h.nan) { return 0u; }
    if (!h.neg) {
        if (h.big || h.mag.y != 0u || h.mag.x > 0x7fffffffu) { return 0x7fffffffu; }
        return h.mag.x;
    }
    if (h.big || h.mag.y != 0u || h.mag.x >= 0x80000000u) { return 0x80000000u; }
    return 0u - h.mag.x;
}

fn sat_i64(h: Whole) -> vec2<u32> {
    if (h.nan) { return vec2<u32>(0u, 0u); }
    if (!h.neg) {
        if (h.big || h.mag.y > 0x7fffffffu) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
        return h.mag;
    }
    if (h.big || h.mag.y >= 0x80000000u) { return vec2<u32>(0u, 0x80000000u); }
    return neg64(h.mag);
}
