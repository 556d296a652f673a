/* absmc native back end: the multi-threaded search (after runtime_tail.c).
 *
 * Threads share the exact store: one open-addressing table updated with compare-and-swap, as
 * in LTSmin's and SPIN's multi-core hash tables (Laarman, van de Pol, Weber, "Boosting
 * multi-core reachability performance with shared hash tables", FMCAD 2010). A slot is claimed
 * by CAS from empty to BUSY (its 32-bit tag with id bits all ones); the claiming thread takes
 * the next state id (from its block of ids), writes the packed state, its parent id and label into
 * the never-moving arena (runtime_tail.c arena_reserve), then publishes tag << 32 | id + 1 with
 * release order. A thread that meets BUSY with its own tag waits for the id and compares.
 *
 * Work: each thread has a FIFO queue of (id, depth) entries under a spin lock; it takes up to
 * POP_BATCH of them at a time (all of a short queue: the batch's table slots are prefetched
 * together; only while a thread looks for work does it leave half of a long queue to it), and
 * a thread whose queue is empty steals the older half of the longest other queue, or sleeps
 * when none has a surplus (par_thread: the threads that run follow the work there is). No
 * barrier per BFS level (the scaling
 * models have levels of a few states), so the order is not breadth-first: depths are those of
 * the discovery tree, and a counterexample path (through the parent ids) is not necessarily a
 * shortest one. The search is over when every thread is idle (see par_thread). The table grows
 * (at 80% load) at a rendezvous (a thread that sees the request stops before its next
 * insertion), where all threads move the entries (par_sync). Each call of s_run runs the threads
 * for one time slice and joins them, so Python keeps control of limits and Ctrl-C. */

#define PAR_MAX 64

/* PAR_PROF (defined before this file, e.g. by benchmarks/par_profile.py; x86: rdtsc): per-thread
 * counters of where the time goes (TSC cycles expanding, popping, stealing/idle, in the
 * rendezvous), printed to stderr after each slice. Off: the macros compile to nothing. */
#ifdef PAR_PROF
#include <stdio.h>
#include <sys/resource.h>
#include <x86intrin.h>
#define PROF(x) x
#else
#define PROF(x)
#endif
/* the shared table grows past S->load_pct percent load (80; 95 once memory refused growth) */
#define BUSY_ID 0xffffffffULL
/* a slot claimed for a state that --max-states left out (the search stops): matches no state */
#define TOMB_ID 0xfffffffeULL

typedef struct pq_s {
    volatile int lock;
    uint64_t *q; /* ring buffer of id | depth << 32 */
    int64_t head, n, cap;
} __attribute__((aligned(64))) pq_t;

/* state ids are taken from a shared counter in blocks (one atomic addition per block, not per
 * state); the ids of a thread's last block that it did not use stay holes in the arena */
#define ID_BLOCK 256
/* states a thread expands per batch (fewer when its queue is short or a thread is idle) */
#define POP_BATCH 32
/* new states a thread collects before adding them to its queue */
#define OUT_MAX 256

/* a thread's memo of interned chains (par_chain): direct-mapped by the chain's hash, each entry
 * the chain itself (at most CHAIN_MEMO_LEN commands; len 0: empty) and its label */
#define CHAIN_MEMO 1024
#define CHAIN_MEMO_LEN 8
typedef struct {
    uint64_t h;
    int64_t label;
    int32_t len;
    int32_t c[CHAIN_MEMO_LEN];
} chain_memo_t;

typedef struct pw_s {
    struct search_s *S;
    int tid;
    ctx_t *C;
    pthread_t th;
    int64_t transitions, max_depth;
    int64_t stored;             /* states this thread stored */
    int64_t permits;            /* --max-states: states it may still store (see par_permit) */
    int64_t bs_new, bs_matched, bs_bits; /* bitstate: this slice's counts (par_insert_bs) */
    double cpu;                 /* CPU seconds this thread used, all slices */
    /* the successors of the batch being expanded: packed, hash, label, parent | depth << 32,
       unpacked (for state properties) */
    uint64_t *bw, *bh, *bpar;
    int64_t *blab, *bv;
    int bcap;
    /* partial-order reduction (por_order in runtime_tail.c): one state's step order, each
       successor's role (0: its state is expanded fully; else its group + 1, | 0x80 on the first
       successor of its state), states expanded by an ample set only */
    int32_t *ord;
    uint8_t *bpor;
    int ordcap;
    int64_t reduced;
    uint64_t *ents, *out, *stealbuf; /* POP_BATCH, OUT_MAX and STEAL_MAX queue elements */
    chain_memo_t *memo;              /* CHAIN_MEMO entries (par_chain) */
    int64_t id_next, id_end;    /* its block of ids */
    int64_t vals[NVA];
    uint64_t packed[NWA];
    int32_t viol_buf[NPROP > 0 ? NPROP : 1];
#ifdef PAR_PROF
    /* cycles: expanding, in pq_pop_many, idle (stealing, backing off); counts: batches, states
       expanded, empty pops, steals that got work / failed, states stolen, states expanded that
       another thread stored, lookups that matched a state another thread stored, new states */
    uint64_t c_exp, c_pop, c_idle, n_batch, n_exp, n_dry, n_steal, n_steal0, n_stolen;
    uint64_t n_remote_exp, n_remote_hit, n_hit, n_new, n_idle_spells;
    long ru_minflt, ru_nvcsw, ru_nivcsw; /* getrusage(RUSAGE_THREAD) at the thread's end */
    uint64_t c_wall;                     /* cycles from the thread's start to its end */
    uint64_t c_sync, c_wait, n_sync;     /* cycles in par_sync, waiting there; rendezvous */
    uint64_t n_sleep, n_woke, c_sleep;   /* sleeps, wake-ups it sent, cycles asleep */
#endif
    char pad[64];
} pw_t;

typedef struct par_s {
    int n;
    int ew; /* words per queue element */
    pq_t qs[PAR_MAX];
    pw_t *w[PAR_MAX];
    int64_t id_top __attribute__((aligned(64))); /* the next block's first id */
    int idle __attribute__((aligned(64)));       /* threads with no work (termination) */
    /* read at every insertion: a cache line of their own (idle changes often) */
    int pause __attribute__((aligned(64)));
    int stop;
    double end;
    char pad_[64];
    pthread_mutex_t m;  /* the rendezvous for growing the table; violations; chains */
    pthread_cond_t cv;
    int arrived, active, arrived2;
    int64_t gen, gen2;
    uint64_t *mig_new; /* the table being filled while growing */
    uint64_t mig_cap;
    int64_t mig_next;  /* the next chunk of the old table to move */
    int64_t budget;    /* --max-states: states no thread holds a permit for yet (under m) */
    /* threads with no work sleep (see par_thread): `sleeping` asleep, `searching` looking for
       work to steal, `waking` a wake-up sent and not yet taken; sm/scv/wake_seq: the sleep */
    int sleeping __attribute__((aligned(64)));
    int searching;
    int waking;
    pthread_mutex_t sm;
    pthread_cond_t scv;
    int64_t wake_seq;
    int wake_min, steal_min, spin_passes; /* see WAKE_MIN, STEAL_MIN, SPIN_PASSES */
#ifdef PAR_PROF
    uint8_t *owner; /* per block of ID_BLOCK ids: 1 + the thread that took it (0: before) */
#endif
} par_t;

/* spin_lock, spin_unlock: runtime_tail.c (CNDFS takes them too) */

/* the queues hold elements of EW words: exact store: id | depth << 32 (EW = 1); hash-compact:
 * depth, then the packed state (EW = 1 + NWA: the state exists nowhere else) */
#define EW_MAX (1 + NWA)

/* copy n queue elements of ew words (ew = 1, the exact store, without a call to memcpy) */
static inline void pq_copy(uint64_t *d, const uint64_t *s, int64_t n, int ew) {
    if (ew == 1) {
        for (int64_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        memcpy(d, s, (size_t)n * ew * sizeof(uint64_t));
    }
}

/* the ring's capacity is a power of two: positions wrap by a mask, in at most two runs */
static int pq_push_many(pq_t *Q, const uint64_t *e, int n, int ew) {
    spin_lock(&Q->lock);
    if (Q->n + n > Q->cap) {
        int64_t nc = Q->cap ? Q->cap * 2 : 1024;
        while (nc < Q->n + n) nc *= 2;
        uint64_t *nq = (uint64_t *)malloc((size_t)nc * ew * sizeof(uint64_t));
        if (!nq) { spin_unlock(&Q->lock); return 0; }
        int64_t first = Q->cap - Q->head < Q->n ? Q->cap - Q->head : Q->n;
        pq_copy(nq, Q->q + Q->head * ew, first, ew);
        pq_copy(nq + first * ew, Q->q, Q->n - first, ew);
        free(Q->q);
        Q->q = nq;
        Q->head = 0;
        Q->cap = nc;
    }
    int64_t tail = (Q->head + Q->n) & (Q->cap - 1);
    int64_t first = Q->cap - tail < n ? Q->cap - tail : n;
    pq_copy(Q->q + tail * ew, e, first, ew);
    pq_copy(Q->q, e + first * ew, n - first, ew);
    Q->n += n;
    spin_unlock(&Q->lock);
    return 1;
}

static int pq_take(pq_t *Q, uint64_t *e, int64_t k, int ew) {
    int64_t first = Q->cap - Q->head < k ? Q->cap - Q->head : k;
    pq_copy(e, Q->q + Q->head * ew, first, ew);
    pq_copy(e + first * ew, Q->q, k - first, ew);
    Q->head = (Q->head + k) & (Q->cap - 1);
    Q->n -= k;
    return (int)k;
}

/* take up to max entries; while some thread is idle, leave half of a short queue to it */
static int pq_pop_many(pq_t *Q, uint64_t *e, int max, int ew, int share) {
    if (!__atomic_load_n(&Q->n, __ATOMIC_RELAXED)) return 0;
    spin_lock(&Q->lock);
    int64_t k = share ? Q->n / 2 : Q->n;
    if (k > max) k = max;
    if (k < 1) k = Q->n ? 1 : 0;
    int r = pq_take(Q, e, k, ew);
    spin_unlock(&Q->lock);
    return r;
}

#define STEAL_MAX 512
/* work distribution (par_thread): a thread steals only from a queue of at least STEAL_MIN
 * entries, wakes a sleeping thread once its own queue holds WAKE_MIN, and sleeps after
 * SPIN_PASSES looks for work that found none */
#define STEAL_MIN 4
#define WAKE_MIN 32
#define SPIN_PASSES 64

/* move the older half of victim's entries (at least one, at most STEAL_MAX) to thief's queue
 * through buf (STEAL_MAX elements) */
static int pq_steal(pq_t *victim, pq_t *thief, uint64_t *buf, int ew) {
    if (!__atomic_load_n(&victim->n, __ATOMIC_RELAXED)) return 0;
    spin_lock(&victim->lock);
    int64_t take = (victim->n + 1) / 2;
    if (take > STEAL_MAX) take = STEAL_MAX;
    int k = pq_take(victim, buf, take, ew);
    spin_unlock(&victim->lock);
    if (k && !pq_push_many(thief, buf, k, ew)) return -1;
    return k;
}

static void par_free(search_t *S) {
    par_t *P = S->par;
    if (!P) return;
    for (int i = 0; i < P->n; i++) {
        free(P->qs[i].q);
        if (P->w[i]) {
            ctx_free(P->w[i]->C);
            free(P->w[i]->bw);
            free(P->w[i]->bh);
            free(P->w[i]->bpar);
            free(P->w[i]->blab);
            free(P->w[i]->bv);
            free(P->w[i]->ord);
            free(P->w[i]->bpor);
            free(P->w[i]->ents);
            free(P->w[i]->out);
            free(P->w[i]->stealbuf);
            free(P->w[i]->memo);
        }
        free(P->w[i]);
    }
    pthread_mutex_destroy(&P->m);
    pthread_cond_destroy(&P->cv);
    pthread_mutex_destroy(&P->sm);
    pthread_cond_destroy(&P->scv);
    PROF(free(P->owner));
    free(P);
    S->par = NULL;
}

/* The rendezvous for growing the table, in two phases. Phase 1 ends when every active thread
 * has arrived: the last one allocates the new table (see the growth factor there). Then every thread moves
 * chunks of the old table into the new one (CAS on empty slots: the entries are distinct and no
 * insertion is under way), and phase 2 ends when all have arrived again: the last one installs
 * the new table. A thread that leaves the search (time slice over, stop) may complete a phase. */
#define MIG_CHUNK 65536

/* Sleeping threads (see par_thread). A thread that found no work sleeps on scv until
 * par_wake bumps wake_seq: one thread when a queue has a surplus (par_offer), all of them when
 * the search stops, or after SLEEP_NS anyway. Asleep, a thread is not `active`: the table
 * grows without it (par_sleep). */
#define SLEEP_NS 10000000L

static void par_wake(par_t *P, int all) {
    pthread_mutex_lock(&P->sm);
    P->wake_seq++;
    if (all) pthread_cond_broadcast(&P->scv);
    else pthread_cond_signal(&P->scv);
    pthread_mutex_unlock(&P->sm);
}

/* wake every sleeping thread (the search stops or pauses) */
static void par_wake_all(par_t *P) {
    if (__atomic_load_n(&P->sleeping, __ATOMIC_SEQ_CST)) par_wake(P, 1);
}

static void par_phase1_done(search_t *S) {
    par_t *P = S->par;
    S->tused = (uint64_t)P->id_top; /* a bound on the entries (ids taken, holes included) */
    P->mig_new = NULL;
    if (!S->status && S->tused * 100 > S->tcap * S->load_pct) {
        /* exact: x2 (fewer rounds; <= 20 table bytes per state); hash-compact: x1.5 (its
           8-byte entries are most of its memory: <= 15 bytes per state); smaller steps when
           the system refuses the memory, then a fuller table before giving up */
        uint64_t ncap = 0;
        int limited = 0;
        P->mig_new = table_alloc(S, &ncap, S->hc ? 12 : 16, &limited);
        if (!P->mig_new) {
            if (S->load_pct < 95) S->load_pct = 95;
            else S->status = limited ? STOP_MEMORY_LIMIT : STOP_MEMORY;
        }
        P->mig_cap = ncap;
        P->mig_next = 0;
    }
    if (!P->mig_new) __atomic_store_n(&P->pause, 0, __ATOMIC_RELEASE);
    P->arrived = 0;
    P->gen++;
    pthread_cond_broadcast(&P->cv);
}

static void par_phase2_done(search_t *S) {
    par_t *P = S->par;
    table_mem_free(S->table, S->tcap);
    S->table = P->mig_new;
    S->tcap = P->mig_cap;
    P->mig_new = NULL;
    __atomic_store_n(&P->pause, 0, __ATOMIC_RELEASE);
    P->arrived2 = 0;
    P->gen2++;
    pthread_cond_broadcast(&P->cv);
}

static void par_migrate(search_t *S, uint64_t *nt, uint64_t ncap) {
    par_t *P = S->par;
    const uint64_t *old = S->table;
    uint64_t ocap = S->tcap;
    for (;;) {
        uint64_t c = (uint64_t)__atomic_fetch_add(&P->mig_next, MIG_CHUNK, __ATOMIC_RELAXED);
        if (c >= ocap) break;
        uint64_t end = c + MIG_CHUNK < ocap ? c + MIG_CHUNK : ocap;
        for (uint64_t i = c; i < end; i++) {
            uint64_t e = old[i];
            if (!e) continue;
            uint64_t p = slot_of_entry(S, e, ncap);
            for (;;) {
                uint64_t z = 0;
                if (!__atomic_load_n(&nt[p], __ATOMIC_RELAXED) &&
                    __atomic_compare_exchange_n(&nt[p], &z, e, 0, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED))
                    break;
                p = (p + 1 == ncap) ? 0 : p + 1;
            }
        }
    }
}

#ifdef PAR_PROF
static __thread pw_t *prof_w; /* the thread's own pw_t (par_sync's counters) */
#endif

static void par_sync_(search_t *S) {
    par_t *P = S->par;
    pthread_mutex_lock(&P->m);
    if (!P->pause) { pthread_mutex_unlock(&P->m); return; }
    PROF(if (prof_w) prof_w->n_sync++; uint64_t w0 = __rdtsc());
    P->arrived++;
    if (P->arrived == P->active) {
        par_phase1_done(S);
    } else {
        int64_t g = P->gen;
        while (P->gen == g) pthread_cond_wait(&P->cv, &P->m);
    }
    PROF(if (prof_w) prof_w->c_wait += __rdtsc() - w0);
    uint64_t *nt = P->mig_new;
    uint64_t ncap = P->mig_cap;
    pthread_mutex_unlock(&P->m);
    if (!nt) return;
    par_migrate(S, nt, ncap);
    pthread_mutex_lock(&P->m);
    PROF(w0 = __rdtsc());
    P->arrived2++;
    if (P->arrived2 == P->active) {
        par_phase2_done(S);
    } else {
        int64_t g = P->gen2;
        while (P->gen2 == g) pthread_cond_wait(&P->cv, &P->m);
    }
    PROF(if (prof_w) prof_w->c_wait += __rdtsc() - w0);
    pthread_mutex_unlock(&P->m);
}

static void par_sync(search_t *S) {
    PROF(uint64_t t0 = __rdtsc());
    par_sync_(S);
    PROF(if (prof_w) prof_w->c_sync += __rdtsc() - t0);
}

static void par_leave(search_t *S) {
    par_t *P = S->par;
    pthread_mutex_lock(&P->m);
    P->active--;
    if (P->pause && P->active > 0) {
        if (P->arrived > 0 && P->arrived == P->active) par_phase1_done(S);
        else if (P->mig_new && P->arrived2 > 0 && P->arrived2 == P->active) par_phase2_done(S);
    }
    pthread_mutex_unlock(&P->m);
}

static inline int par_status(search_t *S) { return __atomic_load_n(&S->status, __ATOMIC_ACQUIRE); }

static void par_set_status(search_t *S, int st) {
    int zero = 0;
    if (__atomic_compare_exchange_n(&S->status, &zero, st, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        par_wake_all(S->par);
}

/* record a violation (under the lock); 1 when the search must stop */
static int par_record(search_t *S, int slot, int64_t node, int64_t label, int kind, int64_t a,
                      int64_t b, int64_t depth) {
    par_t *P = S->par;
    pthread_mutex_lock(&P->m);
    note_violation(S, slot, node, label, kind, a, b, depth);
    pthread_mutex_unlock(&P->m);
    if (!S->keep_going) {
        par_set_status(S, STOP_VIOLATION);
        return 1;
    }
    return 0;
}

/* the label of a successor's chain of commands (chain_intern under the mutex). Every successor
 * of a merged step asks, and nearly every time the chain is interned already: the thread's memo
 * answers those without the mutex (brp.3 with 16 threads had spent 3,100 cycles per state
 * expanding, against 1,400 with 8, queued on the mutex: 18,000 voluntary context switches) */
static int64_t par_chain(pw_t *W, const int32_t *c, int len) {
    if (len == 1) return c[0];
    chain_memo_t *m = NULL;
    uint64_t h = 0;
    if (len <= CHAIN_MEMO_LEN) {
        h = chain_hash(c, len);
        m = &W->memo[h & (CHAIN_MEMO - 1)];
        if (m->len == len && m->h == h && memcmp(m->c, c, (size_t)len * sizeof(int32_t)) == 0)
            return m->label;
    }
    search_t *S = W->S;
    pthread_mutex_lock(&S->par->m);
    int64_t r = chain_intern(S, c, len);
    pthread_mutex_unlock(&S->par->m);
    if (m && r >= 0) {
        m->h = h;
        m->label = r;
        m->len = len;
        memcpy(m->c, c, (size_t)len * sizeof(int32_t));
    }
    return r;
}

/* --max-states with threads. The states still allowed are permits: a shared budget (under the
 * mutex) from which a thread takes a block (an eighth of the rest per thread, at most
 * PERMIT_BLOCK), then spends one of its own per state it stores, right after claiming the
 * state's slot. A thread with none left takes a new block or, once the budget is spent, a permit
 * of another thread (under the mutex, so no block is between the budget and a thread). Only a
 * thread that finds no permit anywhere stops the search (STOP_STATES), and then every one of the
 * max_states permits went to a stored state: the threads stop at exactly max_states states, as
 * one thread does. Without --max-states none of this runs. */
#define PERMIT_BLOCK 256

/* par_permit's slow path, the mutex held */
static int par_permit_locked(pw_t *W) {
    par_t *P = W->S->par;
    int64_t x = __atomic_load_n(&W->permits, __ATOMIC_RELAXED);
    while (x > 0)
        if (__atomic_compare_exchange_n(&W->permits, &x, x - 1, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return 1;
    int ok = 0;
    if (P->budget > 0) {
        int64_t b = P->budget / (8 * P->n);
        if (b > PERMIT_BLOCK) b = PERMIT_BLOCK;
        if (b < 1) b = 1;
        P->budget -= b;
        __atomic_add_fetch(&W->permits, b - 1, __ATOMIC_RELAXED);
        ok = 1;
    }
    for (int i = 0; i < P->n && !ok; i++) {
        x = __atomic_load_n(&P->w[i]->permits, __ATOMIC_RELAXED);
        while (x > 0 && !ok)
            ok = __atomic_compare_exchange_n(&P->w[i]->permits, &x, x - 1, 0, __ATOMIC_RELAXED,
                                             __ATOMIC_RELAXED);
    }
    return ok;
}

static int par_permit_slow(pw_t *W) {
    pthread_mutex_lock(&W->S->par->m);
    int ok = par_permit_locked(W);
    pthread_mutex_unlock(&W->S->par->m);
    return ok;
}

/* 1: this thread may store one more state (one permit spent); 0: max_states are stored */
static inline int par_permit(pw_t *W) {
    int64_t x = __atomic_load_n(&W->permits, __ATOMIC_RELAXED);
    while (x > 0)
        if (__atomic_compare_exchange_n(&W->permits, &x, x - 1, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return 1;
    return par_permit_slow(W);
}

/* the hash-compact table: entries are the 64-bit hashes, claimed by CAS from empty */
static int par_insert_hc(pw_t *W, uint64_t h, int add) {
    search_t *S = W->S;
    uint64_t cap = S->tcap;
    uint64_t *T = S->table;
    uint64_t e = h ? h : 1;
    uint64_t p = slot_of_entry(S, e, cap);
    for (;;) {
        uint64_t x = __atomic_load_n(&T[p], __ATOMIC_RELAXED);
        if (x == e) return 0;
        if (!x) {
            if (!add) return 1;
            if (__atomic_compare_exchange_n(&T[p], &x, e, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                /* over --max-states: the entry stays (the search stops), not counted */
                if (S->max_states >= 0 && !par_permit(W)) return -2;
                /* count the entries in blocks, as the exact store takes ids */
                if (W->id_next == W->id_end) {
                    W->id_next = __atomic_fetch_add(&S->par->id_top, ID_BLOCK, __ATOMIC_RELAXED);
                    W->id_end = W->id_next + ID_BLOCK;
                }
                int64_t k = W->id_next++;
                __atomic_store_n(&W->stored, W->stored + 1, __ATOMIC_RELAXED);
                if ((uint64_t)k * 100 > cap * S->load_pct)
                    __atomic_store_n(&S->par->pause, 1, __ATOMIC_RELEASE);
                return 1;
            }
            if (x == e) return 0;
        }
        p = (p + 1 == cap) ? 0 : p + 1;
    }
}

/* The bitstate store in threads. The k bits of a state are read; those that are clear are set
 * by a relaxed atomic store of the byte read with the bit added (no locked instruction: with
 * an atomic OR per bit, a full barrier on x86, two threads took 11-37% more CPU than one), and
 * the state is new for the thread that set one. Two threads may both store a state they insert at the same
 * moment, and a thread may overwrite a bit another thread just set in the same byte (that state
 * is found new again later, never falsely matched): "states" may count a state twice (measured
 * with 2^31 bits: up to 149 of 2,883,417, under 0.01%; SPIN's multi-core bitstate search has the
 * same races).
 * Both only add states and set bits, so the union bound (stored + 1) * fill^k stays an upper
 * bound. A stripe lock per state hash excluded the double count but cost ~30% more CPU (its
 * lines moved between the cores). A sampled state (one in 64, by its hash) is inserted whole
 * under the mutex, bits and shadow-set entry together: a thread that finds its bits set also
 * finds it in the shadow set, so an observed false match is a certain one, as with one thread
 * (a lost bit only makes a match rarer). Counts go to the thread and are added to S->bs_counts
 * after each slice (par_run). Returns par_insert's codes. */
static int par_insert_bs(pw_t *W, const uint64_t *w, uint64_t h) {
    search_t *S = W->S;
    par_t *P = S->par;
    uint64_t mask = (1ULL << S->bs_log2) - 1;
    uint64_t h2 = mix64(h ^ 0x9E3779B97F4A7C15ULL) | 1;
    int sampled = (h >> (64 - SAMPLE_BITS)) == 0;
    if (sampled) pthread_mutex_lock(&P->m);
    int c = 0;
    for (int i = 0; i < S->bs_k; i++) {
        uint64_t q = (h + (uint64_t)i * h2) & mask;
        uint8_t b = (uint8_t)(1u << (q & 7));
        uint8_t x = __atomic_load_n(&S->bits[q >> 3], __ATOMIC_RELAXED);
        if (!(x & b)) {
            __atomic_store_n(&S->bits[q >> 3], (uint8_t)(x | b), __ATOMIC_RELAXED);
            c++;
        }
    }
    int r = c ? 1 : 0;
    if (!r) {
        W->bs_matched++;
        if (sampled && S->sh_new < SHADOW_MAX && shadow_find_add(S, w, h, 1) == 0)
            S->bs_counts[3]++; /* a sampled state never stored: a certain false match */
    } else if (S->max_states >= 0 && !(sampled ? par_permit_locked(W) : par_permit(W))) {
        r = -2; /* its bits stay set: the search stops */
    } else {
        W->bs_new++;
        W->bs_bits += c;
        __atomic_store_n(&W->stored, W->stored + 1, __ATOMIC_RELAXED);
        if (sampled && S->sh_new < SHADOW_MAX) {
            int f = shadow_find_add(S, w, h, 1);
            if (f < 0) r = -1;
            else if (f == 0) { S->sh_new++; S->bs_counts[2]++; }
        }
    }
    if (sampled) pthread_mutex_unlock(&P->m);
    return r;
}

/* look up packed w (hash h); when new and `add`, store it with its parent and label: returns 1
 * new (*id set), 0 seen, -1 no memory/ids, -2 new but over --max-states (not stored) */
static int par_insert(pw_t *W, const uint64_t *w, uint64_t h, int add, int64_t parent, int64_t lab,
                      int64_t *id) {
    search_t *S = W->S;
    uint64_t tag = h >> 32;
    uint64_t cap = S->tcap;
    uint64_t *T = S->table;
    if (S->bs) return par_insert_bs(W, w, h);
    if (S->hc) return par_insert_hc(W, h, add);
    uint64_t p = slot_of_entry(S, tag << 32, cap);
    for (;;) {
        uint64_t x = __atomic_load_n(&T[p], __ATOMIC_ACQUIRE);
        if (!x) {
            if (!add) return 1;
            uint64_t busy = (tag << 32) | BUSY_ID;
            if (__atomic_compare_exchange_n(&T[p], &x, busy, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                if (S->max_states >= 0 && !par_permit(W)) {
                    __atomic_store_n(&T[p], (tag << 32) | TOMB_ID, __ATOMIC_RELEASE);
                    return -2;
                }
                if (W->id_next == W->id_end) {
                    W->id_next = __atomic_fetch_add(&S->par->id_top, ID_BLOCK, __ATOMIC_RELAXED);
                    W->id_end = W->id_next + ID_BLOCK;
                    PROF(if (S->par->owner && W->id_next / ID_BLOCK < S->cap_states / ID_BLOCK)
                             S->par->owner[W->id_next / ID_BLOCK] = (uint8_t)(W->tid + 1));
                }
                int64_t k = W->id_next++;
                PROF(W->n_new++);
                if (k >= S->cap_states) {
                    __atomic_store_n(&T[p], (tag << 32) | 1, __ATOMIC_RELEASE); /* any id */
                    return -1;
                }
                __atomic_store_n(&W->stored, W->stored + 1, __ATOMIC_RELAXED);
                memcpy(S->arena + (size_t)k * NWA, w, NWA * sizeof(uint64_t));
                S->parent[k] = (uint32_t)parent;
                S->label[k] = (uint32_t)lab;
                __atomic_store_n(&T[p], (tag << 32) | (uint64_t)(k + 1), __ATOMIC_RELEASE);
                /* the ids taken bound the entries (holes only add a margin) */
                if ((uint64_t)k * 100 > cap * S->load_pct)
                    __atomic_store_n(&S->par->pause, 1, __ATOMIC_RELEASE);
                *id = k;
                return 1;
            }
            /* lost the race: x is the winner's entry, examine it */
        }
        if ((x >> 32) == tag) {
            while ((x & 0xffffffffULL) == BUSY_ID) {
                __builtin_ia32_pause();
                x = __atomic_load_n(&T[p], __ATOMIC_ACQUIRE);
            }
            uint64_t k = (x & 0xffffffffULL) - 1;
            if ((x & 0xffffffffULL) != TOMB_ID &&
                memcmp(S->arena + k * NWA, w, NW * sizeof(uint64_t)) == 0) {
                PROF(W->n_hit++;
                     if (S->par->owner && S->par->owner[k / ID_BLOCK] != W->tid + 1)
                         W->n_remote_hit++);
                return 0;
            }
        }
        p = (p + 1 == cap) ? 0 : p + 1;
    }
}

static int par_check_state(pw_t *W, const int64_t *v, int64_t node, int64_t depth) {
    search_t *S = W->S;
    ctx_t *C = W->C;
    C->ovf = 0;
    int n = m_violated(C, v, W->viol_buf);
    if (C->ovf) { par_set_status(S, STOP_OVERFLOW); return 1; }
    for (int i = 0; i < n; i++)
        if (par_record(S, W->viol_buf[i], node, -1, 0, 0, 0, depth)) return 1;
    return 0;
}

/* states stored so far (read while threads store more: a lower bound) */
static int64_t par_stored(search_t *S) {
    par_t *P = S->par;
    int64_t n = S->count;
    for (int i = 0; i < P->n; i++) n += __atomic_load_n(&P->w[i]->stored, __ATOMIC_RELAXED);
    return n;
}

/* Expand a batch of states (id | depth << 32 each) as s_run does: every state's failures,
 * deadlock and successors (packed, hashed, their table slots prefetched), then the insertions
 * in order; the new states go to this thread's queue at the end of the batch. */
static void par_expand(pw_t *W, const uint64_t *ents, int nb) {
    search_t *S = W->S;
    par_t *P = S->par;
    ctx_t *C = W->C;
    int64_t *v = W->vals;
    int ns = 0, ew = P->ew;
    for (int b = 0; b < nb; b++) {
        const uint64_t *en = ents + (size_t)b * ew;
        int64_t id, depth;
        if (S->hc) { /* no ids: a violation's path is searched again (explicit/native.py) */
            id = -1;
            depth = (int64_t)en[0];
            m_unpack(en + 1, v);
        } else {
            id = (int64_t)(en[0] & 0xffffffffULL);
            depth = (int64_t)(en[0] >> 32);
            PROF(if (P->owner && P->owner[id / ID_BLOCK] != W->tid + 1) W->n_remote_exp++);
            m_unpack(S->arena + (size_t)id * NWA, v);
        }
        ctx_reset(C);
        m_successors(C, v);
        if (C->oom) { par_set_status(S, STOP_MEMORY); return; }
        if (C->ovf) { par_set_status(S, STOP_OVERFLOW); return; }
        int blocked = 0;
        for (int i = 0; i < C->nfails; i++) {
            int kind = C->fkind[i];
            if (kind != 3) blocked = 1;
            int64_t lab = par_chain(W, C->ch + C->foff[i], C->flen[i]);
            if (lab < 0) { par_set_status(S, STOP_MEMORY); return; }
            int slot = kind == 3 ? (int)C->fa[i] : SLOT_MODEL_ERROR;
            if (par_record(S, slot, id, lab, kind, C->fa[i], C->fb[i], depth)) return;
        }
        int nsteps = C->nsteps;
        W->transitions += nsteps;
        if (!blocked && !nsteps && S->check_deadlock) {
            int ve = m_valid_end(C, v);
            if (C->ovf) { par_set_status(S, STOP_OVERFLOW); return; }
            if (!ve && par_record(S, SLOT_DEADLOCK, id, -1, 0, 0, 0, depth)) return;
        }
        if (ns + nsteps > W->bcap) {
            int c = W->bcap ? W->bcap : 256;
            while (c < ns + nsteps) c *= 2;
            int ok = 1;
            uint64_t *bw = (uint64_t *)realloc(W->bw, (size_t)c * NWA * sizeof(uint64_t));
            if (bw) W->bw = bw; else ok = 0;
            uint64_t *bh = (uint64_t *)realloc(W->bh, (size_t)c * sizeof(uint64_t));
            if (bh) W->bh = bh; else ok = 0;
            int64_t *bl = (int64_t *)realloc(W->blab, (size_t)c * sizeof(int64_t));
            if (bl) W->blab = bl; else ok = 0;
            uint8_t *br = (uint8_t *)realloc(W->bpor, (size_t)c);
            if (br) W->bpor = br; else ok = 0;
            uint64_t *bp = (uint64_t *)realloc(W->bpar, (size_t)c * sizeof(uint64_t));
            if (bp) W->bpar = bp; else ok = 0;
            if (S->state_checks) {
                int64_t *bv = (int64_t *)realloc(W->bv, (size_t)c * NVA * sizeof(int64_t));
                if (bv) W->bv = bv; else ok = 0;
            }
            if (!ok) { par_set_status(S, STOP_MEMORY); return; }
            W->bcap = c;
        }
        if (2 * nsteps > W->ordcap) {
            int32_t *o = (int32_t *)realloc(W->ord, (size_t)nsteps * 2 * sizeof(int32_t));
            if (!o) { par_set_status(S, STOP_MEMORY); return; }
            W->ord = o;
            W->ordcap = nsteps * 2;
        }
        int ngroups = por_order(S, v, C, W->ord);
        for (int j = 0; j < nsteps; j++) {
            int i = W->ord[j];
            W->bpor[ns] = ngroups == 1 ? 0 : (uint8_t)((W->ord[nsteps + j] + 1) | (j ? 0 : 0x80));
            uint64_t *w = W->bw + (size_t)ns * NWA;
            const int64_t *t = C->sst + (size_t)i * NVA;
            m_pack(t, w);
            uint64_t h = hash_packed(w);
            W->bh[ns] = h;
            if (!S->bs) __builtin_prefetch(&S->table[slot_of_entry(S, (h >> 32) << 32, S->tcap)]);
            int64_t lab = par_chain(W, C->ch + C->soff[i], C->slen[i]);
            if (lab < 0) { par_set_status(S, STOP_MEMORY); return; }
            W->blab[ns] = lab;
            W->bpar[ns] = S->hc ? (uint64_t)depth << 32 : en[0];
            if (S->state_checks) memcpy(W->bv + (size_t)ns * NVA, t, sizeof(int64_t) * NVA);
            ns++;
        }
    }
    if (S->bs) bs_prefetch(S, W->bh, ns);
    int nout = 0, fresh = 0, grp = 0, skipping = 0;
    uint64_t *out = W->out;
    for (int k = 0; k < ns; k++) {
        if (__atomic_load_n(&P->pause, __ATOMIC_ACQUIRE)) par_sync(S);
        if (par_status(S)) break;
        /* the cycle proviso of kernel/explore/por.py: a state's next group of steps only when
           no step of the group before inserted a new state (an insertion that is this thread's:
           the states inserted form a tree, so a chain of reduced states ends) */
        int role = W->bpor[k];
        if (role == 0 || (role & 0x80)) {
            skipping = 0;
            fresh = 0;
            grp = role & 0x7f;
        } else if ((role & 0x7f) != grp) {
            grp = role & 0x7f;
            if (fresh && !skipping) {
                skipping = 1;
                W->reduced++;
            }
            fresh = 0;
        }
        if (skipping) {
            W->transitions--;
            continue;
        }
        uint64_t pe = W->bpar[k];
        int64_t parent = (int64_t)(pe & 0xffffffffULL), depth = (int64_t)(pe >> 32);
        int64_t id = -1;
        int r = par_insert(W, W->bw + (size_t)k * NWA, W->bh[k], 1, parent, W->blab[k], &id);
        if (r == -2) {
            if (depth + 1 > W->max_depth) W->max_depth = depth + 1;
            par_set_status(S, STOP_STATES);
            break;
        }
        if (r < 0) { par_set_status(S, STOP_MEMORY); break; }
        if (!r) continue;
        fresh = 1;
        if (nout == OUT_MAX) {
            if (!pq_push_many(&P->qs[W->tid], out, nout, ew)) {
                par_set_status(S, STOP_MEMORY);
                return;
            }
            nout = 0;
        }
        uint64_t *o = out + (size_t)nout++ * ew;
        if (S->hc) {
            o[0] = (uint64_t)(depth + 1);
            memcpy(o + 1, W->bw + (size_t)k * NWA, NWA * sizeof(uint64_t));
        } else {
            o[0] = (uint64_t)id | ((uint64_t)(depth + 1) << 32);
        }
        if (depth + 1 > W->max_depth) W->max_depth = depth + 1;
        if (S->state_checks && par_check_state(W, W->bv + (size_t)k * NVA, id, depth + 1)) break;
    }
    if (nout && !pq_push_many(&P->qs[W->tid], out, nout, ew)) par_set_status(S, STOP_MEMORY);
}

/* the queue with the most entries other than thread tid's (-1: any thread's), when it has at
 * least min entries (else -1) */
static int par_victim(par_t *P, int tid, int min) {
    int best = -1;
    int64_t most = min - 1;
    for (int j = 1; j <= P->n; j++) {
        int i = (tid + j) % P->n;
        if (i == tid) continue;
        int64_t n = __atomic_load_n(&P->qs[i].n, __ATOMIC_RELAXED);
        if (n > most) { most = n; best = i; }
    }
    return best;
}

/* after a batch: when this thread's queue holds a surplus and a thread sleeps while none looks
 * for work or is being woken, wake one (it steals half of the queue) */
static void par_offer(par_t *P, int tid) {
    if (__atomic_load_n(&P->qs[tid].n, __ATOMIC_RELAXED) < P->wake_min) return;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the entries pushed, then `sleeping` read */
    if (!__atomic_load_n(&P->sleeping, __ATOMIC_RELAXED) ||
        __atomic_load_n(&P->searching, __ATOMIC_RELAXED) ||
        __atomic_load_n(&P->waking, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&P->waking, 1, __ATOMIC_RELAXED);
    PROF(if (prof_w) prof_w->n_woke++);
    par_wake(P, 0);
}

/* sleep until woken (par_wake) or SLEEP_NS, unless there is a reason to stay up: stop, status,
 * the rendezvous, or a queue with a surplus (checked after `sleeping` is raised: a thread that
 * pushed its surplus before sees `sleeping` in par_offer and wakes it) */
static void par_sleep(search_t *S) {
    par_t *P = S->par;
    par_leave(S); /* asleep it takes no part in the rendezvous */
    pthread_mutex_lock(&P->sm);
    int64_t seq = P->wake_seq;
    __atomic_add_fetch(&P->sleeping, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&P->waking, 0, __ATOMIC_RELAXED);
    if (!par_status(S) && !__atomic_load_n(&P->stop, __ATOMIC_SEQ_CST) &&
        !__atomic_load_n(&P->pause, __ATOMIC_SEQ_CST) && par_victim(P, -1, P->wake_min) < 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += SLEEP_NS;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        while (P->wake_seq == seq)
            if (pthread_cond_timedwait(&P->scv, &P->sm, &ts) != 0) break;
    }
    __atomic_sub_fetch(&P->sleeping, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&P->waking, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&P->sm);
    /* back among the active threads, after a growth of the table under way */
    pthread_mutex_lock(&P->m);
    while (__atomic_load_n(&P->pause, __ATOMIC_ACQUIRE) && P->active > 0 && !par_status(S) &&
           !__atomic_load_n(&P->stop, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&P->cv, &P->m);
    P->active++;
    pthread_mutex_unlock(&P->m);
}

/* A thread expands batches from its own queue. With none, it looks for work: it steals the
 * older half of the longest other queue when that has at least STEAL_MIN entries (taking one
 * state of a two-state queue only moves it to another core); after SPIN_PASSES passes without
 * it sleeps, and a thread whose queue reaches WAKE_MIN entries wakes one sleeper (par_offer).
 * So the threads that run follow the work there is: on a long thin state space (BFS levels of
 * a few states: bakery, lamport) most of them sleep instead of taking single states from each
 * other (16 threads on 16 cores had taken 28x the CPU of one, in a slower run), and with more
 * threads than CPUs the sleeping ones leave the CPUs to those that work. */
static void *par_thread(void *arg) {
    pw_t *W = (pw_t *)arg;
    search_t *S = W->S;
    par_t *P = S->par;
    int64_t tick = 0;
    int idle = 0, passes = 0;
    PROF(uint64_t tstart = __rdtsc(); prof_w = W);
    while (!par_status(S) && !__atomic_load_n(&P->stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&P->pause, __ATOMIC_ACQUIRE)) par_sync(S);
        if ((++tick & 255) == 0 && now_s() >= P->end) {
            __atomic_store_n(&P->stop, 1, __ATOMIC_RELEASE);
            par_wake_all(P);
            break;
        }
        PROF(uint64_t t0 = __rdtsc());
        /* while a thread looks for work, leave it half of a queue it may steal from */
        int share = __atomic_load_n(&P->searching, __ATOMIC_RELAXED) > 0 &&
                    __atomic_load_n(&P->qs[W->tid].n, __ATOMIC_RELAXED) >= 2 * P->steal_min;
        int nb = pq_pop_many(&P->qs[W->tid], W->ents, POP_BATCH, P->ew, share);
        PROF(uint64_t t1 = __rdtsc(); W->c_pop += t1 - t0);
        if (nb) {
            par_expand(W, W->ents, nb);
            PROF(W->c_exp += __rdtsc() - t1; W->n_batch++; W->n_exp += (uint64_t)nb);
            par_offer(P, W->tid);
            continue;
        }
        PROF(W->n_dry++; if (!idle) W->n_idle_spells++);
        /* no work of its own: steal. Idle threads are counted; a thread leaves the count before
           it tries to steal, so all n are counted only when no thread expands or holds stolen
           work, and then every queue is empty (only a queue's owner adds to it): the end */
        if (!idle) {
            idle = 1;
            __atomic_add_fetch(&P->idle, 1, __ATOMIC_ACQ_REL);
            __atomic_add_fetch(&P->searching, 1, __ATOMIC_ACQ_REL);
        }
        int got = 0;
        __atomic_sub_fetch(&P->idle, 1, __ATOMIC_ACQ_REL);
        int v = par_victim(P, W->tid, P->steal_min);
        if (v >= 0) {
            int r = pq_steal(&P->qs[v], &P->qs[W->tid], W->stealbuf, P->ew);
            if (r < 0) { par_set_status(S, STOP_MEMORY); break; }
            got = r > 0;
            PROF(if (r > 0) W->n_stolen += (uint64_t)r);
        }
        PROF(if (got) W->n_steal++; else W->n_steal0++);
        if (got) {
            idle = 0;
            passes = 0;
            __atomic_sub_fetch(&P->searching, 1, __ATOMIC_ACQ_REL);
            PROF(W->c_idle += __rdtsc() - t1);
            continue;
        }
        if (__atomic_add_fetch(&P->idle, 1, __ATOMIC_ACQ_REL) == P->n) {
            par_set_status(S, DONE);
            break;
        }
        if (++passes < P->spin_passes) {
            for (int i = 0; i < 16; i++) __builtin_ia32_pause();
        } else {
            /* asleep it does not look for work: no longer `searching` */
            __atomic_sub_fetch(&P->searching, 1, __ATOMIC_ACQ_REL);
            PROF(W->n_sleep++; uint64_t s0 = __rdtsc());
            par_sleep(S);
            PROF(W->c_sleep += __rdtsc() - s0);
            __atomic_add_fetch(&P->searching, 1, __ATOMIC_ACQ_REL);
            passes = 0;
        }
        PROF(W->c_idle += __rdtsc() - t1);
    }
    if (idle) {
        __atomic_sub_fetch(&P->idle, 1, __ATOMIC_ACQ_REL);
        __atomic_sub_fetch(&P->searching, 1, __ATOMIC_ACQ_REL);
    }
#ifdef PAR_PROF
    W->c_wall = __rdtsc() - tstart;
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        W->ru_minflt = ru.ru_minflt;
        W->ru_nvcsw = ru.ru_nvcsw;
        W->ru_nivcsw = ru.ru_nivcsw;
    }
#endif
    par_leave(S);
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        W->cpu += (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    return NULL;
}

/* start the threads' search from the breadth-first one's open states (ids next .. count-1) */
static int par_begin(search_t *S) {
    par_t *P = (par_t *)calloc(1, sizeof(par_t));
    if (!P) return 0;
    S->par = P;
    P->n = S->nthreads;
    pthread_mutex_init(&P->m, NULL);
    pthread_cond_init(&P->cv, NULL);
    pthread_mutex_init(&P->sm, NULL);
    pthread_cond_init(&P->scv, NULL);
    P->wake_min = WAKE_MIN;
    P->steal_min = STEAL_MIN;
    P->spin_passes = SPIN_PASSES;
#ifdef PAR_TUNE
    if (getenv("ABSMC_WAKE_MIN")) P->wake_min = atoi(getenv("ABSMC_WAKE_MIN"));
    if (getenv("ABSMC_STEAL_MIN")) P->steal_min = atoi(getenv("ABSMC_STEAL_MIN"));
    if (getenv("ABSMC_SPIN")) P->spin_passes = atoi(getenv("ABSMC_SPIN"));
#endif
    for (int i = 0; i < P->n; i++) {
        pw_t *W = (pw_t *)calloc(1, sizeof(pw_t));
        if (!W) return 0;
        P->w[i] = W;
        W->S = S;
        W->tid = i;
        W->C = ctx_new();
        if (!W->C) return 0;
        W->max_depth = S->max_depth_seen;
    }
    P->ew = S->hc ? EW_MAX : 1;
    for (int i = 0; i < P->n; i++) {
        pw_t *W = P->w[i];
        W->ents = (uint64_t *)malloc((size_t)POP_BATCH * P->ew * sizeof(uint64_t));
        W->out = (uint64_t *)malloc((size_t)OUT_MAX * P->ew * sizeof(uint64_t));
        W->stealbuf = (uint64_t *)malloc((size_t)STEAL_MAX * P->ew * sizeof(uint64_t));
        W->memo = (chain_memo_t *)calloc(CHAIN_MEMO, sizeof(chain_memo_t));
        if (!W->ents || !W->out || !W->stealbuf || !W->memo) return 0;
    }
    /* the open states of the breadth-first loop, dealt round-robin */
    uint64_t e[EW_MAX];
    int64_t k = 0;
    if (S->hc) {
        for (int64_t i = S->qcur_pos; i < S->qcur_n; i++, k++) {
            e[0] = (uint64_t)S->depth;
            memcpy(e + 1, S->qcur + (size_t)i * NWA, NWA * sizeof(uint64_t));
            if (!pq_push_many(&P->qs[k % P->n], e, 1, P->ew)) return 0;
        }
        for (int64_t i = 0; i < S->qnext_n; i++, k++) {
            e[0] = (uint64_t)(S->depth + 1);
            memcpy(e + 1, S->qnext + (size_t)i * NWA, NWA * sizeof(uint64_t));
            if (!pq_push_many(&P->qs[k % P->n], e, 1, P->ew)) return 0;
        }
        S->qcur_pos = S->qcur_n = S->qnext_n = 0;
        P->id_top = (int64_t)S->tused;
    } else {
        for (int64_t id = S->next; id < S->count; id++, k++) {
            e[0] = (uint64_t)id | ((uint64_t)(id < S->level_end ? S->depth : S->depth + 1) << 32);
            if (!pq_push_many(&P->qs[k % P->n], e, 1, P->ew)) return 0;
        }
        S->next = S->count;
        P->id_top = S->count;
    }
    P->budget = S->max_states >= 0 ? S->max_states - par_stored(S) : 0;
    PROF(P->owner = (uint8_t *)calloc((size_t)(S->cap_states / ID_BLOCK) + 1, 1));
    return 1;
}

/* the bytes of the threads' queues (hash-compact: the open states) */
static int64_t par_queue_bytes(search_t *S) {
    if (!S->par) return 0;
    int64_t n = 0;
    for (int i = 0; i < S->par->n; i++) n += S->par->qs[i].n;
    return n * S->par->ew * (int64_t)sizeof(uint64_t);
}

/* CPU seconds thread i used (0 when there is no such thread) */
double s_thread_cpu(search_t *S, int i) {
    return S->par && i >= 0 && i < S->par->n ? S->par->w[i]->cpu : 0.0;
}

/* how many threads searched (1: the breadth-first loop alone) */
static int par_threads(search_t *S) { return S->par ? S->par->n : 1; }

/* one time slice of the threads (the status as s_run's) */
static int par_run(search_t *S, double seconds) {
    if (!S->par && !par_begin(S)) { S->status = STOP_MEMORY; return S->status; }
    par_t *P = S->par;
    P->end = now_s() + seconds;
    P->stop = 0;
    P->pause = 0;
    P->arrived = 0;
    P->arrived2 = 0;
    P->idle = 0;
    P->searching = 0;
    P->sleeping = 0;
    P->waking = 0;
    if (!S->bs && S->tused * 100 > S->tcap * S->load_pct) { /* bitstate: no table */
        P->active = 1;
        P->pause = 1;
        par_sync(S);
    }
    P->active = P->n;
    int started = 0;
    for (int i = 0; i < P->n; i++) {
        if (pthread_create(&P->w[i]->th, NULL, par_thread, P->w[i]) != 0) {
            /* the missing threads' queues would never be served: stop the others */
            par_set_status(S, STOP_MEMORY);
            pthread_mutex_lock(&P->m);
            P->active -= P->n - i;
            if (P->pause && P->active > 0 && P->arrived > 0 && P->arrived == P->active)
                par_phase1_done(S);
            pthread_mutex_unlock(&P->m);
            break;
        }
        started++;
    }
    if (!started) { S->status = STOP_MEMORY; return S->status; }
    for (int i = 0; i < started; i++) pthread_join(P->w[i]->th, NULL);
#ifdef PAR_PROF
    for (int i = 0; i < P->n; i++) {
        pw_t *W = P->w[i];
        fprintf(stderr,
                "PROF t%d wall %.1f exp %.1f pop %.1f idle %.1f sync %.1f (wait %.1f, %lu) Mcyc | faults %ld csw %ld/%ld | batches %lu states %lu dry %lu "
                "idle_spells %lu steals %lu failed %lu stolen %lu | remote_exp %lu hits %lu "
                "remote_hits %lu new %lu | sleeps %lu (%.1f Mcyc) wakes sent %lu\n",
                i, W->c_wall / 1e6, W->c_exp / 1e6, W->c_pop / 1e6, W->c_idle / 1e6, W->c_sync / 1e6, W->c_wait / 1e6, W->n_sync, W->ru_minflt, W->ru_nvcsw, W->ru_nivcsw, W->n_batch, W->n_exp, W->n_dry,
                W->n_idle_spells, W->n_steal, W->n_steal0, W->n_stolen, W->n_remote_exp, W->n_hit,
                W->n_remote_hit, W->n_new, W->n_sleep, W->c_sleep / 1e6, W->n_woke);
        W->n_sleep = W->n_woke = W->c_sleep = 0;
        W->c_exp = W->c_pop = W->c_idle = W->c_sync = W->c_wait = W->n_sync = 0;
        W->n_batch = W->n_exp = W->n_dry = W->n_idle_spells = W->n_steal = W->n_steal0 = 0;
        W->n_stolen = W->n_remote_exp = W->n_hit = W->n_remote_hit = W->n_new = 0;
    }
#endif
    S->transitions = S->par_transitions0;
    int64_t cuts = 0;
    S->count = par_stored(S);
    for (int i = 0; i < P->n; i++) {
        P->w[i]->stored = 0;
        S->transitions += P->w[i]->transitions;
        S->par_reduced += P->w[i]->reduced;
        P->w[i]->reduced = 0;
        if (P->w[i]->max_depth > S->max_depth_seen) S->max_depth_seen = P->w[i]->max_depth;
        cuts += P->w[i]->C->cuts;
        S->bs_counts[0] += P->w[i]->bs_new;
        S->bs_counts[1] += P->w[i]->bs_matched;
        S->bs_counts[4] += P->w[i]->bs_bits;
        P->w[i]->bs_new = P->w[i]->bs_matched = P->w[i]->bs_bits = 0;
    }
    S->par_cuts = cuts;
    S->depth = S->max_depth_seen;
    S->tused = (uint64_t)S->count;
    if (S->status) return S->status;
    return STOP_SLICE;
}
