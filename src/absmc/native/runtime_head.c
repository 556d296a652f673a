/* absmc native back end: the fixed part before the generated model code.
 * The generated part defines NV (variables), NW (64-bit words of a packed state), NCMD
 * (commands), NPROP (selected properties), NFN (process step functions) before this file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#define NVA (NV > 0 ? NV : 1)
#define NWA (NW > 0 ? NW : 1)

typedef struct ctx_s {
    int err;   /* a division by zero happened in the current evaluation */
    int ovf;   /* a value left the 64-bit range: the caller falls back to Python */
    int oom;   /* an allocation failed */
    int ex;    /* an exclusive command was enabled (timeout commands are not tried) */
    /* steps of the top-level successor computation: chain (offset, length) into ch, target */
    int nsteps, capsteps;
    int64_t *sst;
    int32_t *soff, *slen;
    /* chain arena (command indices), reset per successor computation */
    int32_t *ch;
    int nch, capch;
    /* failures: chain, kind, two arguments */
    int nfails, capfails;
    int32_t *foff, *flen, *fkind;
    int64_t *fa, *fb;
    /* the chain a failure met inside a process step function extends */
    int pre_off, pre_len;
    /* output of a process step function: command, next function (-1: none), target */
    int nfn, capfn;
    int32_t *fnci, *fnf;
    int64_t *fnst;
    /* the depth-first stack of an exclusive chain and the (state, function) pairs seen */
    int nstk, capstk;
    int32_t *stoff, *stlen, *stf;
    int64_t *stst;
    int nseen, capseen;
    uint64_t *seenh;
    int32_t *seenf;
    int64_t *seenst;
    int64_t cuts;
} ctx_t;

static int grow(void **p, int *cap, int need, size_t elem) {
    if (need <= *cap) return 1;
    int c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* grow several parallel arrays that share one capacity */
#define GROW1(C, arr, capv, need, T) grow((void **)&(C)->arr, &(capv), (need), sizeof(T))

static int ch_reserve(ctx_t *C, int extra) {
    if (!GROW1(C, ch, C->capch, C->nch + extra, int32_t)) { C->oom = 1; return 0; }
    return 1;
}

/* copy chain (off, len) and append ci; returns the new chain's offset (or -1) */
static int ch_extend(ctx_t *C, int off, int len, int ci) {
    if (!ch_reserve(C, len + 1)) return -1;
    int o = C->nch;
    if (len) memmove(C->ch + o, C->ch + off, (size_t)len * sizeof(int32_t));
    C->ch[o + len] = ci;
    C->nch += len + 1;
    return o;
}

static void add_step(ctx_t *C, int off, int len, const int64_t *t) {
    int n = C->nsteps;
    if (n + 1 > C->capsteps) {
        int cap = C->capsteps, c2;
        c2 = cap;
        if (!grow((void **)&C->soff, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap;
        if (!grow((void **)&C->slen, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap;
        if (!grow((void **)&C->sst, &c2, (n + 1), sizeof(int64_t) * NVA)) { C->oom = 1; return; }
        C->capsteps = c2;
    }
    C->soff[n] = off;
    C->slen[n] = len;
    memcpy(C->sst + (size_t)n * NVA, t, sizeof(int64_t) * NVA);
    C->nsteps = n + 1;
}

static void add_step1(ctx_t *C, int ci, const int64_t *t) {
    int o = ch_extend(C, 0, 0, ci);
    if (o >= 0) add_step(C, o, 1, t);
}

/* a failure of command ci (kind: 1 error condition a, 2 division by zero, 3 failed assertion of
 * property a, 4 value b assigned to variable a outside its range) on the current chain prefix */
static void add_fail(ctx_t *C, int ci, int kind, int64_t a, int64_t b) {
    int n = C->nfails;
    if (n + 1 > C->capfails) {
        int cap = C->capfails, c2;
        c2 = cap; if (!grow((void **)&C->foff, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->flen, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->fkind, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->fa, &c2, n + 1, sizeof(int64_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->fb, &c2, n + 1, sizeof(int64_t))) { C->oom = 1; return; }
        C->capfails = c2;
    }
    int o = ch_extend(C, C->pre_off, C->pre_len, ci);
    if (o < 0) return;
    C->foff[n] = o;
    C->flen[n] = C->pre_len + 1;
    C->fkind[n] = kind;
    C->fa[n] = a;
    C->fb[n] = b;
    C->nfails = n + 1;
}

static void fn_push(ctx_t *C, int ci, const int64_t *t, int f) {
    int n = C->nfn;
    if (n + 1 > C->capfn) {
        int cap = C->capfn, c2;
        c2 = cap; if (!grow((void **)&C->fnci, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->fnf, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->fnst, &c2, n + 1, sizeof(int64_t) * NVA)) { C->oom = 1; return; }
        C->capfn = c2;
    }
    C->fnci[n] = ci;
    C->fnf[n] = f;
    memcpy(C->fnst + (size_t)n * NVA, t, sizeof(int64_t) * NVA);
    C->nfn = n + 1;
}

/* integer semantics of ir/intsem.py on int64 (ovf when the exact value leaves the range) */
static inline int64_t ck_add(ctx_t *C, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) C->ovf = 1;
    return r;
}
static inline int64_t ck_sub(ctx_t *C, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) C->ovf = 1;
    return r;
}
static inline int64_t ck_mul(ctx_t *C, int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) C->ovf = 1;
    return r;
}
static inline int64_t ck_neg(ctx_t *C, int64_t a) {
    if (a == INT64_MIN) { C->ovf = 1; return 0; }
    return -a;
}
static inline int64_t i_div(ctx_t *C, int64_t a, int64_t b) {
    if (b == 0) { C->err = 1; return 0; }
    if (b == -1) return ck_neg(C, a);
    return a / b;
}
static inline int64_t i_mod(ctx_t *C, int64_t a, int64_t b) {
    if (b == 0) { C->err = 1; return 0; }
    if (b == -1) return 0;
    return a % b;
}
static inline int64_t i_shl(ctx_t *C, int64_t a, int64_t b) {
    if (b < 0 || a == 0 || b > 4096) return 0;
    if (b >= 63) { C->ovf = 1; return 0; }
    if (a > (INT64_MAX >> b) || a < (INT64_MIN >> b)) { C->ovf = 1; return 0; }
    return (int64_t)((uint64_t)a << b);
}
static inline int64_t i_shr(int64_t a, int64_t b) {
    if (b < 0) return 0;
    if (b >= 63) return a < 0 ? -1 : 0;
    return a >> b;
}
static inline int64_t i_wrap(int64_t v, int64_t lo, int64_t size) {
    __int128 r = ((__int128)v - lo) % size;
    if (r < 0) r += size;
    return (int64_t)(r + lo);
}
/* v when it lies in lo..hi, else wrapped into it (size = hi - lo + 1) */
static inline int64_t i_fit(int64_t v, int64_t lo, int64_t hi, int64_t size) {
    return v < lo || v > hi ? i_wrap(v, lo, size) : v;
}

/* the same on __int128 (values wider than 64 bits; ovf past 128) */
#define W128(hi, lo) ((__int128)(((unsigned __int128)(uint64_t)(hi) << 64) | (uint64_t)(lo)))
#define I128_MAX ((__int128)(((unsigned __int128)1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)
static inline __int128 ck_add128(ctx_t *C, __int128 a, __int128 b) {
    __int128 r;
    if (__builtin_add_overflow(a, b, &r)) C->ovf = 1;
    return r;
}
static inline __int128 ck_sub128(ctx_t *C, __int128 a, __int128 b) {
    __int128 r;
    if (__builtin_sub_overflow(a, b, &r)) C->ovf = 1;
    return r;
}
static inline __int128 ck_mul128(ctx_t *C, __int128 a, __int128 b) {
    __int128 r;
    if (__builtin_mul_overflow(a, b, &r)) C->ovf = 1;
    return r;
}
static inline __int128 ck_neg128(ctx_t *C, __int128 a) {
    if (a == I128_MIN) { C->ovf = 1; return 0; }
    return -a;
}
static inline __int128 i_div128(ctx_t *C, __int128 a, __int128 b) {
    if (b == 0) { C->err = 1; return 0; }
    if (b == -1) return ck_neg128(C, a);
    return a / b;
}
static inline __int128 i_mod128(ctx_t *C, __int128 a, __int128 b) {
    if (b == 0) { C->err = 1; return 0; }
    if (b == -1) return 0;
    return a % b;
}
static inline __int128 i_shl128(ctx_t *C, __int128 a, __int128 b) {
    if (b < 0 || a == 0 || b > 4096) return 0;
    if (b >= 127) { C->ovf = 1; return 0; }
    if (a > (I128_MAX >> (int)b) || a < (I128_MIN >> (int)b)) { C->ovf = 1; return 0; }
    return (__int128)((unsigned __int128)a << (int)b);
}
static inline __int128 i_shr128(__int128 a, __int128 b) {
    if (b < 0) return 0;
    if (b >= 127) return a < 0 ? -1 : 0;
    return a >> (int)b;
}
static inline __int128 i_wrap128(ctx_t *C, __int128 v, __int128 lo, __int128 size) {
    __int128 d;
    if (__builtin_sub_overflow(v, lo, &d)) { C->ovf = 1; return lo; }
    __int128 r = d % size;
    if (r < 0) r += size;
    return r + lo;
}

/* a process step function: flags say which commands (FN_NORMAL, FN_TIMEOUT) and where steps
 * go (FN_MAIN: top-level steps and exclusive chains; otherwise the function's output list) */
typedef void (*fn_t)(ctx_t *, const int64_t *, int);
#define FN_NORMAL 1
#define FN_TIMEOUT 2
#define FN_MAIN 4
/* a row of a table of shared commands' guards (native/shapes.py tabulate; compiled under
 * ABSMC_ROWS, at -O0): the guard g(C, v, p) tested, the shape function s(C, v, flags, k) called */
typedef struct {
    int (*g)(ctx_t *, const int64_t *, const int64_t *);
    void (*s)(ctx_t *, const int64_t *, int, const int64_t *);
    const int64_t *k;
    const int64_t *p;
} grow_t;
#ifdef ABSMC_ROWS
/* the rows' loop and guard functions compiled optimized in the -O0 build (a small part of its
 * code): at -O0 the tables' search was ~1.6x slower than with the guards in place */
#define ROWS_OPT __attribute__((optimize("O2")))
/* (one line: native/parts.py finds the head's functions by their first line) */
static ROWS_OPT void rows_run(ctx_t *C, const int64_t *v, int flags, const grow_t *r, int n) {
    for (const grow_t *end = r + n; r < end; r++)
        if (r->g(C, v, r->p)) r->s(C, v, flags, r->k);
}
#endif
static void close_chain(ctx_t *C, int ci, const int64_t *t, int f);
static const fn_t m_fns[NFN > 0 ? NFN : 1];
static const int32_t m_fn_of[NCMD > 0 ? NCMD : 1];
static void m_successors(ctx_t *C, const int64_t *v);
static int m_violated(ctx_t *C, const int64_t *v, int32_t *out);
static int m_valid_end(ctx_t *C, const int64_t *v);
static void m_pack(const int64_t *v, uint64_t *w);
static void m_unpack(const uint64_t *w, int64_t *v);
static int m_in_range(const int64_t *v);
