/* absmc native back end: the fixed part after the generated model code: exclusive chains,
 * the entry points of NativeSemantics and the breadth-first search with its store. */

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_vals(const int64_t *v, int f) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)f;
    for (int i = 0; i < NV; i++) h = mix64(h ^ (uint64_t)v[i]) + 0x9E3779B97F4A7C15ULL;
    return h;
}

static int seen_add(ctx_t *C, const int64_t *t, int f) {
    /* 1 when (t, f) is new (and remembers it), 0 when seen in this chain before */
    uint64_t h = hash_vals(t, f);
    for (int i = 0; i < C->nseen; i++)
        if (C->seenh[i] == h && C->seenf[i] == f &&
            memcmp(C->seenst + (size_t)i * NVA, t, sizeof(int64_t) * NVA) == 0)
            return 0;
    int n = C->nseen;
    if (n + 1 > C->capseen) {
        int cap = C->capseen, c2;
        c2 = cap; if (!grow((void **)&C->seenh, &c2, n + 1, sizeof(uint64_t))) { C->oom = 1; return 0; }
        c2 = cap; if (!grow((void **)&C->seenf, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return 0; }
        c2 = cap; if (!grow((void **)&C->seenst, &c2, n + 1, sizeof(int64_t) * NVA)) { C->oom = 1; return 0; }
        C->capseen = c2;
    }
    C->seenh[n] = h;
    C->seenf[n] = f;
    memcpy(C->seenst + (size_t)n * NVA, t, sizeof(int64_t) * NVA);
    C->nseen = n + 1;
    return 1;
}

static void stk_push(ctx_t *C, int off, int len, const int64_t *t, int f) {
    int n = C->nstk;
    if (n + 1 > C->capstk) {
        int cap = C->capstk, c2;
        c2 = cap; if (!grow((void **)&C->stoff, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->stlen, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->stf, &c2, n + 1, sizeof(int32_t))) { C->oom = 1; return; }
        c2 = cap; if (!grow((void **)&C->stst, &c2, n + 1, sizeof(int64_t) * NVA)) { C->oom = 1; return; }
        C->capstk = c2;
    }
    C->stoff[n] = off;
    C->stlen[n] = len;
    C->stf[n] = f;
    memcpy(C->stst + (size_t)n * NVA, t, sizeof(int64_t) * NVA);
    C->nstk = n + 1;
}

/* Follow exclusive control from t (reached by command ci; process function f holds it): the
 * depth-first walk of codegen/python.py's close, one step per maximal chain, cut at a repeated
 * (state, function) pair. */
static void close_chain(ctx_t *C, int ci, const int64_t *t, int f) {
    int64_t st[NVA];
    C->nstk = 0;
    C->nseen = 0;
    int o = ch_extend(C, 0, 0, ci);
    if (o < 0) return;
    stk_push(C, o, 1, t, f);
    seen_add(C, t, f);
    while (C->nstk > 0 && !C->oom && !C->ovf) {
        int k = --C->nstk;
        int off = C->stoff[k], len = C->stlen[k], fn = C->stf[k];
        memcpy(st, C->stst + (size_t)k * NVA, sizeof(int64_t) * NVA);
        C->nfn = 0;
        C->pre_off = off;
        C->pre_len = len;
        m_fns[fn](C, st, FN_NORMAL);
        C->pre_off = 0;
        C->pre_len = 0;
        if (C->nfn == 0) {
            add_step(C, off, len, st);
            continue;
        }
        for (int j = C->nfn - 1; j >= 0; j--) {
            int f2 = C->fnf[j];
            const int64_t *t2 = C->fnst + (size_t)j * NVA;
            if (f2 >= 0 && !seen_add(C, t2, f2)) {
                C->cuts++;
                continue;
            }
            int o2 = ch_extend(C, off, len, C->fnci[j]);
            if (o2 < 0) return;
            if (f2 < 0)
                add_step(C, o2, len + 1, t2);
            else
                stk_push(C, o2, len + 1, t2, f2);
        }
    }
}

static void ctx_reset(ctx_t *C) {
    C->err = 0;
    C->ovf = 0;
    C->oom = 0;
    C->ex = 0;
    C->nsteps = 0;
    C->nch = 0;
    C->nfails = 0;
    C->pre_off = 0;
    C->pre_len = 0;
    C->nfn = 0;
}

/* ---- entry points of NativeSemantics ------------------------------------------------------ */

ctx_t *ctx_new(void) { return (ctx_t *)calloc(1, sizeof(ctx_t)); }

void ctx_free(ctx_t *C) {
    if (!C) return;
    free(C->sst); free(C->soff); free(C->slen); free(C->ch);
    free(C->foff); free(C->flen); free(C->fkind); free(C->fa); free(C->fb);
    free(C->fnci); free(C->fnf); free(C->fnst);
    free(C->stoff); free(C->stlen); free(C->stf); free(C->stst);
    free(C->seenh); free(C->seenf); free(C->seenst);
    free(C);
}

/* status: 0 ok, 1 a value left the 64-bit range, 2 out of memory */
static int status_of(ctx_t *C) { return C->oom ? 2 : (C->ovf ? 1 : 0); }

int api_successors(ctx_t *C, const int64_t *s) {
    ctx_reset(C);
    m_successors(C, s);
    return status_of(C);
}

/* one command (no chain) for replay: its target in out (*found = 1) and its failures */
int api_step(ctx_t *C, int ci, const int64_t *s, int64_t *out, int *found) {
    ctx_reset(C);
    *found = 0;
    m_fns[m_fn_of[ci]](C, s, FN_NORMAL | FN_TIMEOUT);
    for (int j = 0; j < C->nfn; j++)
        if (C->fnci[j] == ci) {
            memcpy(out, C->fnst + (size_t)j * NVA, sizeof(int64_t) * NVA);
            *found = 1;
            break;
        }
    return status_of(C);
}

int api_violated(ctx_t *C, const int64_t *s, int32_t *out) {
    ctx_reset(C);
    int n = m_violated(C, s, out);
    return C->ovf ? -1 : n;
}

int api_valid_end(ctx_t *C, const int64_t *s) {
    ctx_reset(C);
    int r = m_valid_end(C, s);
    return C->ovf ? -1 : r;
}

int api_in_range(const int64_t *s) { return m_in_range(s); }
int api_nv(void) { return NV; }
int api_nw(void) { return NW; }
int64_t api_cuts(ctx_t *C) { return C->cuts; }
int32_t *api_ch(ctx_t *C) { return C->ch; }
int64_t *api_sst(ctx_t *C) { return C->sst; }
int32_t *api_soff(ctx_t *C) { return C->soff; }
int32_t *api_slen(ctx_t *C) { return C->slen; }
int api_nsteps(ctx_t *C) { return C->nsteps; }
int api_nfails(ctx_t *C) { return C->nfails; }
int32_t *api_foff(ctx_t *C) { return C->foff; }
int32_t *api_flen(ctx_t *C) { return C->flen; }
int32_t *api_fkind(ctx_t *C) { return C->fkind; }
int64_t *api_fa(ctx_t *C) { return C->fa; }
int64_t *api_fb(ctx_t *C) { return C->fb; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the threads' locks (runtime_par.c, runtime_cndfs.c); more threads than CPUs: a lock holder
 * may be descheduled, so a waiter yields its CPU after a while instead of spinning out its
 * time slice */
static inline void spin_lock(volatile int *l) {
    int n = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
            if (++n < 256) __builtin_ia32_pause();
            else sched_yield();
        }
}
static inline void spin_unlock(volatile int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* A library that runs no safety search (the LTL product with -N, the state graph of CTL) is
 * built with NO_SAFETY_SEARCH defined (absmc.native.build.runtime_sources): it leaves out
 * what follows, and runtime_tree.c and runtime_par.c, which only the safety search uses. The
 * compiler takes an undeclared function (-w), so a library missing a part fails only when it
 * is loaded (undefined symbol): tests/test_native_cache.py loads each combination. */
#ifndef NO_SAFETY_SEARCH

/* ---- breadth-first search ------------------------------------------------------------------ */

#define SLOT_MODEL_ERROR NPROP
#define SLOT_DEADLOCK (NPROP + 1)
#define NSLOT (NPROP + 2)

enum { RUNNING = 0, DONE = 1, STOP_VIOLATION = 2, STOP_STATES = 3, STOP_OVERFLOW = 4,
       STOP_MEMORY = 5, STOP_SLICE = 6, STOP_MEMORY_LIMIT = 7 };

typedef struct search_s {
    ctx_t *C;
    int hc;             /* 1: hash-compact or bitstate store (only the BFS frontier in full) */
    int bs;             /* 1: bitstate store (SPIN's -DBITSTATE: k bits per state) */
    /* tree compression (runtime_tree.c; hc is 1 too): the root's pairs in their own
       set (tused: its size), the inner nodes' tables in tnodes */
    int tree, tree_n;
    int32_t tree_leaf[2 * NWA]; /* the 32-bit halves of the packed state that are leaves */
    struct tnode_s *tnodes;
    struct rtab_s *rtabs;   /* the root's tables; root_zero: the pairs whose rest is 0 */
    uint8_t *root_zero;
    int64_t root_bytes;
    /* bitstate: the bit array (2^bs_log2 bits), k, counts (stored, matched, sampled new,
       observed false matches, bits set) and the shadow set of sampled states (packed, exact) */
    uint8_t *bits;
    int bs_log2, bs_k;
    int64_t bs_counts[5];
    uint64_t *sh_tab, *sh_states;
    int64_t sh_n, sh_new;
    uint64_t sh_cap;
    int keep_going, check_deadlock, state_checks;
    int64_t max_states; /* -1: none */
    int64_t max_depth;  /* -1: none */
    int64_t max_bytes;  /* the store may not grow past this many bytes (-1: no limit) */
    /* exact store: packed states by id, parent id and label per state */
    uint64_t *arena;
    uint32_t *parent, *label;
    int64_t cap_states;
    int mapped;         /* arena, parent and label are one reserved mapping (never moved) */
    /* the multi-threaded search (runtime_par.c): threads wanted, states before they start */
    int nthreads;
    int64_t par_after;
    struct par_s *par;
    int64_t par_transitions0, par_cuts;
    /* hash-compact: the frontier of the current level and the next one (packed) */
    uint64_t *qcur, *qnext;
    int64_t qcur_n, qnext_n, qcur_cap, qnext_cap, qcur_pos;
    /* open-addressing table (linear probing): exact: tag << 32 | (id + 1); hc: the hash */
    uint64_t *table;
    uint64_t tcap, tused;
    uint32_t load_pct;  /* grow the table past this load (80; 95 once memory refused growth) */
    /* BFS position */
    int64_t count;      /* stored states */
    int64_t next;       /* next state id to expand */
    int64_t level_end;  /* first id of the next level */
    int64_t depth, max_depth_seen, transitions;
    int truncated;
    int status;
    /* violations per slot: count, node, failing label (-1 none), kind, a, b, depth */
    int64_t vcount[NSLOT], vnode[NSLOT], vlabel[NSLOT], vkind[NSLOT], va[NSLOT], vb[NSLOT],
        vdepth[NSLOT];
    /* interned chains: labels NCMD + k */
    int32_t *chains;
    int64_t nchains_w, capchains_w;
    int64_t *choff;
    int32_t *chlen;
    int64_t nchains, capchains;
    uint64_t *chtab;
    uint64_t chcap;
    /* a batch of expanded states: successors packed with their hashes (the table slots are
       prefetched while the rest of the batch is expanded), labels, unpacked targets (for state
       properties), failures */
    int32_t bsid_n;
    int64_t bsid[256];
    int32_t bnsteps[256], bsstart[256], bfstart[256], bfn[256], bdead[256], bamp[256];
    /* partial-order reduction (kernel/explore/por.py): on, and states expanded by an ample set */
    int por;
    int64_t por_reduced, par_reduced;
    int64_t found_id; /* the id store_insert_h found a known state at (exact store), else -1 */
    uint64_t *bw, *bh;
    int64_t *blab, *bv;
    uint8_t *bgrp; /* per successor: its group (por_order) */
    int bcap;
    int32_t *fslot;
    int64_t *flab, *fkind2, *fa2, *fb2;
    int fcap;
    int32_t viol_buf[NPROP > 0 ? NPROP : 1];
    int64_t vals[NVA];
    int32_t *ord;       /* the order of one state's steps (por_order) */
    int ordcap;
    uint64_t packed[NWA];
} search_t;

static inline uint64_t hash_packed(const uint64_t *w) {
    uint64_t h = 0x243F6A8885A308D3ULL;
    for (int i = 0; i < NW; i++) h = mix64(h ^ w[i]) * 0x9E3779B97F4A7C15ULL;
    return mix64(h);
}

static inline uint64_t fastrange(uint64_t h, uint64_t n) {
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

static uint64_t slot_of_entry(search_t *S, uint64_t e, uint64_t cap) {
    /* the table position an entry hashes to (exact: from its 32-bit tag; hc: the hash) */
    uint64_t h = S->hc ? e : mix64((e >> 32) * 0x9E3779B97F4A7C15ULL);
    return fastrange(h, cap);
}

static int64_t store_bytes(search_t *S);
static int tree_insert(search_t *S, const uint64_t *w, int add);
static int tree_insert_key(search_t *S, uint64_t key, int add);
static int tree_key(search_t *S, const uint64_t *w, uint64_t *key);
static inline void tree_prefetch(search_t *S, uint64_t key);
static int64_t tree_bytes(search_t *S);
static void tree_free(search_t *S);

#define HUGE_PAGE ((size_t)2 << 20)

/* Zeroed memory of `bytes` from a mapping of its own (flags added to MAP_PRIVATE |
 * MAP_ANONYMOUS); past 2 MB it starts on a 2 MB boundary, its length is rounded up to one, and
 * the kernel is asked for huge pages (MADV_HUGEPAGE; transparent huge pages in "madvise" mode).
 * The table's probes land on random slots and the threads write the arena in blocks: with
 * 4 KB pages each new page costs a page fault (and the threads' faults contend for the same
 * kernel locks) and most probes a TLB miss. NULL when the system refuses; release with
 * mem_unmap(p, bytes). */
static size_t mem_len(size_t bytes) {
    return bytes >= HUGE_PAGE ? (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1) : bytes;
}

static void *mem_map(size_t bytes, int flags) {
    size_t len = mem_len(bytes);
    size_t extra = len >= HUGE_PAGE ? HUGE_PAGE : 0;
    char *m = (char *)mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
    if (m == MAP_FAILED) return NULL;
    if (extra) {
        char *a = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
        if (a > m) munmap(m, (size_t)(a - m));
        if (a + len < m + len + extra) munmap(a + len, (size_t)(m + len + extra - (a + len)));
        m = a;
#ifdef MADV_HUGEPAGE
        madvise(m, len, MADV_HUGEPAGE);
#endif
    }
    return m;
}

static void mem_unmap(void *p, size_t bytes) {
    if (p) munmap(p, mem_len(bytes));
}

static uint64_t *table_mem(uint64_t cap) {
    return (uint64_t *)mem_map((size_t)cap * sizeof(uint64_t), 0);
}

static void table_mem_free(uint64_t *t, uint64_t cap) {
    mem_unmap(t, (size_t)cap * sizeof(uint64_t));
}

/* A larger table: x(first_x8 / 8), or x1.25 / x1.125 when the memory limit (--max-memory, by
 * default most of the machine's memory) or the system refuses that much (the old and the new
 * table live side by side while entries move); NULL when none fits, *limited set when the
 * limit refused one. */
static uint64_t *table_alloc(search_t *S, uint64_t *ncap, int first_x8, int *limited) {
    static const int factors_x8[] = {16, 12, 10, 9};
    *limited = 0;
    for (int i = 0; i < 4; i++) {
        if (factors_x8[i] > first_x8) continue;
        uint64_t c = S->tcap * (uint64_t)factors_x8[i] / 8;
        if (S->max_bytes >= 0 && store_bytes(S) + (int64_t)(c * sizeof(uint64_t)) > S->max_bytes) {
            *limited = 1;
            continue;
        }
        uint64_t *t = table_mem(c);
        if (t) { *ncap = c; return t; }
    }
    return NULL;
}

static int table_grow(search_t *S) {
    uint64_t ncap = 0;
    int limited = 0;
    uint64_t *nt = table_alloc(S, &ncap, 12, &limited);
    if (!nt) {
        /* no room for a second table: fill this one further (slower probing) before giving up */
        if (S->load_pct < 95) { S->load_pct = 95; return 1; }
        if (limited) S->status = STOP_MEMORY_LIMIT;
        return 0;
    }
    for (uint64_t i = 0; i < S->tcap; i++) {
        uint64_t e = S->table[i];
        if (!e) continue;
        uint64_t p = slot_of_entry(S, e, ncap);
        while (nt[p]) p = (p + 1 == ncap) ? 0 : p + 1;
        nt[p] = e;
    }
    table_mem_free(S->table, S->tcap);
    S->table = nt;
    S->tcap = ncap;
    return 1;
}

/* Reserve address space for every state id (MAP_NORESERVE: pages cost memory only once
 * touched), so the arena never moves (the threads of runtime_par.c read it while others
 * append) and growing it copies nothing. 0 when the system refuses (then realloc is used). */
static int arena_reserve(search_t *S, int64_t cap) {
    size_t bytes = (size_t)cap * (NWA * sizeof(uint64_t) + 2 * sizeof(uint32_t));
    void *m = mem_map(bytes, MAP_NORESERVE);
    if (!m) return 0;
    S->arena = (uint64_t *)m;
    S->parent = (uint32_t *)((char *)m + (size_t)cap * NWA * sizeof(uint64_t));
    S->label = S->parent + cap;
    S->cap_states = cap;
    S->mapped = 1;
    return 1;
}

static void arena_release(search_t *S) {
    if (S->mapped) {
        mem_unmap(S->arena,
                  (size_t)S->cap_states * (NWA * sizeof(uint64_t) + 2 * sizeof(uint32_t)));
    } else {
        free(S->arena); free(S->parent); free(S->label);
    }
    S->arena = NULL; S->parent = NULL; S->label = NULL;
}

static int states_grow(search_t *S) {
    if (S->mapped) return 0; /* every id up to the 32-bit limit was reserved */
    int64_t nc = S->cap_states ? S->cap_states * 2 : 1024;
    if (S->max_bytes >= 0 && store_bytes(S) + (nc - S->cap_states) / 4 * (NWA * 8 + 8) > S->max_bytes) {
        S->status = STOP_MEMORY_LIMIT;
        return 0;
    }
    uint64_t *a = (uint64_t *)realloc(S->arena, (size_t)nc * NWA * sizeof(uint64_t));
    if (!a) return 0;
    S->arena = a;
    uint32_t *p = (uint32_t *)realloc(S->parent, (size_t)nc * sizeof(uint32_t));
    if (!p) return 0;
    S->parent = p;
    uint32_t *l = (uint32_t *)realloc(S->label, (size_t)nc * sizeof(uint32_t));
    if (!l) return 0;
    S->label = l;
    S->cap_states = nc;
    return 1;
}

/* insert packed state w: 1 new, 0 seen, -1 out of memory. The caller checks the state limit
 * with lookup first, so insert is only called to add. */
static inline uint64_t table_pos(search_t *S, uint64_t h) {
    return S->hc ? fastrange(h ? h : 1, S->tcap) : slot_of_entry(S, (h >> 32) << 32, S->tcap);
}

/* bitstate: prefetch the k bytes of bits of the n states of hashes h, as bitstate_insert
 * places them; called once per batch after its expansion (a branch or call for it inside the
 * expansion loops slowed the exact store's search by ~15%) */
static void bs_prefetch(search_t *S, const uint64_t *h, int n) {
    uint64_t mask = (1ULL << S->bs_log2) - 1;
    for (int j = 0; j < n; j++) {
        uint64_t h2 = mix64(h[j] ^ 0x9E3779B97F4A7C15ULL) | 1;
        for (int i = 0; i < S->bs_k; i++)
            __builtin_prefetch(&S->bits[((h[j] + (uint64_t)i * h2) & mask) >> 3]);
    }
}

static int bitstate_insert(search_t *S, const uint64_t *w, uint64_t h, int add);

static int store_insert_h(search_t *S, const uint64_t *w, uint64_t h, int add) {
    if (S->bs) return bitstate_insert(S, w, h, add);
    if (S->tree) return tree_insert_key(S, h, add); /* h: the root pair (tree_key) */
    if ((S->tused + 1) * 100 > S->tcap * S->load_pct && !table_grow(S)) return -1;
    if (S->hc) {
        uint64_t e = h ? h : 1;
        uint64_t p = fastrange(e, S->tcap);
        for (;;) {
            uint64_t x = S->table[p];
            if (!x) break;
            if (x == e) return 0;
            p = (p + 1 == S->tcap) ? 0 : p + 1;
        }
        if (!add) return 1;
        S->table[p] = e;
        S->tused++;
        return 1;
    }
    uint64_t tag = h >> 32;
    uint64_t p = slot_of_entry(S, tag << 32, S->tcap);
    for (;;) {
        uint64_t x = S->table[p];
        if (!x) break;
        if ((x >> 32) == tag) {
            uint64_t id = (x & 0xffffffffULL) - 1;
            if (memcmp(S->arena + id * NWA, w, NW * sizeof(uint64_t)) == 0) {
                S->found_id = (int64_t)id;
                return 0;
            }
        }
        p = (p + 1 == S->tcap) ? 0 : p + 1;
    }
    if (!add) return 1;
    if (S->count >= S->cap_states && !states_grow(S)) return -1;
    if (S->count >= (int64_t)0xfffffff0LL) return -1; /* ids are 32 bits */
    memcpy(S->arena + (size_t)S->count * NWA, w, NWA * sizeof(uint64_t));
    S->table[p] = (tag << 32) | (uint64_t)(S->count + 1);
    S->tused++;
    return 1;
}

static int store_lookup_insert(search_t *S, const uint64_t *w, int add) {
    if (S->tree) return tree_insert(S, w, add);
    return store_insert_h(S, w, hash_packed(w), add);
}


/* ---- bitstate store (SPIN's supertrace, -DBITSTATE; see kernel/explore/store.py BitStateStore) ----- */

#define SAMPLE_BITS 6          /* one state in 64 (top bits of its hash zero) is sampled */
#define SHADOW_MAX (1 << 20)   /* sampled new states kept exactly, at most */

/* the shadow set: packed sampled states; 1 when w was there, else adds it (if room) */
static int shadow_find_add(search_t *S, const uint64_t *w, uint64_t h, int add) {
    if (!S->sh_tab) {
        S->sh_cap = 1 << 10;
        S->sh_tab = (uint64_t *)calloc(S->sh_cap, sizeof(uint64_t));
        S->sh_states = (uint64_t *)malloc((size_t)(S->sh_cap / 2) * NWA * sizeof(uint64_t));
        if (!S->sh_tab || !S->sh_states) return -1;
    }
    uint64_t p = fastrange(mix64(h), S->sh_cap);
    for (;;) {
        uint64_t x = S->sh_tab[p];
        if (!x) break;
        if (memcmp(S->sh_states + (x - 1) * NWA, w, NW * sizeof(uint64_t)) == 0) return 1;
        p = (p + 1 == S->sh_cap) ? 0 : p + 1;
    }
    if (!add) return 0;
    if ((uint64_t)(S->sh_n + 1) * 2 > S->sh_cap) {
        uint64_t ncap = S->sh_cap * 2;
        uint64_t *nt = (uint64_t *)calloc(ncap, sizeof(uint64_t));
        uint64_t *ns = (uint64_t *)realloc(S->sh_states, (size_t)(ncap / 2) * NWA * sizeof(uint64_t));
        if (!nt || !ns) { free(nt); if (ns) S->sh_states = ns; return -1; }
        S->sh_states = ns;
        for (uint64_t i = 0; i < S->sh_cap; i++) {
            uint64_t e = S->sh_tab[i];
            if (!e) continue;
            uint64_t q = fastrange(mix64(hash_packed(ns + (e - 1) * NWA)), ncap);
            while (nt[q]) q = (q + 1 == ncap) ? 0 : q + 1;
            nt[q] = e;
        }
        free(S->sh_tab);
        S->sh_tab = nt;
        S->sh_cap = ncap;
        p = fastrange(mix64(h), ncap);
        while (nt[p]) p = (p + 1 == ncap) ? 0 : p + 1;
    }
    memcpy(S->sh_states + (size_t)S->sh_n * NWA, w, NWA * sizeof(uint64_t));
    S->sh_tab[p] = (uint64_t)(++S->sh_n);
    return 0;
}

/* k positions h + i * h2 (double hashing) in the 2^bs_log2-bit array; 1 new, 0 matched */
static int bitstate_insert(search_t *S, const uint64_t *w, uint64_t h, int add) {
    uint64_t mask = (1ULL << S->bs_log2) - 1;
    uint64_t h2 = mix64(h ^ 0x9E3779B97F4A7C15ULL) | 1;
    int sampled = (h >> (64 - SAMPLE_BITS)) == 0;
    int all = 1;
    for (int i = 0; i < S->bs_k; i++) {
        uint64_t q = (h + (uint64_t)i * h2) & mask;
        if (!(S->bits[q >> 3] & (1u << (q & 7)))) { all = 0; break; }
    }
    if (all) {
        S->bs_counts[1]++;
        if (sampled && S->sh_new < SHADOW_MAX && shadow_find_add(S, w, h, 1) == 0)
            S->bs_counts[3]++; /* a sampled state never stored: a certain false match */
        return 0;
    }
    if (!add) return 1;
    int c = 0;
    for (int i = 0; i < S->bs_k; i++) {
        uint64_t q = (h + (uint64_t)i * h2) & mask;
        uint8_t b = (uint8_t)(1u << (q & 7));
        if (!(S->bits[q >> 3] & b)) { S->bits[q >> 3] |= b; c++; }
    }
    S->bs_counts[0]++;
    S->bs_counts[4] += c;
    if (sampled && S->sh_new < SHADOW_MAX && shadow_find_add(S, w, h, 1) == 0) {
        S->sh_new++;
        S->bs_counts[2]++;
    }
    return 1;
}

static size_t bs_bytes(search_t *S) {
    return (size_t)1 << (S->bs_log2 > 3 ? S->bs_log2 - 3 : 0);
}

/* make S a bitstate search with 2^log2_bits bits and k hash functions (0: no memory) */
int s_set_bitstate(search_t *S, int log2_bits, int k) {
    S->bs = 1;
    S->hc = 1;
    S->bs_log2 = log2_bits;
    S->bs_k = k;
    S->bits = (uint8_t *)mem_map(bs_bytes(S), 0); /* 2 MB pages past 2 MB: random probes */
    return S->bits != NULL;
}

/* stored, matched, sampled new, observed false matches, bits set */
void s_bitstate_counts(search_t *S, int64_t *out) {
    for (int i = 0; i < 5; i++) out[i] = S->bs_counts[i];
}

static int64_t store_bytes(search_t *S);

/* the hash of a chain of command indices (chain_intern's table; par_chain's memo) */
static inline uint64_t chain_hash(const int32_t *c, int len) {
    uint64_t h = 0x51ED270B27A9F1C3ULL ^ (uint64_t)len;
    for (int i = 0; i < len; i++) h = mix64(h ^ (uint64_t)(uint32_t)c[i]) + 1;
    return h;
}

static int64_t chain_intern(search_t *S, const int32_t *c, int len) {
    if (len == 1) return c[0];
    uint64_t h = chain_hash(c, len);
    if ((S->nchains + 1) * 2 > (int64_t)S->chcap) {
        uint64_t ncap = S->chcap ? S->chcap * 2 : 256;
        uint64_t *nt = (uint64_t *)calloc(ncap, sizeof(uint64_t));
        if (!nt) return -1;
        for (uint64_t i = 0; i < S->chcap; i++) {
            uint64_t e = S->chtab[i];
            if (!e) continue;
            uint64_t p = fastrange(mix64(e >> 32), ncap);
            while (nt[p]) p = (p + 1 == ncap) ? 0 : p + 1;
            nt[p] = e;
        }
        free(S->chtab);
        S->chtab = nt;
        S->chcap = ncap;
    }
    uint64_t tag = h >> 32;
    uint64_t p = fastrange(mix64(tag), S->chcap);
    for (;;) {
        uint64_t x = S->chtab[p];
        if (!x) break;
        if ((x >> 32) == tag) {
            int64_t k = (int64_t)(x & 0xffffffffULL) - 1;
            if (S->chlen[k] == len &&
                memcmp(S->chains + S->choff[k], c, (size_t)len * sizeof(int32_t)) == 0)
                return NCMD + k;
        }
        p = (p + 1 == S->chcap) ? 0 : p + 1;
    }
    int64_t k = S->nchains;
    if (k + 1 > S->capchains) {
        int64_t nc = S->capchains ? S->capchains * 2 : 64;
        int64_t *o = (int64_t *)realloc(S->choff, (size_t)nc * sizeof(int64_t));
        if (!o) return -1;
        S->choff = o;
        int32_t *l = (int32_t *)realloc(S->chlen, (size_t)nc * sizeof(int32_t));
        if (!l) return -1;
        S->chlen = l;
        S->capchains = nc;
    }
    if (S->nchains_w + len > S->capchains_w) {
        int64_t nc = S->capchains_w ? S->capchains_w * 2 : 1024;
        while (nc < S->nchains_w + len) nc *= 2;
        int32_t *a = (int32_t *)realloc(S->chains, (size_t)nc * sizeof(int32_t));
        if (!a) return -1;
        S->chains = a;
        S->capchains_w = nc;
    }
    memcpy(S->chains + S->nchains_w, c, (size_t)len * sizeof(int32_t));
    S->choff[k] = S->nchains_w;
    S->chlen[k] = len;
    S->nchains_w += len;
    S->nchains = k + 1;
    S->chtab[p] = (tag << 32) | (uint64_t)(k + 1);
    return NCMD + k;
}

static void par_free(search_t *S);

search_t *s_new(int hc, int keep_going, int check_deadlock, int state_checks,
                int64_t max_states, int64_t max_depth) {
    search_t *S = (search_t *)calloc(1, sizeof(search_t));
    if (!S) return NULL;
    S->C = ctx_new();
    S->hc = hc;
    S->keep_going = keep_going;
    S->check_deadlock = check_deadlock;
    S->state_checks = state_checks;
    S->max_states = max_states;
    S->max_depth = max_depth;
    S->max_bytes = -1;
    S->tcap = 1 << 12;
    S->load_pct = 80;
    S->table = table_mem(S->tcap);
    if (!S->C || !S->table) return NULL;
    S->nthreads = 1;
    if (!hc) {
        int64_t cap = (int64_t)0xfffffff0LL; /* ids are 32 bits */
        /* ids for max_states states, plus the threads' unused ids (64 threads x 256: the
           blocks of runtime_par.c) */
        if (max_states >= 0 && max_states + 1024 + 64 * 256 < cap) cap = max_states + 1024 + 64 * 256;
        arena_reserve(S, cap);
    }
    for (int i = 0; i < NSLOT; i++) S->vlabel[i] = -1;
    return S;
}

void s_free(search_t *S) {
    if (!S) return;
    ctx_free(S->C);
    par_free(S);
    arena_release(S);
    free(S->qcur); free(S->qnext);
    table_mem_free(S->table, S->tcap);
    free(S->chains); free(S->choff); free(S->chlen); free(S->chtab);
    free(S->bw); free(S->bh); free(S->blab); free(S->bv);
    free(S->fslot); free(S->flab); free(S->fkind2); free(S->fa2); free(S->fb2);
    if (S->bits) mem_unmap(S->bits, bs_bytes(S));
    free(S->sh_tab); free(S->sh_states);
    free(S->ord);
    free(S->bgrp);
    tree_free(S);
    free(S);
}

/* count a violation of property slot `slot`, keeping the first one's node, label and data */
static void note_violation(search_t *S, int slot, int64_t node, int64_t label, int kind,
                           int64_t a, int64_t b, int64_t depth) {
    if (S->vcount[slot]++ == 0) {
        S->vnode[slot] = node;
        S->vlabel[slot] = label;
        S->vkind[slot] = kind;
        S->va[slot] = a;
        S->vb[slot] = b;
        S->vdepth[slot] = depth;
    }
}

/* count a violation; 1 when the search must stop (the first one, without keep_going) */
static int record(search_t *S, int slot, int64_t node, int64_t label, int kind, int64_t a,
                  int64_t b) {
    note_violation(S, slot, node, label, kind, a, b, S->depth);
    if (!S->keep_going) {
        S->status = STOP_VIOLATION;
        return 1;
    }
    return 0;
}

static int check_state(search_t *S, const int64_t *v, int64_t node, int64_t depth) {
    ctx_t *C = S->C;
    C->ovf = 0;
    int n = m_violated(C, v, S->viol_buf);
    if (C->ovf) { S->status = STOP_OVERFLOW; return 1; }
    int64_t saved = S->depth;
    S->depth = depth;
    for (int i = 0; i < n; i++)
        if (record(S, S->viol_buf[i], node, -1, 0, 0, 0)) { S->depth = saved; return 1; }
    S->depth = saved;
    return 0;
}

static int hc_push_next(search_t *S, const uint64_t *w) {
    if (S->qnext_n + 1 > S->qnext_cap) {
        int64_t nc = S->qnext_cap ? S->qnext_cap * 2 : 1024;
        uint64_t *q = (uint64_t *)realloc(S->qnext, (size_t)nc * NWA * sizeof(uint64_t));
        if (!q) return 0;
        S->qnext = q;
        S->qnext_cap = nc;
    }
    memcpy(S->qnext + (size_t)S->qnext_n * NWA, w, NWA * sizeof(uint64_t));
    S->qnext_n++;
    return 1;
}

/* the next level becomes the current one */
static void hc_swap(search_t *S) {
    uint64_t *t = S->qcur; S->qcur = S->qnext; S->qnext = t;
    int64_t c = S->qcur_cap; S->qcur_cap = S->qnext_cap; S->qnext_cap = c;
    S->qcur_n = S->qnext_n; S->qnext_n = 0; S->qcur_pos = 0;
}

/* status: RUNNING (initial state stored), or a stop status */
int s_init(search_t *S, const int64_t *init) {
    m_pack(init, S->packed);
    if (store_lookup_insert(S, S->packed, 1) < 0)
        return S->status = (S->status == STOP_MEMORY_LIMIT ? STOP_MEMORY_LIMIT : STOP_MEMORY);
    if (!S->hc) {
        S->parent[0] = 0;
        S->label[0] = 0;
    } else if (!hc_push_next(S, S->packed)) {
        return S->status = STOP_MEMORY;
    }
    S->count = 1;
    S->next = 0;
    S->level_end = 1;
    if (S->state_checks) check_state(S, init, 0, 0);
    if (S->hc) hc_swap(S);
    return S->status;
}

static int batch_room(search_t *S, int nsteps_more, int nfails_more, int nsteps, int nfails) {
    if (nsteps + nsteps_more > S->bcap) {
        int c = S->bcap ? S->bcap : 1024;
        while (c < nsteps + nsteps_more) c *= 2;
        uint64_t *w = (uint64_t *)realloc(S->bw, (size_t)c * NWA * sizeof(uint64_t));
        if (!w) return 0;
        S->bw = w;
        uint64_t *h = (uint64_t *)realloc(S->bh, (size_t)c * sizeof(uint64_t));
        if (!h) return 0;
        S->bh = h;
        int64_t *l = (int64_t *)realloc(S->blab, (size_t)c * sizeof(int64_t));
        if (!l) return 0;
        S->blab = l;
        uint8_t *g = (uint8_t *)realloc(S->bgrp, (size_t)c);
        if (!g) return 0;
        S->bgrp = g;
        if (S->state_checks) {
            int64_t *v = (int64_t *)realloc(S->bv, (size_t)c * NVA * sizeof(int64_t));
            if (!v) return 0;
            S->bv = v;
        }
        S->bcap = c;
    }
    if (nfails + nfails_more > S->fcap) {
        int c = S->fcap ? S->fcap : 64;
        while (c < nfails + nfails_more) c *= 2;
        if (!grow((void **)&S->fslot, &(int){S->fcap}, c, sizeof(int32_t))) return 0;
        int k = S->fcap;
        if (!grow((void **)&S->flab, &k, c, sizeof(int64_t))) return 0;
        k = S->fcap;
        if (!grow((void **)&S->fkind2, &k, c, sizeof(int64_t))) return 0;
        k = S->fcap;
        if (!grow((void **)&S->fa2, &k, c, sizeof(int64_t))) return 0;
        k = S->fcap;
        if (!grow((void **)&S->fb2, &k, c, sizeof(int64_t))) return 0;
        S->fcap = k;
    }
    return 1;
}

#define NOMEM() do { if (S->status != STOP_MEMORY_LIMIT) S->status = STOP_MEMORY; } while (0)

/* Expand states for about `seconds` (clock read every 1024 expansions); returns the status:
 * STOP_SLICE when the time slice is over (call again), DONE, or a stop status. States are
 * expanded in batches of up to 256 (never across a BFS level); the checks and insertions then
 * run in the order of the unbatched loop, so results do not depend on the batching. */
static int par_run(search_t *S, double seconds);
static int par_threads(search_t *S);
static int64_t par_queue_bytes(search_t *S);

/* whether the threads take over now (runtime_par.c): the exact store in its reserved arena, or
 * hash-compact, or bitstate; no depth bound, more than one thread asked for, and at least
 * par_after states stored */
static int par_ready(search_t *S) {
    return S->nthreads > 1 && !S->tree && (S->hc || S->mapped) && S->max_depth < 0 &&
           (S->par || S->count >= S->par_after);
}

/* Partial-order reduction (kernel/explore/por.py): whether the process of row r of m_por_proc
 * is at a safe location of the state v (whose condition holds) */
static int por_safe(int r, const int64_t *v, const ctx_t *C) {
    int sl = m_por_slot[r];
    if (sl < 0) return 1;
    int64_t x = v[sl];
    for (int j = m_por_off[r]; j < m_por_off[r + 1]; j++)
        if (m_por_locs[j] == x) return m_por_cond(j, v, (ctx_t *)C);
    return 0;
}

#define POR_GROUPS 120 /* at most this many candidate ample sets per state (then the rest) */

/* The order in which to take the steps of C, in groups (into order[0..n); the group of the
 * step at order[j] into order[n + j], so order has room for 2n): one group per process at a safe
 * location with an enabled step, the youngest (last in m_por_proc's order) first as pan's
 * do_reach, then the other steps (maybe none). The search takes the groups in order and stops
 * after the first that meets the cycle proviso (pan's Resume). Returns the number of groups:
 * 1 (every step in group 0) to expand fully (no such process, or one has every step). */
static int por_order(const search_t *S, const int64_t *v, const ctx_t *C, int32_t *order) {
    int n = C->nsteps, k = 0, g = 0;
    int32_t procs[POR_GROUPS];
    if (S->por && n >= 2) {
        for (int r = POR_ROWS - 1; r >= 0 && g < POR_GROUPS; r--) {
            if (!por_safe(r, v, C)) continue;
            int p = m_por_proc[r], c = 0;
            for (int i = 0; i < n; i++) c += m_fn_of[C->ch[C->soff[i]]] == p;
            if (c == 0) continue;
            if (c == n) break; /* the first candidate has every step: expand fully */
            for (int i = 0; i < n; i++)
                if (m_fn_of[C->ch[C->soff[i]]] == p) { order[n + k] = g; order[k++] = i; }
            procs[g++] = p;
        }
    }
    if (g == 0) {
        for (int i = 0; i < n; i++) { order[i] = i; order[n + i] = 0; }
        return 1;
    }
    for (int i = 0; i < n; i++) {
        int p = m_fn_of[C->ch[C->soff[i]]], mine = 0;
        for (int q = 0; q < g; q++) mine |= procs[q] == p;
        if (!mine) { order[n + k] = g; order[k++] = i; }
    }
    return g + 1;
}

/* partial-order reduction on (1) or off (0); returns whether it is on (0 when there is no
 * safe location). The threads (runtime_par.c) reduce alike: por_order, the same proviso. */
int s_set_reduce(search_t *S, int on) {
    S->por = on && POR_ROWS > 0;
    return S->por;
}

int s_run(search_t *S, double seconds) {
    ctx_t *C = S->C;
    double end = now_s() + seconds;
    int64_t expanded = 0, next_clock = 1024;
    int64_t *v = S->vals;
    if (S->status != RUNNING) return S->status;
    if (par_ready(S)) {
        if (!S->par) S->par_transitions0 = S->transitions;
        return par_run(S, seconds);
    }
    for (;;) {
        /* the batch: up to 256 states of the current level */
        int64_t avail;
        if (S->hc) {
            if (S->qcur_pos >= S->qcur_n) {
                if (S->qnext_n == 0) { S->status = DONE; break; }
                hc_swap(S);
                S->depth++;
                if (S->depth > S->max_depth_seen) S->max_depth_seen = S->depth;
            }
            avail = S->qcur_n - S->qcur_pos;
        } else {
            if (S->next >= S->count) { S->status = DONE; break; }
            if (S->next == S->level_end) {
                S->level_end = S->count;
                S->depth++;
                if (S->depth > S->max_depth_seen) S->max_depth_seen = S->depth;
            }
            avail = S->level_end - S->next;
        }
        if (S->nthreads > 1 && par_ready(S)) { S->status = STOP_SLICE; break; }
        int nb = avail < 256 ? (int)avail : 256;
        int at_bound = S->max_depth >= 0 && S->depth >= S->max_depth;
        int ns = 0, nf = 0, stop = 0;
        /* phase 1: expand, pack, hash, prefetch */
        for (int b = 0; b < nb; b++) {
            if (S->hc) {
                m_unpack(S->qcur + (size_t)S->qcur_pos * NWA, v);
                S->qcur_pos++;
            } else {
                m_unpack(S->arena + (size_t)S->next * NWA, v);
            }
            S->bsid[b] = S->next++;
            ctx_reset(C);
            m_successors(C, v);
            if (C->oom) { S->status = STOP_MEMORY; stop = 1; nb = b; break; }
            if (C->ovf) { S->status = STOP_OVERFLOW; stop = 1; nb = b; break; }
            int nsteps = C->nsteps;
            if (!batch_room(S, nsteps, C->nfails, ns, nf)) { NOMEM(); stop = 1; nb = b; break; }
            S->bnsteps[b] = nsteps;
            S->bsstart[b] = ns;
            if (2 * nsteps > S->ordcap) {
                int32_t *o = (int32_t *)realloc(S->ord, (size_t)nsteps * 2 * sizeof(int32_t));
                if (!o) { NOMEM(); stop = 1; nb = b; break; }
                S->ord = o;
                S->ordcap = nsteps * 2;
            }
            S->bamp[b] = por_order(S, v, C, S->ord);
            const int32_t *grp = S->ord + nsteps;
            S->bfstart[b] = nf;
            int blocked = 0;
            for (int i = 0; i < C->nfails; i++) {
                int64_t lab = chain_intern(S, C->ch + C->foff[i], C->flen[i]);
                if (lab < 0) { NOMEM(); stop = 1; break; }
                int kind = C->fkind[i];
                S->fslot[nf] = kind == 3 ? (int)C->fa[i] : SLOT_MODEL_ERROR;
                if (kind != 3) blocked = 1;
                S->flab[nf] = lab;
                S->fkind2[nf] = kind;
                S->fa2[nf] = C->fa[i];
                S->fb2[nf] = C->fb[i];
                nf++;
            }
            if (stop) { nb = b; break; }
            S->bfn[b] = nf - S->bfstart[b];
            S->bdead[b] = 0;
            if (!blocked && !nsteps && S->check_deadlock) {
                int ve = m_valid_end(C, v);
                if (C->ovf) { S->status = STOP_OVERFLOW; stop = 1; nb = b; break; }
                S->bdead[b] = !ve;
            }
            for (int j = 0; j < nsteps; j++) {
                int i = S->ord[j];
                const int64_t *t = C->sst + (size_t)i * NVA;
                uint64_t *w = S->bw + (size_t)ns * NWA;
                m_pack(t, w);
                uint64_t h;
                if (S->tree) { /* h is the root pair; the inner nodes are added now */
                    if (tree_key(S, w, &h) < 0) { NOMEM(); stop = 1; break; }
                    tree_prefetch(S, h);
                } else {
                    h = hash_packed(w);
                    if (!S->bs) __builtin_prefetch(&S->table[table_pos(S, h)]);
                }
                S->bh[ns] = h;
                int64_t lab = chain_intern(S, C->ch + C->soff[i], C->slen[i]);
                if (lab < 0) { NOMEM(); stop = 1; break; }
                S->blab[ns] = lab;
                S->bgrp[ns] = (uint8_t)grp[j];
                if (S->state_checks) memcpy(S->bv + (size_t)ns * NVA, t, sizeof(int64_t) * NVA);
                ns++;
            }
            if (stop) { nb = b; break; }
        }
        if (S->status == STOP_OVERFLOW) break;
        if (S->bs) bs_prefetch(S, S->bh, ns);
        /* phase 2: the checks and insertions, state by state in order */
        for (int b = 0; b < nb && !S->status; b++) {
            int64_t sid = S->bsid[b];
            int nsteps = S->bnsteps[b];
            /* the groups of por_order in order, up to the first that meets the cycle proviso
               (kernel/explore/por.py: one of its steps reached a state inserted after this one) */
            int ngroups = S->bamp[b], g = 0, fresh = 0, taken = nsteps;
            for (int i = S->bfstart[b]; i < S->bfstart[b] + S->bfn[b]; i++)
                if (record(S, S->fslot[i], sid, S->flab[i], (int)S->fkind2[i], S->fa2[i],
                           S->fb2[i]))
                    break;
            if (S->status) break;
            if (S->bdead[b] && record(S, SLOT_DEADLOCK, sid, -1, 0, 0, 0)) break;
            for (int k = S->bsstart[b]; k < S->bsstart[b] + nsteps; k++) {
                if (ngroups > 1 && S->bgrp[k] != g) {
                    if (fresh && !at_bound) {
                        taken = k - S->bsstart[b];
                        S->por_reduced++;
                        break;
                    }
                    g = S->bgrp[k];
                    fresh = 0;
                }
                const uint64_t *w = S->bw + (size_t)k * NWA;
                uint64_t h = S->bh[k];
                if (at_bound) {
                    int r = store_insert_h(S, w, h, 0);
                    if (r < 0) { NOMEM(); break; }
                    if (r) S->truncated = 1;
                    continue;
                }
                if (S->max_states >= 0 && S->count >= S->max_states) {
                    int r = store_insert_h(S, w, h, 0);
                    if (r < 0) { NOMEM(); break; }
                    if (r) {
                        S->status = STOP_STATES;
                        if (S->depth + 1 > S->max_depth_seen) S->max_depth_seen = S->depth + 1;
                        break;
                    }
                    continue;
                }
                S->found_id = -1;
                int r = store_insert_h(S, w, h, 1);
                if (r < 0) { NOMEM(); break; }
                if (!r) {
                    /* the cycle proviso also holds for a known state inserted after this one:
                       later in this level or in the next (ids are in insertion order; exact
                       store only) */
                    if (S->found_id > sid) fresh = 1;
                    continue;
                }
                fresh = 1;
                int64_t tid = S->count++;
                if (S->hc) {
                    if (!hc_push_next(S, w)) { NOMEM(); break; }
                } else {
                    S->parent[tid] = (uint32_t)sid;
                    S->label[tid] = (uint32_t)S->blab[k];
                }
                if (S->state_checks) {
                    if (S->depth + 1 > S->max_depth_seen) S->max_depth_seen = S->depth + 1;
                    if (check_state(S, S->bv + (size_t)k * NVA, tid, S->depth + 1)) break;
                }
            }
            S->transitions += taken;
            expanded++;
        }
        if (stop || S->status) break;
        if (expanded >= next_clock) {
            next_clock = expanded + 1024;
            if (now_s() >= end || par_ready(S)) { S->status = STOP_SLICE; break; }
        }
    }
    int st = S->status;
    if (st == STOP_SLICE) S->status = RUNNING;
    return st;
}

void s_set_max_bytes(search_t *S, int64_t max_bytes) { S->max_bytes = max_bytes; }

/* search with `threads` threads once `after` states are stored (runtime_par.c) */
void s_set_threads(search_t *S, int threads, int64_t after) {
    S->nthreads = threads < 1 ? 1 : (threads > 64 ? 64 : threads);
    S->par_after = after;
}

static int64_t store_bytes(search_t *S) {
    if (S->bs)
        return (int64_t)(((uint64_t)1 << S->bs_log2) / 8) +
               (int64_t)((S->qcur_n + S->qnext_n) * NWA * sizeof(uint64_t)) + par_queue_bytes(S) +
               (int64_t)(S->sh_cap * sizeof(uint64_t) + S->sh_n * NWA * sizeof(uint64_t));
    return (int64_t)(S->tree ? tree_bytes(S) : (int64_t)(S->tcap * sizeof(uint64_t))) +
           (S->hc ? (int64_t)((S->qcur_n + S->qnext_n) * NWA * sizeof(uint64_t)) +
                        par_queue_bytes(S)
                  : (int64_t)(S->count * (NWA * sizeof(uint64_t) + 8)));
}

int64_t s_stat(search_t *S, int which) {
    switch (which) {
    case 0: return S->count;
    case 1: return S->transitions;
    case 2: return S->max_depth_seen;
    case 3: return S->truncated;
    case 4: /* bytes of the store in use: the table, the states (exact: with parent and label;
               hash-compact: the two levels kept), not the untouched capacity beyond them */
        return store_bytes(S);
    case 5: return S->nchains;
    case 6: return S->C->cuts + S->par_cuts;
    case 9: return par_threads(S);
    case 7: return S->depth;
    case 8: return NW;
    case 10: return S->por_reduced + S->par_reduced;
    default: return -1;
    }
}

/* the first violation of a slot: count, node, label, kind, a, b, depth */
void s_violation(search_t *S, int slot, int64_t *out) {
    out[0] = S->vcount[slot];
    out[1] = S->vnode[slot];
    out[2] = S->vlabel[slot];
    out[3] = S->vkind[slot];
    out[4] = S->va[slot];
    out[5] = S->vb[slot];
    out[6] = S->vdepth[slot];
}

/* the labels from the initial state to node (exact store), written backwards into buf;
 * returns the length (or -1 when cap is too small) */
int64_t s_path(search_t *S, int64_t node, uint32_t *buf, int64_t cap) {
    int64_t n = 0;
    while (node > 0) {
        if (n >= cap) return -1;
        buf[n++] = S->label[node];
        node = S->parent[node];
    }
    return n;
}

int64_t s_chain(search_t *S, int64_t k, int32_t *buf, int64_t cap) {
    int64_t len = S->chlen[k];
    if (len > cap) return -len;
    memcpy(buf, S->chains + S->choff[k], (size_t)len * sizeof(int32_t));
    return len;
}

#endif /* NO_SAFETY_SEARCH */
