/* absmc native back end: integers of BK 64-bit words, for values past 128 bits (Promela
 * channels packed into one variable, e.g. 160 bits for [10] of { mtype, byte }; GCL ranges
 * beyond 2^127). The generated code defines BK and includes this after runtime_head.c only
 * when the model has such values (cgen.py). A big_t is two's complement, least significant
 * word first; the semantics are ir/intsem.py's (C division and remainder, arithmetic right
 * shift, a left shift by a negative count or by more than 4096 bits gives 0), and an exact
 * result that leaves BK words sets C->ovf (the caller falls back to Python), as ck_add128 does
 * past 128 bits. A variable of k > 2 words takes k int64 slots of the unpacked state (b_load,
 * b_store). */

typedef struct { uint64_t w[BK]; } big_t;

#define B_ONES (~UINT64_C(0))
#define B_BITS (64 * BK)

static inline big_t b_of64(int64_t x) {
    big_t r;
    r.w[0] = (uint64_t)x;
    for (int i = 1; i < BK; i++) r.w[i] = x < 0 ? B_ONES : 0;
    return r;
}
static inline big_t b_of128(__int128 x) {
    big_t r;
    r.w[0] = (uint64_t)x;
    r.w[1] = (uint64_t)(x >> 64);
    for (int i = 2; i < BK; i++) r.w[i] = x < 0 ? B_ONES : 0;
    return r;
}
static inline int b_neg_p(big_t a) { return (int64_t)a.w[BK - 1] < 0; }
/* the low 64 / 128 bits (the value itself when it fits them) */
static inline int64_t b_lo64(big_t a) { return (int64_t)a.w[0]; }
static inline __int128 b_lo128(big_t a) { return W128(a.w[1], a.w[0]); }
/* whether the value fits k words (sign-extended) */
static inline int b_fits(big_t a, int k) {
    uint64_t fill = (int64_t)a.w[k - 1] < 0 ? B_ONES : 0;
    for (int i = k; i < BK; i++)
        if (a.w[i] != fill) return 0;
    return 1;
}
/* a variable of k words at v[0 .. k-1] (low word first), and back */
static inline big_t b_load(const int64_t *v, int k) {
    big_t r;
    for (int i = 0; i < k; i++) r.w[i] = (uint64_t)v[i];
    for (int i = k; i < BK; i++) r.w[i] = v[k - 1] < 0 ? B_ONES : 0;
    return r;
}
static inline void b_store(int64_t *t, big_t a, int k) {
    for (int i = 0; i < k; i++) t[i] = (int64_t)a.w[i];
}
static inline int b_is0(big_t a) {
    uint64_t o = 0;
    for (int i = 0; i < BK; i++) o |= a.w[i];
    return o == 0;
}
static inline int b_cmp(big_t a, big_t b) {
    int na = b_neg_p(a), nb = b_neg_p(b);
    if (na != nb) return na ? -1 : 1;
    for (int i = BK - 1; i >= 0; i--)
        if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    return 0;
}
static inline big_t b_and(big_t a, big_t b) {
    for (int i = 0; i < BK; i++) a.w[i] &= b.w[i];
    return a;
}
static inline big_t b_or(big_t a, big_t b) {
    for (int i = 0; i < BK; i++) a.w[i] |= b.w[i];
    return a;
}
static inline big_t b_xor(big_t a, big_t b) {
    for (int i = 0; i < BK; i++) a.w[i] ^= b.w[i];
    return a;
}
static inline big_t b_not(big_t a) {
    for (int i = 0; i < BK; i++) a.w[i] = ~a.w[i];
    return a;
}
/* a + b and a - b modulo 2^(64 BK) */
static inline big_t b_addu(big_t a, big_t b) {
    big_t r;
    unsigned c = 0;
    for (int i = 0; i < BK; i++) {
        uint64_t s = a.w[i] + b.w[i];
        unsigned c1 = s < a.w[i];
        r.w[i] = s + c;
        c = c1 | (r.w[i] < s);
    }
    return r;
}
static inline big_t b_subu(big_t a, big_t b) {
    big_t r;
    unsigned c = 0;
    for (int i = 0; i < BK; i++) {
        uint64_t d = a.w[i] - b.w[i];
        unsigned c1 = a.w[i] < b.w[i];
        r.w[i] = d - c;
        c = c1 | (d < c);
    }
    return r;
}
static inline big_t b_add(ctx_t *C, big_t a, big_t b) {
    big_t r = b_addu(a, b);
    if (b_neg_p(a) == b_neg_p(b) && b_neg_p(r) != b_neg_p(a)) C->ovf = 1;
    return r;
}
static inline big_t b_sub(ctx_t *C, big_t a, big_t b) {
    big_t r = b_subu(a, b);
    if (b_neg_p(a) != b_neg_p(b) && b_neg_p(r) != b_neg_p(a)) C->ovf = 1;
    return r;
}
static inline big_t b_neg(ctx_t *C, big_t a) { return b_sub(C, b_of64(0), a); }

/* magnitudes: |a| as an unsigned BK-word number (|MIN| = 2^(64 BK - 1) fits) */
static inline big_t b_abs(big_t a) {
    if (!b_neg_p(a)) return a;
    unsigned c = 1;
    for (int i = 0; i < BK; i++) {
        a.w[i] = ~a.w[i] + c;
        c = c && a.w[i] == 0;
    }
    return a;
}
/* -m of an unsigned magnitude (two's complement negation, no check) */
static inline big_t b_negm(big_t a) {
    unsigned c = 1;
    for (int i = 0; i < BK; i++) {
        a.w[i] = ~a.w[i] + c;
        c = c && a.w[i] == 0;
    }
    return a;
}
/* the signed value of magnitude m with sign neg; ovf when it does not fit */
static inline big_t b_signed(ctx_t *C, big_t m, int neg) {
    if (b_neg_p(m)) { /* m >= 2^(64 BK - 1): only -2^(64 BK - 1) fits */
        int min = 1;
        for (int i = 0; i < BK - 1; i++) min &= m.w[i] == 0;
        min &= m.w[BK - 1] == (UINT64_C(1) << 63);
        if (!(neg && min)) C->ovf = 1;
        return m;
    }
    return neg ? b_negm(m) : m;
}
static inline big_t b_mul(ctx_t *C, big_t a, big_t b) {
    int neg = b_neg_p(a) != b_neg_p(b);
    big_t x = b_abs(a), y = b_abs(b), r;
    uint64_t p[2 * BK];
    memset(p, 0, sizeof p);
    for (int i = 0; i < BK; i++) {
        if (!x.w[i]) continue;
        uint64_t c = 0;
        for (int j = 0; j < BK; j++) {
            unsigned __int128 t = (unsigned __int128)x.w[i] * y.w[j] + p[i + j] + c;
            p[i + j] = (uint64_t)t;
            c = (uint64_t)(t >> 64);
        }
        p[i + BK] = c;
    }
    for (int i = BK; i < 2 * BK; i++)
        if (p[i]) C->ovf = 1;
    memcpy(r.w, p, sizeof r.w);
    if (b_is0(r)) return r;
    return b_signed(C, r, neg);
}
/* unsigned magnitudes: q = n / d, r = n % d (d != 0), shift and subtract */
static void b_divmod_u(big_t n, big_t d, big_t *q, big_t *r) {
    big_t qq, rr;
    memset(&qq, 0, sizeof qq);
    memset(&rr, 0, sizeof rr);
    int top = B_BITS - 1;
    while (top >= 0 && !((n.w[top / 64] >> (top % 64)) & 1)) top--;
    for (int i = top; i >= 0; i--) {
        for (int k = BK - 1; k > 0; k--) rr.w[k] = (rr.w[k] << 1) | (rr.w[k - 1] >> 63);
        rr.w[0] = (rr.w[0] << 1) | ((n.w[i / 64] >> (i % 64)) & 1);
        int ge = 1;
        for (int k = BK - 1; k >= 0; k--)
            if (rr.w[k] != d.w[k]) { ge = rr.w[k] > d.w[k]; break; }
        if (ge) {
            unsigned c = 0;
            for (int k = 0; k < BK; k++) {
                uint64_t t = rr.w[k] - d.w[k];
                unsigned c1 = rr.w[k] < d.w[k];
                rr.w[k] = t - c;
                c = c1 | (t < c);
            }
            qq.w[i / 64] |= UINT64_C(1) << (i % 64);
        }
    }
    *q = qq;
    *r = rr;
}
static inline big_t b_div(ctx_t *C, big_t a, big_t b) {
    if (b_is0(b)) { C->err = 1; return b; }
    if (b_fits(a, 2) && b_fits(b, 2)) {
        __int128 x = b_lo128(a), y = b_lo128(b);
        if (!(y == -1 && x == I128_MIN)) return b_of128(x / y);
    }
    big_t q, r;
    b_divmod_u(b_abs(a), b_abs(b), &q, &r);
    return b_signed(C, q, b_neg_p(a) != b_neg_p(b));
}
static inline big_t b_mod(ctx_t *C, big_t a, big_t b) {
    if (b_is0(b)) { C->err = 1; return b; }
    if (b_fits(a, 2) && b_fits(b, 2)) {
        __int128 x = b_lo128(a), y = b_lo128(b);
        return y == -1 ? b_of64(0) : b_of128(x % y);
    }
    big_t q, r;
    b_divmod_u(b_abs(a), b_abs(b), &q, &r);
    return b_neg_p(a) ? b_negm(r) : r; /* |r| < |b|: fits */
}
/* a shift count of a wider type as int64: -1 when negative, at most 2^20 (past MAX_SHIFT) */
static inline int64_t b_cnt(big_t a) {
    if (b_neg_p(a)) return -1;
    return b_fits(a, 1) && a.w[0] < (UINT64_C(1) << 20) ? (int64_t)a.w[0] : (1 << 20);
}
static inline int64_t b_cnt128(__int128 a) {
    if (a < 0) return -1;
    return a < (1 << 20) ? (int64_t)a : (1 << 20);
}
/* an index of a wider type as int64 (-1, out of every range, when it does not fit) */
static inline int64_t b_idx(big_t a) { return b_fits(a, 1) ? (int64_t)a.w[0] : -1; }

/* arithmetic shift right by n >= 0 bits (n < B_BITS) */
static inline big_t b_sar(big_t a, int n) {
    big_t r;
    int q = n / 64, s = n % 64;
    uint64_t fill = b_neg_p(a) ? B_ONES : 0;
    for (int i = 0; i < BK; i++) {
        uint64_t lo = i + q < BK ? a.w[i + q] : fill;
        uint64_t hi = i + q + 1 < BK ? a.w[i + q + 1] : fill;
        r.w[i] = s ? (lo >> s) | (hi << (64 - s)) : lo;
    }
    return r;
}
static inline big_t b_shr(big_t a, int64_t n) {
    if (n < 0) return b_of64(0);
    if (n >= B_BITS) return b_of64(b_neg_p(a) ? -1 : 0);
    return b_sar(a, (int)n);
}
static inline big_t b_shl(ctx_t *C, big_t a, int64_t n) {
    if (n < 0 || n > 4096 || b_is0(a)) return b_of64(0);
    if (n >= B_BITS) { C->ovf = 1; return b_of64(0); }
    big_t r;
    int q = (int)n / 64, s = (int)n % 64;
    for (int i = BK - 1; i >= 0; i--) {
        uint64_t hi = i - q >= 0 ? a.w[i - q] : 0;
        uint64_t lo = i - q - 1 >= 0 ? a.w[i - q - 1] : 0;
        r.w[i] = s ? (hi << s) | (lo >> (64 - s)) : hi;
    }
    big_t back = b_sar(r, (int)n);
    for (int i = 0; i < BK; i++)
        if (back.w[i] != a.w[i]) { C->ovf = 1; break; }
    return r;
}
/* v reduced modulo size (> 0) into lo .. lo + size - 1 */
static inline big_t b_wrap(ctx_t *C, big_t v, big_t lo, big_t size) {
    big_t r = b_mod(C, b_sub(C, v, lo), size);
    if (b_neg_p(r)) r = b_add(C, r, size);
    return b_add(C, r, lo);
}
