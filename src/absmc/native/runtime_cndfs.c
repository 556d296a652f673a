/* absmc native back end: multi-core LTL, CNDFS (Evangelista, Laarman, Petrucci, van de Pol,
 * "Improved multi-core nested depth-first search", ATVA 2012: the algorithm CNDFS, as LTSmin's
 * multi-core LTL runs it). Appended after runtime_ltl.c, whose product (l_expand: claim move
 * first, then the system's steps; stuttering; SPIN's weak-fairness counter) it searches.
 *
 * P threads search the same product from its initial state, each worker p in its own order
 * (worker 0 in SPIN's order, as the one-thread search; the others in a random permutation of
 * each state's successors, seeded per worker). Shared per product state: `blue` (some worker
 * finished its blue search of it) and `red` (it lies on no accepting cycle); per worker p:
 * cyan[p] (on p's blue stack) and pink[p] (in p's current red search, the paper's R_p).
 *
 *   dfsBlue_p(s): s.cyan[p] := true
 *     for t in post_p(s):
 *       if t.cyan[p] and (s in A or t in A): report cycle        (early detection: needed)
 *       if not t.cyan[p] and not t.blue and not t.red: dfsBlue_p(t)
 *     s.blue := true
 *     if s in A: R_p := {}; dfsRed_p(s)
 *                await every s' in R_p & A \ {s} is red           (the others' red searches)
 *                every s' in R_p: s'.red := true
 *     s.cyan[p] := false
 *   dfsRed_p(s): R_p += {s}
 *     for t in post_p(s): if t.cyan[p]: report cycle
 *                         if t not in R_p and not t.red: dfsRed_p(t)
 *
 * "No cycle" only when every worker's blue search has ended. A cycle found by a worker is a
 * lasso of its blue stack and (from a red search) its red stack to the cyan state it met, in
 * the format of runtime_ltl.c's (native/ltl.py replays it). At "no cycle" every reachable
 * product state is blue or red (a successor of a blue state is blue, red or was on a blue
 * stack; every successor of a red state is red), i.e. expanded by a blue or a red search. A red
 * search may enter a state on another worker's blue stack and store successors that worker
 * has not met yet; made red, those are skipped by every blue search. So both searches expand
 * with the safety checks of runtime_ltl.c (a failing step, an invalid end state; a new state's
 * state properties when stored): they cover the whole product, as one thread's outer search.
 *
 * The store: the packed product states (LW words) in chunks that never move (2^CN_CB states
 * each, with one flag word per state: blue, red, cyan and pink of each worker), found by a hash
 * table in 2^CN_SB shards, each an open-addressing table of 32-bit ids under its own spin lock
 * (runtime_par.c spin_lock), grown by its own lock holder. The threads run from the first
 * cn_run until the search ends or cn_stop (limits, Ctrl-C: native/ltl.py); cn_run waits at
 * most a time slice for them, so Python keeps control between slices. */

#define CN_MAX 31 /* flags: blue, red, then cyan and pink per worker: 2 + 2 * 31 bits */
#define CN_BLUE 1ULL
#define CN_RED 2ULL
#define CN_CYAN(p) (1ULL << (2 + 2 * (p)))
#define CN_PINK(p) (1ULL << (3 + 2 * (p)))
#define CN_CB 14
#define CN_CHUNK (1LL << CN_CB)
#define CN_NCHUNK (1LL << (32 - CN_CB))
#define CN_SB 8
#define CN_LIMIT (INT64_MIN + 1) /* cn_find: the state would pass --max-states */
#define CN_ACC (1ULL << 63)      /* R_p entries: id | CN_ACC when accepting */

enum { CN_BLUE_PHASE, CN_RED_PHASE, CN_AWAIT_PHASE };

typedef struct cshard_s {
    volatile int lock;
    uint32_t *t; /* id + 1; 0: empty */
    uint64_t cap, n;
} __attribute__((aligned(64))) cshard_t;

typedef struct cw_s {
    struct cn_s *N;
    int p, phase;
    ltl_t *E; /* this worker's context for l_expand (no store of its own) */
    pthread_t th;
    lframe_t *bs; int64_t nbs, capbs;   /* blue stack */
    lframe_t *rs; int64_t nrs, caprs;   /* red stack */
    uint64_t *bsucc; int64_t nbsucc, capbsucc;
    uint64_t *rsucc; int64_t nrsucc, caprsucc;
    uint64_t *R; int64_t nR, capR, await_i;
    int64_t transitions, deepest, nested, waits, expanded, reduced;
    int64_t pub[6] __attribute__((aligned(64))); /* published: transitions, deepest, nested,
                                                    stack depth, expanded, reduced */
    uint64_t rng;
    int64_t *lasso; int64_t nlasso, cycle_start;
    char pad_[64];
} cw_t;

typedef struct cn_s {
    cshard_t sh[1 << CN_SB];
    int64_t nids __attribute__((aligned(64)));   /* ids taken */
    int status __attribute__((aligned(64)));     /* L_RUNNING until a worker ends the search */
    int stop;
    int claim, stutter, safety, deadlock, state_checks, fair, n;
    int por; /* partial-order reduction with the static proviso (cn_set_reduce) */
    int64_t max_states, init_id, chunk_count;
    uint64_t **chunks;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int running, done, started, created, winner;
    cw_t *w[CN_MAX];
} cn_t;

static inline uint64_t *cn_state(cn_t *N, int64_t id) {
    uint64_t *c = __atomic_load_n(&N->chunks[id >> CN_CB], __ATOMIC_ACQUIRE);
    return c + (id & (CN_CHUNK - 1)) * LW;
}

static inline uint64_t *cn_flag(cn_t *N, int64_t id) {
    uint64_t *c = __atomic_load_n(&N->chunks[id >> CN_CB], __ATOMIC_ACQUIRE);
    return c + CN_CHUNK * LW + (id & (CN_CHUNK - 1));
}

static uint64_t *cn_chunk(cn_t *N, int64_t k) {
    uint64_t *c = (uint64_t *)calloc((size_t)CN_CHUNK * (LW + 1), sizeof(uint64_t));
    if (!c) return NULL;
    uint64_t *none = NULL;
    if (__atomic_compare_exchange_n(&N->chunks[k], &none, c, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(&N->chunk_count, 1, __ATOMIC_RELAXED);
        return c;
    }
    free(c);
    return none;
}

static int cn_grow(cn_t *N, cshard_t *S) {
    uint64_t nc = S->cap * 2;
    uint32_t *t = (uint32_t *)calloc(nc, sizeof(uint32_t));
    if (!t) return 0;
    for (uint64_t i = 0; i < S->cap; i++) {
        if (!S->t[i]) continue;
        uint64_t p = l_hash(cn_state(N, (int64_t)S->t[i] - 1)) & (nc - 1);
        while (t[p]) p = (p + 1) & (nc - 1);
        t[p] = S->t[i];
    }
    free(S->t);
    S->t = t;
    S->cap = nc;
    return 1;
}

/* the id of product state w; -1 when absent and not `add`; a new state gets the next id (and
 * *fresh = 1); L_NOMEM, CN_LIMIT */
static int64_t cn_find(cn_t *N, const uint64_t *w, int add, int *fresh) {
    uint64_t h = l_hash(w);
    cshard_t *S = &N->sh[h >> (64 - CN_SB)];
    spin_lock(&S->lock);
    if (add && (S->n + 1) * 2 > S->cap && !cn_grow(N, S)) {
        spin_unlock(&S->lock);
        return L_NOMEM;
    }
    uint64_t m = S->cap - 1, p = h & m;
    while (S->t[p]) {
        int64_t id = (int64_t)S->t[p] - 1;
        if (memcmp(cn_state(N, id), w, sizeof(uint64_t) * LW) == 0) {
            spin_unlock(&S->lock);
            return id;
        }
        p = (p + 1) & m;
    }
    if (!add) {
        spin_unlock(&S->lock);
        return -1;
    }
    int64_t id = __atomic_fetch_add(&N->nids, 1, __ATOMIC_RELAXED);
    if (N->max_states >= 0 && id >= N->max_states) {
        spin_unlock(&S->lock);
        return CN_LIMIT;
    }
    uint64_t *c = id < 0xfffffff0LL ? __atomic_load_n(&N->chunks[id >> CN_CB], __ATOMIC_ACQUIRE)
                                    : NULL;
    if (!c && id < 0xfffffff0LL) c = cn_chunk(N, id >> CN_CB);
    if (!c) {
        spin_unlock(&S->lock);
        return L_NOMEM;
    }
    memcpy(c + (id & (CN_CHUNK - 1)) * LW, w, sizeof(uint64_t) * LW);
    S->t[p] = (uint32_t)(id + 1);
    S->n++;
    spin_unlock(&S->lock);
    *fresh = 1;
    return id;
}

/* the id of successor t (stored when new: its state properties are checked), or -L_status */
static int64_t cn_add(cw_t *W, const uint64_t *t) {
    cn_t *N = W->N;
    int fresh = 0;
    int64_t id = cn_find(N, t, 1, &fresh);
    if (id == L_NOMEM) return -L_MEMORY;
    if (id == CN_LIMIT) return -L_STATES;
    if (fresh && N->safety && N->state_checks) {
        int32_t out[NPROP > 0 ? NPROP : 1];
        m_unpack(t, W->E->v);
        ctx_reset(W->E->C);
        int nv = m_violated(W->E->C, W->E->v, out);
        if (W->E->C->ovf) return -L_OVERFLOW;
        if (nv) return -L_SAFETY;
    }
    return id;
}

/* worker p > 0: a random order of the n successors at a (xorshift64, seeded per worker) */
static void cn_permute(cw_t *W, uint64_t *a, int64_t n) {
    if (W->p == 0 || n < 2) return;
    uint64_t tmp[LW];
    for (int64_t i = n - 1; i > 0; i--) {
        W->rng ^= W->rng << 13;
        W->rng ^= W->rng >> 7;
        W->rng ^= W->rng << 17;
        int64_t j = (int64_t)(W->rng % (uint64_t)(i + 1));
        if (j == i) continue;
        memcpy(tmp, a + i * LW, sizeof tmp);
        memcpy(a + i * LW, a + j * LW, sizeof tmp);
        memcpy(a + j * LW, tmp, sizeof tmp);
    }
}

/* The ample set of CNDFS (runtime_cndfs.c), whose threads' blue and red searches need one
 * reduced graph: as l_ample's (the first safe process, youngest first, with some but not every
 * step) but with the static cycle proviso instead of the stack's (Kurshan, Levin, Minea,
 * Peled, Yenigun, "Static partial order reduction", TACAS 1998): every command of every step
 * of the process is forward (m_lfwd, ir/dependency.py forward_commands: it raises the pcs it
 * sets), so every cycle has a step that is not, taken where the state was expanded fully. The
 * choice depends on the state alone. The last expansion's successors are at buf[off..off + n);
 * returns the number kept (n: expanded fully). No weak fairness (its safe locations need the
 * (s, q) choice of l_ample). */
static int64_t l_ample_static(ltl_t *L, uint64_t *buf, int64_t off, int64_t n) {
    int ns = L->last_ns;
    if (ns < 2 || L->last_nt == 0 || L->fair) return n;
    for (int r = LPOR_ROWS - 1; r >= 0; r--) {
        if (!l_por_safe(L, r)) continue;
        int p = m_lpor_proc[r], c = 0, forward = 1;
        for (int i = 0; i < ns; i++) {
            if (l_step_proc(L, i) != p) continue;
            c++;
            int st = L->order[i];
            for (int m = 0; m < L->C->slen[st]; m++)
                if (!m_lfwd[L->C->ch[L->C->soff[st] + m]]) forward = 0;
        }
        if (c == 0) continue;
        if (c == ns) return n; /* the process has every step: nothing to leave out */
        if (!forward) continue;
        return l_keep(L, buf, off, n, p);
    }
    return n;
}

static int cn_push_blue(cw_t *W, int64_t id) {
    cn_t *N = W->N;
    if (!l_frames(&W->bs, &W->capbs, W->nbs + 1)) return L_MEMORY;
    int64_t off = W->nbsucc;
    int64_t n = l_expand(W->E, cn_state(N, id), &W->bsucc, &W->nbsucc, &W->capbsucc, 1);
    if (n < 0) return (int)-n;
    if (N->por) {
        int64_t m = l_ample_static(W->E, W->bsucc, off, n);
        W->reduced += m < n;
        n = m;
        W->nbsucc = off + n;
    }
    cn_permute(W, W->bsucc + off * LW, n);
    W->transitions += n;
    W->expanded++;
    if (W->nbs > W->deepest) W->deepest = W->nbs;
    lframe_t *f = &W->bs[W->nbs++];
    f->id = id;
    f->off = off;
    f->n = (int32_t)n;
    f->i = 0;
    __atomic_fetch_or(cn_flag(N, id), CN_CYAN(W->p), __ATOMIC_SEQ_CST);
    return L_RUNNING;
}

static int cn_pop_blue(cw_t *W) {
    lframe_t *f = &W->bs[W->nbs - 1];
    __atomic_fetch_and(cn_flag(W->N, f->id), ~CN_CYAN(W->p), __ATOMIC_SEQ_CST);
    W->nbsucc = f->off;
    W->nbs--;
    return W->nbs ? L_RUNNING : L_DONE;
}

/* the lasso: the blue stack, with `nested` the red stack after its seed, then `close` (a
 * state on the blue stack: the cycle starts at its first place there) */
static int cn_lasso(cw_t *W, int nested, int64_t close) {
    int64_t n, start;
    int64_t *p = l_lasso_path(W->bs, W->nbs, W->rs, nested ? W->nrs : 0, close, &n, &start);
    if (!p) return L_MEMORY;
    free(W->lasso);
    W->lasso = p;
    W->nlasso = n;
    W->cycle_start = start;
    return L_FOUND;
}

static int cn_push_red(cw_t *W, int64_t id) {
    cn_t *N = W->N;
    if (!l_frames(&W->rs, &W->caprs, W->nrs + 1)) return L_MEMORY;
    if (!l_reserve(&W->R, &W->capR, W->nR + 1)) return L_MEMORY;
    int64_t off = W->nrsucc;
    const uint64_t *s = cn_state(N, id);
    /* with the checks: a red search may enter states no blue search will expand (below) */
    int64_t n = l_expand(W->E, s, &W->rsucc, &W->nrsucc, &W->caprsucc, 1);
    if (n < 0) return (int)-n;
    if (N->por) {  /* the blue searches' reduced graph */
        n = l_ample_static(W->E, W->rsucc, off, n);
        W->nrsucc = off + n;
    }
    cn_permute(W, W->rsucc + off * LW, n);
    lframe_t *g = &W->rs[W->nrs++];
    g->id = id;
    g->off = off;
    g->n = (int32_t)n;
    g->i = 0;
    W->R[W->nR++] = (uint64_t)id | (l_accepting(W->E, s) ? CN_ACC : 0);
    __atomic_fetch_or(cn_flag(N, id), CN_PINK(W->p), __ATOMIC_SEQ_CST);
    W->nested++;
    return L_RUNNING;
}

static int cn_blue_step(cw_t *W) {
    cn_t *N = W->N;
    lframe_t *f = &W->bs[W->nbs - 1];
    if (f->i < f->n) {
        uint64_t t[LW];
        memcpy(t, W->bsucc + (f->off + f->i) * LW, sizeof t);
        f->i++;
        int64_t id = cn_add(W, t);
        if (id < 0) return (int)-id;
        uint64_t fl = __atomic_load_n(cn_flag(N, id), __ATOMIC_SEQ_CST);
        if (fl & CN_CYAN(W->p)) {
            if (l_accepting(W->E, t) || l_accepting(W->E, cn_state(N, f->id)))
                return cn_lasso(W, 0, id);
            return L_RUNNING;
        }
        if (fl & (CN_BLUE | CN_RED)) return L_RUNNING; /* LTSmin: red is above blue */
        return cn_push_blue(W, id);
    }
    __atomic_fetch_or(cn_flag(N, f->id), CN_BLUE, __ATOMIC_SEQ_CST);
    if (!l_accepting(W->E, cn_state(N, f->id))) return cn_pop_blue(W);
    W->nR = 0;
    W->nrs = 0;
    W->nrsucc = 0;
    W->phase = CN_RED_PHASE;
    return cn_push_red(W, f->id);
}

static int cn_red_step(cw_t *W) {
    cn_t *N = W->N;
    lframe_t *f = &W->rs[W->nrs - 1];
    if (f->i < f->n) {
        uint64_t t[LW];
        memcpy(t, W->rsucc + (f->off + f->i) * LW, sizeof t);
        f->i++;
        /* a state on another worker's blue stack may have successors not stored yet */
        int64_t id = cn_add(W, t);
        if (id < 0) return (int)-id;
        uint64_t fl = __atomic_load_n(cn_flag(N, id), __ATOMIC_SEQ_CST);
        if (fl & CN_CYAN(W->p)) return cn_lasso(W, 1, id);
        if (fl & (CN_PINK(W->p) | CN_RED)) return L_RUNNING;
        return cn_push_red(W, id);
    }
    W->nrsucc = f->off;
    if (--W->nrs == 0) {
        W->phase = CN_AWAIT_PHASE;
        W->await_i = 0;
    }
    return L_RUNNING;
}

/* the await of the red search that ended: then R_p turns red and the seed leaves the stack */
static int cn_await_step(cw_t *W) {
    cn_t *N = W->N;
    int64_t seed = W->bs[W->nbs - 1].id;
    while (W->await_i < W->nR) {
        uint64_t r = W->R[W->await_i];
        int64_t id = (int64_t)(r & ~CN_ACC);
        if ((r & CN_ACC) && id != seed &&
            !(__atomic_load_n(cn_flag(N, id), __ATOMIC_SEQ_CST) & CN_RED)) {
            W->waits++;
            sched_yield();
            return L_RUNNING; /* the thread's loop looks at the stop flag */
        }
        W->await_i++;
    }
    for (int64_t k = 0; k < W->nR; k++) {
        uint64_t *fl = cn_flag(N, (int64_t)(W->R[k] & ~CN_ACC));
        __atomic_fetch_or(fl, CN_RED, __ATOMIC_SEQ_CST);
        __atomic_fetch_and(fl, ~CN_PINK(W->p), __ATOMIC_SEQ_CST);
    }
    W->nR = 0;
    W->phase = CN_BLUE_PHASE;
    return cn_pop_blue(W);
}

static void cn_publish(cw_t *W) {
    __atomic_store_n(&W->pub[0], W->transitions, __ATOMIC_RELAXED);
    __atomic_store_n(&W->pub[1], W->deepest, __ATOMIC_RELAXED);
    __atomic_store_n(&W->pub[2], W->nested, __ATOMIC_RELAXED);
    __atomic_store_n(&W->pub[3], W->nbs, __ATOMIC_RELAXED);
    __atomic_store_n(&W->pub[4], W->expanded, __ATOMIC_RELAXED);
    __atomic_store_n(&W->pub[5], W->reduced, __ATOMIC_RELAXED);
}

static void *cn_thread(void *arg) {
    cw_t *W = (cw_t *)arg;
    cn_t *N = W->N;
    int s = cn_push_blue(W, N->init_id);
    for (uint64_t k = 1; s == L_RUNNING; k++) {
        if (__atomic_load_n(&N->stop, __ATOMIC_RELAXED) ||
            __atomic_load_n(&N->status, __ATOMIC_RELAXED) != L_RUNNING)
            break;
        s = W->phase == CN_BLUE_PHASE  ? cn_blue_step(W)
            : W->phase == CN_RED_PHASE ? cn_red_step(W)
                                       : cn_await_step(W);
        if (!(k & 1023)) cn_publish(W);
    }
    cn_publish(W);
    if (s != L_RUNNING && s != L_DONE) {
        int running = L_RUNNING;
        if (__atomic_compare_exchange_n(&N->status, &running, s, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            N->winner = W->p; /* read after the join */
    }
    pthread_mutex_lock(&N->m);
    if (s == L_DONE) N->done++;
    N->running--;
    pthread_cond_broadcast(&N->cv);
    pthread_mutex_unlock(&N->m);
    return NULL;
}

static void cn_free_worker(cw_t *W) {
    if (!W) return;
    l_free(W->E);
    free(W->bs); free(W->rs); free(W->bsucc); free(W->rsucc); free(W->R); free(W->lasso);
    free(W);
}

void cn_free(cn_t *N);

cn_t *cn_new(int claim, int stutter, int safety, int deadlock, int state_checks, int fair,
             int64_t max_states, int threads) {
    if (threads < 1) threads = 1;
    if (threads > CN_MAX) threads = CN_MAX;
    size_t size = (sizeof(cn_t) + 63) / 64 * 64;
    cn_t *N = (cn_t *)aligned_alloc(64, size);
    if (!N) return NULL;
    memset(N, 0, size);
    pthread_mutex_init(&N->m, NULL);
    pthread_cond_init(&N->cv, NULL);
    N->claim = claim;
    N->stutter = stutter;
    N->safety = safety;
    N->deadlock = safety && deadlock;
    N->state_checks = state_checks;
    N->fair = fair;
    N->max_states = max_states;
    N->n = threads;
    N->chunks = (uint64_t **)calloc((size_t)CN_NCHUNK, sizeof(uint64_t *));
    int ok = N->chunks != NULL;
    for (int i = 0; ok && i < (1 << CN_SB); i++) {
        N->sh[i].cap = 1024;
        N->sh[i].t = (uint32_t *)calloc(1024, sizeof(uint32_t));
        ok = N->sh[i].t != NULL;
    }
    for (int p = 0; ok && p < threads; p++) {
        size_t ws = (sizeof(cw_t) + 63) / 64 * 64;
        cw_t *W = (cw_t *)aligned_alloc(64, ws);
        if (!W) { ok = 0; break; }
        memset(W, 0, ws);
        N->w[p] = W;
        W->N = N;
        W->p = p;
        W->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(p + 1) ^ 0xD1B54A32D192ED03ULL;
        /* l_new without its store: only the expansion context is used */
        ltl_t *E = (ltl_t *)calloc(1, sizeof(ltl_t));
        W->E = E;
        if (!E) { ok = 0; break; }
        E->C = ctx_new();
        E->targets = (int32_t *)malloc(sizeof(int32_t) * (size_t)(m_claim_size(claim) + 1));
        ok = E->C && E->targets;
        E->claim = claim;
        E->stutter = stutter;
        E->safety = safety;
        E->deadlock = N->deadlock;
        E->state_checks = state_checks;
        E->fair = fair;
    }
    if (!ok) {
        cn_free(N);
        return NULL;
    }
    return N;
}

static void cn_join(cn_t *N) {
    pthread_mutex_lock(&N->m);
    while (N->running > 0) pthread_cond_wait(&N->cv, &N->m);
    pthread_mutex_unlock(&N->m);
    for (int p = 0; p < N->created; p++) pthread_join(N->w[p]->th, NULL);
    N->created = 0;
}

/* stop the threads (limits, Ctrl-C) and wait for them: the counts are then final */
void cn_stop(cn_t *N) {
    __atomic_store_n(&N->stop, 1, __ATOMIC_SEQ_CST);
    cn_join(N);
}

void cn_free(cn_t *N) {
    if (!N) return;
    cn_stop(N);
    for (int p = 0; p < N->n; p++) cn_free_worker(N->w[p]);
    for (int i = 0; i < (1 << CN_SB); i++) free(N->sh[i].t);
    if (N->chunks)
        for (int64_t k = 0; k < CN_NCHUNK; k++) free(N->chunks[k]);
    free(N->chunks);
    pthread_mutex_destroy(&N->m);
    pthread_cond_destroy(&N->cv);
    free(N);
}

static int cn_begin(cn_t *N, const int64_t *init) {
    if (!m_in_range(init)) return L_OVERFLOW;
    uint64_t w[LW];
    m_pack(init, w);
    w[NW] = (uint64_t)m_claim_init(N->claim);
    int fresh = 0;
    int64_t id = cn_find(N, w, 1, &fresh);
    if (id == L_NOMEM) return L_MEMORY;
    if (id == CN_LIMIT) return L_STATES;
    if (N->safety && N->state_checks) {
        int32_t out[NPROP > 0 ? NPROP : 1];
        ctx_t *C = N->w[0]->E->C;
        ctx_reset(C);
        int nv = m_violated(C, init, out);
        if (C->ovf) return L_OVERFLOW;
        if (nv) return L_SAFETY;
    }
    N->init_id = id;
    N->running = N->n;
    for (int p = 0; p < N->n; p++) {
        if (pthread_create(&N->w[p]->th, NULL, cn_thread, N->w[p]) != 0) {
            pthread_mutex_lock(&N->m);
            N->running -= N->n - p;
            pthread_mutex_unlock(&N->m);
            __atomic_store_n(&N->stop, 1, __ATOMIC_SEQ_CST);
            cn_join(N);
            return L_MEMORY;
        }
        N->created = p + 1;
    }
    return L_RUNNING;
}

/* run the search (the threads start at the first call) and wait at most `seconds` for its end;
 * returns an L_* status (L_SLICE: still running, call again or cn_stop) */
int cn_run(cn_t *N, const int64_t *init, double seconds) {
    if (!N->started) {
        N->started = 1;
        int s = cn_begin(N, init);
        if (s != L_RUNNING) return N->status = s;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double end = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + seconds;
    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    pthread_mutex_lock(&N->m);
    while (N->running > 0)
        if (pthread_cond_timedwait(&N->cv, &N->m, &ts) != 0) break;
    int running = N->running, done = N->done;
    pthread_mutex_unlock(&N->m);
    if (running > 0) return L_SLICE;
    cn_join(N);
    int s = __atomic_load_n(&N->status, __ATOMIC_ACQUIRE);
    if (s == L_RUNNING) {
        if (done < N->n) return L_SLICE; /* stopped (cn_stop): not an answer */
        N->status = s = L_DONE;
    }
    return s;
}

/* statistics: 0 states stored, 1 transitions, 2 deepest blue stack, 4 states entered by red
 * searches, 5 lasso length, 6 its cycle start, 7 store bytes, 8 current deepest stack, 9
 * awaits that waited, 10 threads, 11 blue expansions by an ample set (a state the blue
 * searches of several threads expanded counts once per thread); 16 + p: the states thread p
 * expanded in its blue search */
int64_t cn_stat(cn_t *N, int which) {
    if (which >= 16)
        return which - 16 < N->n ? __atomic_load_n(&N->w[which - 16]->pub[4], __ATOMIC_RELAXED)
                                 : 0;
    int64_t sum = 0, most = 0;
    for (int p = 0; p < N->n && which != 0 && which != 7; p++) {
        int k = which == 1    ? 0
                : which == 2  ? 1
                : which == 4  ? 2
                : which == 8  ? 3
                : which == 11 ? 5
                              : -1;
        if (which == 9) sum += N->w[p]->waits;
        if (k < 0) continue;
        int64_t x = __atomic_load_n(&N->w[p]->pub[k], __ATOMIC_RELAXED);
        sum += x;
        if (x > most) most = x;
    }
    int64_t ids = __atomic_load_n(&N->nids, __ATOMIC_RELAXED);
    cw_t *win = N->status == L_FOUND ? N->w[N->winner] : NULL;
    switch (which) {
    case 0: return N->max_states >= 0 && ids > N->max_states ? N->max_states : ids;
    case 1: return sum;
    case 2: return most;
    case 4: return sum;
    case 5: return win ? win->nlasso : 0;
    case 6: return win ? win->cycle_start : -1;
    case 7: {
        int64_t b = __atomic_load_n(&N->chunk_count, __ATOMIC_RELAXED) * CN_CHUNK * (LW + 1) * 8;
        for (int i = 0; i < (1 << CN_SB); i++)
            b += (int64_t)__atomic_load_n(&N->sh[i].cap, __ATOMIC_RELAXED) * 4;
        return b;
    }
    case 8: return most;
    case 9: return sum;
    case 10: return N->n;
    case 11: return sum;
    default: return 0;
    }
}

/* the k-th state of the lasso (after L_FOUND): its unpacked system state into out, its
 * automaton state */
int cn_lasso_state(cn_t *N, int64_t k, int64_t *out) {
    const uint64_t *w = cn_state(N, N->w[N->winner]->lasso[k]);
    m_unpack(w, out);
    return L_Q(w[NW]);
}

/* the weak-fairness counter of the k-th state of the lasso (0 without fairness) */
int cn_lasso_counter(cn_t *N, int64_t k) {
    return L_C(cn_state(N, N->w[N->winner]->lasso[k])[NW]);
}

/* partial-order reduction with the static proviso (l_ample_static; not under weak fairness)
 * on (1) or off (0), before the first cn_run; returns whether it is on (0 when no location is
 * safe) */
int cn_set_reduce(cn_t *N, int on) {
    if (N->started) return N->por = 0;
    N->por = on && !N->fair && LPOR_ROWS > 0;
    return N->por;
}
