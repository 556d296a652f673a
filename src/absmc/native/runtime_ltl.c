/* absmc native back end: the product of the model with a Büchi automaton and SPIN's nested
 * depth-first search (Courcoubetis, Vardi, Wolper, Yannakakis 1992; Holzmann, Peled,
 * Yannakakis, "On nested depth first search", 1996), one thread. Appended after
 * runtime_tail.c and the generated claim code (m_claim, m_claim_init, m_claim_acc: native/ltl.py).
 *
 * The semantics are kernel/ltl/product.py's and kernel/explore/nested.py's, in the same order: from (s, q)
 * the claim moves first (each edge of q whose guard holds in s, in edge order), then the system
 * steps, highest process first (SPIN's order); a terminal s stutters (when `stutter`). A
 * product state is the packed system state and one word: q (low 32 bits) and, with weak
 * fairness (`fair`, SPIN's -f), the fairness counter (high 32 bits, l_fair_start and
 * l_fair_pass: SPIN's (k + 2)-copy construction of kernel/ltl/fairness.py; accepting is then
 * the seed copy NFN + 1). Per state one flag byte: bit 0
 * on the outer stack, bit 1 visited by a nested search (SPIN's two bits per state: the nested
 * searches share the outer store, since every state a nested search from a post-order seed
 * reaches was stored by the outer one). The outer search closes a cycle at once when it steps
 * to a state on its stack from or to an accepting state (`early`, SPIN's first-search check).
 * A nested search starts when an accepting state leaves the outer stack and stops at any state
 * on the outer stack.
 *
 * Both searches keep their frames in the struct, so l_run returns after a time slice and goes
 * on where it stopped. With `safety`, a failure of a system step, a state property violated in
 * a stored state or (with `deadlock`) an invalid end state ends the search with L_SAFETY: the
 * caller searches again in Python, which reports those (kernel/ltl/ltl.py).
 *
 * The store (l_set_store): exact (an arena of the states by id, the flags and ample choices by
 * id), or, as SPIN's -DHC and -DBITSTATE, hash-compact (a table of the states' 64-bit hashes,
 * bit 0 of an entry the nested searches' mark) or bitstate (one bit array, k bits per state;
 * the nested searches' key of a state is its hash mixed again, SPIN's second copy). A compact
 * store keeps no state: the stacks hold their own copies (ow, nw), the outer stack is found
 * through a table of its own (exact: lc_stack_find), the lasso is made of the stacks' words
 * and the ample choices are kept by state hash (lc_choice_*). With no collision the compact
 * stores visit the exact store's states in the same order. */

enum { L_RUNNING, L_DONE, L_FOUND, L_STATES, L_OVERFLOW, L_MEMORY, L_SLICE, L_SAFETY };

#define LW (NW + 1)

typedef struct { int64_t id, off; int32_t n, i; } lframe_t;

typedef struct ltl_s {
    int claim, stutter, safety, deadlock, state_checks, early, fair;
    int64_t max_states, max_depth;
    uint64_t *arena; int64_t nstates, cap;
    uint64_t *table; uint64_t tcap;
    uint8_t *flags;
    lframe_t *os; int64_t nos, caposs;   /* outer stack */
    lframe_t *ns; int64_t nns, capns;    /* nested stack */
    uint64_t *osucc; int64_t nosucc, caposucc;
    uint64_t *nsucc; int64_t nnsucc, capnsucc;
    int64_t transitions, deepest, nested_states, seed_depth;
    int truncated, in_nested, status, started;
    int64_t *lasso; int64_t nlasso, cycle_start;
    ctx_t *C;
    int64_t v[NVA];
    int32_t *order, *targets;
    int last_ns, last_nt;  /* l_expand: the system steps and claim moves of its last state */
    int por;               /* partial-order reduction (l_set_reduce) */
    int32_t *amp;          /* per state with por: 0 expanded fully, else 1 + the process of
                              its ample set (the outer search's choice, kept for the nested) */
    int64_t por_reduced;
    /* with por and weak fairness, the choice is made once per (s, q), for every counter copy
     * (docs/reductions.md, "Weak fairness"): rep[id] is the first stored copy of id's (s, q),
     * whose amp and flag bit 2 (chosen) hold the choice and pstk the number of its copies on
     * the outer stack (the stack proviso asks about (s, q)); ptable finds the first copy of a
     * (s, q) as table finds a product state */
    uint32_t *rep; int32_t *pstk;
    uint64_t *ptable; uint64_t ptcap; int64_t npairs;
    /* compact stores (l_set_store; with one, the arena above is the bitstate store's shadow
     * set of sampled states: nstates counts those, cstored the states stored) */
    int store;                           /* L_EXACT, L_HC or L_BS */
    int64_t cstored;
    uint64_t *hc; uint64_t hccap, hcused;  /* hash-compact: keys, bit 0 nested mark */
    uint8_t *bits; int bs_log2, bs_k;    /* bitstate: 2^bs_log2 bits, bs_k per key */
    int64_t bs_counts[5];                /* stored, matched, sampled new, false matches, ones */
    int64_t bs_nested;                   /* keys the nested searches set */
    uint64_t *ow, *oh, *onext;           /* outer stack: states, hashes, bucket links */
    int64_t capow, capoh, caponext;      /* (l_reserve's capacities, in words) */
    uint32_t *shead; uint64_t shcap;     /* its buckets: depth + 1 of the newest, 0 none */
    uint64_t *nw; int64_t capnw;         /* the nested stack's states (capacity in words) */
    uint64_t *ch; uint64_t chcap, chused;  /* ample choices: hash | 1 << 9 | process + 1 */
    uint64_t *lasso_w;                   /* the lasso's states (nlasso x LW words) */
} ltl_t;

enum { L_EXACT = 0, L_HC = 1, L_BS = 2 };

/* the automaton state and the weak-fairness counter of a product state's last word */
#define L_Q(x) ((int)(uint32_t)(x))
#define L_C(x) ((int)((x) >> 32))
/* the counter: 0 idle, i (1..NFN) waiting for process i - 1, NFN + 1 the seed copy
 * (accepting) */
#define L_SEED (NFN + 1)

/* The store: product states in an arena (LW words each, by id), found through an open-addressing
 * table (linear probing, at most half full) whose entries are a 32-bit tag of the state's hash
 * (high half) and id + 1 (low half, 0: empty). The position of an entry follows from its tag
 * alone, so that the table grows without reading the arena, and a probe compares a state's words
 * only where the tags agree (one arena read per lookup of a stored state, none for most new
 * ones). The hash sums 128-bit products of pairs of words, each pair with its own constants (no
 * chain of dependent multiplications), then mixes the sum. */
static inline uint64_t l_mum(uint64_t a, uint64_t b) {
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

#define L_K1 0x9E3779B97F4A7C15ULL
#define L_K2 0xC2B2AE3D27D4EB4FULL

static inline uint64_t l_hash(const uint64_t *w) {
    uint64_t h = (uint64_t)LW * L_K2;
    int i = 0;
    for (; i + 1 < LW; i += 2)
        h += l_mum(w[i] ^ ((uint64_t)(i + 1) * L_K1), w[i + 1] ^ ((uint64_t)(i + 2) * L_K2));
    if (i < LW) h += l_mum(w[i] ^ ((uint64_t)(i + 1) * L_K1), L_K2);
    return mix64(h);
}

/* the table position of tag g in a table of cap (a power of two) entries: g's low bits (of a
 * mixed hash), scrambled past 32 bits for tables of more than 2^32 entries */
static inline uint64_t l_slot(uint64_t g, uint64_t cap) {
    return (g * L_K1) & (cap - 1);
}

/* doubles the open-addressing table *t of *cap entries (`first` entries when empty), whose
 * entry e sits at l_slot(e >> shift) or after it (linear probing); 0 on no memory. Serves the
 * tables of the store, of the (s, q) pairs, of hash-compact and of the ample choices. */
static int l_grow(uint64_t **t, uint64_t *cap, uint64_t first, int shift) {
    uint64_t nc = *cap ? *cap * 2 : first;
    uint64_t *n = (uint64_t *)calloc(nc, sizeof(uint64_t));
    if (!n) return 0;
    for (uint64_t k = 0; k < *cap; k++) {
        uint64_t e = (*t)[k];
        if (!e) continue;
        uint64_t p = l_slot(e >> shift, nc);
        while (n[p]) p = (p + 1) & (nc - 1);
        n[p] = e;
    }
    free(*t);
    *t = n;
    *cap = nc;
    return 1;
}

static int l_table_grow(ltl_t *L) { return l_grow(&L->table, &L->tcap, 1u << 16, 32); }

/* The (s, q) of product state w: w with the fairness counter (the high half of the last word)
 * cleared; l_pair gives the id of its first stored copy (the representative), or -1; with
 * add >= 0 and none stored yet, add becomes it. L_NOMEM on no memory. */
#define L_NOMEM INT64_MIN
static int l_ptable_grow(ltl_t *L) { return l_grow(&L->ptable, &L->ptcap, 1u << 16, 32); }

static int64_t l_pair(ltl_t *L, const uint64_t *w, int64_t add) {
    uint64_t key[LW];
    memcpy(key, w, sizeof key);
    key[NW] = (uint64_t)(uint32_t)key[NW];
    if (add >= 0 && (uint64_t)(L->npairs + 1) * 2 > L->ptcap && !l_ptable_grow(L))
        return L_NOMEM;
    uint64_t g = l_hash(key) >> 32, m = L->ptcap - 1, p = l_slot(g, L->ptcap), e;
    while ((e = L->ptable[p]) != 0) {
        if (e >> 32 == g) {
            int64_t id = (int64_t)(uint32_t)e - 1;
            const uint64_t *a = L->arena + id * LW;
            if (memcmp(a, key, sizeof(uint64_t) * NW) == 0 && (uint32_t)a[NW] == (uint32_t)key[NW])
                return id;
        }
        p = (p + 1) & m;
    }
    if (add < 0) return -1;
    L->ptable[p] = g << 32 | (uint64_t)(add + 1);
    L->npairs++;
    return add;
}

/* the id of product state w (hash h: l_hash(w)), or -1; with add, a new state is stored (its
 * id returned as -2 - id, so that the caller tells new from old); L_NOMEM on no memory */
static int64_t l_find(ltl_t *L, const uint64_t *w, uint64_t h, int add) {
    if (add && (uint64_t)(L->nstates + 1) * 2 > L->tcap && !l_table_grow(L)) return L_NOMEM;
    uint64_t g = h >> 32, m = L->tcap - 1, p = l_slot(g, L->tcap), e;
    while ((e = L->table[p]) != 0) {
        if (e >> 32 == g) {
            int64_t id = (int64_t)(uint32_t)e - 1;
            if (memcmp(L->arena + id * LW, w, sizeof(uint64_t) * LW) == 0) return id;
        }
        p = (p + 1) & m;
    }
    if (!add) return -1;
    if (L->nstates >= 0xfffffff0LL) return L_NOMEM;
    if (L->nstates == L->cap) {
        int64_t nc = L->cap ? L->cap * 2 : 4096;
        uint64_t *a = (uint64_t *)realloc(L->arena, (size_t)nc * LW * sizeof(uint64_t));
        if (!a) return L_NOMEM;
        L->arena = a;
        uint8_t *f = (uint8_t *)realloc(L->flags, (size_t)nc);
        if (!f) return L_NOMEM;
        L->flags = f;
        if (L->por && !L->store) {
            int32_t *a = (int32_t *)realloc(L->amp, (size_t)nc * sizeof(int32_t));
            if (!a) return L_NOMEM;
            L->amp = a;
        }
        if (L->por && L->fair && !L->store) {
            uint32_t *r = (uint32_t *)realloc(L->rep, (size_t)nc * sizeof(uint32_t));
            if (!r) return L_NOMEM;
            L->rep = r;
            int32_t *k = (int32_t *)realloc(L->pstk, (size_t)nc * sizeof(int32_t));
            if (!k) return L_NOMEM;
            L->pstk = k;
        }
        L->cap = nc;
    }
    int64_t id = L->nstates++;
    memcpy(L->arena + id * LW, w, sizeof(uint64_t) * LW);
    L->flags[id] = 0;
    if (L->por && !L->store) L->amp[id] = 0;
    if (L->por && L->fair && !L->store) {
        int64_t r = l_pair(L, w, id);
        if (r == L_NOMEM) { L->nstates--; return L_NOMEM; }
        L->rep[id] = (uint32_t)r;
        L->pstk[id] = 0;
    }
    L->table[p] = g << 32 | (uint64_t)(id + 1);
    return -2 - id;
}

static int l_reserve(uint64_t **a, int64_t *cap, int64_t need) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    uint64_t *p = (uint64_t *)realloc(*a, (size_t)c * sizeof(uint64_t));
    if (!p) return 0;
    *a = p;
    *cap = c;
    return 1;
}

static int l_frames(lframe_t **a, int64_t *cap, int64_t need) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    lframe_t *p = (lframe_t *)realloc(*a, (size_t)c * sizeof(lframe_t));
    if (!p) return 0;
    *a = p;
    *cap = c;
    return 1;
}

/* The compact stores' part of the search (runtime_ltl_compact.c, appended to this file in a
 * library built for them: native/ltl.py NativeLtl(compact=True), LTL_COMPACT defined); without
 * it the stubs at the end of this file stand in (never called: l_set_store refuses). */
static int lc_add(ltl_t *L, const uint64_t *w, uint64_t h);
static int lc_stack_reserve(ltl_t *L, int64_t d);
static void lc_stack_push(ltl_t *L, int64_t d, const uint64_t *w, uint64_t h);
static void lc_stack_pop(ltl_t *L, int64_t d);
static int64_t lc_stack_find(const ltl_t *L, const uint64_t *w, uint64_t h);
static int lc_choice_put(ltl_t *L, uint64_t h, int p);
static int lc_choice_get(const ltl_t *L, uint64_t h);
static int lc_nested_step(ltl_t *L, const uint64_t *t);
static int lc_outer_step(ltl_t *L, const uint64_t *t, uint64_t h, int64_t src);
static int64_t lc_store_bytes(const ltl_t *L);

/* the words of the outer stack's state of frame id (exact: arena id; compact: depth) */
static inline const uint64_t *l_ostate(const ltl_t *L, int64_t id) {
    return (L->store ? L->ow : L->arena) + id * LW;
}

static inline int l_accepting(ltl_t *L, const uint64_t *w) {
    if (L->fair) return L_C(w[NW]) == L_SEED;
    return m_claim_acc(L->claim, L_Q(w[NW]));
}

/* SPIN's weak-fairness counter (kernel/ltl/fairness.py, FairSemantics.successors) */
/* one more than the highest process that exists in unpacked state v (program counter not 0) */
static int l_live(const int64_t *v) {
    for (int i = NFN - 1; i >= 0; i--)
        if (m_pc_slot[i] < 0 || v[m_pc_slot[i]] != 0) return i + 1;
    return 0;
}

/* the counter c before the system step of a claim move to q2: rule 3 (the seed copy is
 * idle again), rule 1 (idle and q2 accepting: wait for the highest live process) */
static inline int l_fair_start(ltl_t *L, int c, int q2) {
    if (c == L_SEED) c = 0;
    if (c == 0 && m_claim_acc(L->claim, q2)) {
        int n = l_live(L->v);
        c = n ? n : L_SEED;
    }
    return c;
}

/* rule 2 over the commands from..end of step j: each command of the process waited for
 * passes the counter on once */
static int l_fair_pass(ctx_t *C, int j, int c, int from) {
    for (int m = from; m < C->slen[j] && c != L_SEED; m++)
        if (m_fn_of[C->ch[C->soff[j] + m]] == c - 1) c = c > 1 ? c - 1 : L_SEED;
    return c;
}

/* the product successors of product state src (LW words) onto the successor arena (*succ, *n,
 * *cap), in order; returns their number or a negative status (-L_OVERFLOW, -L_MEMORY,
 * -L_SAFETY: only with `checks`). Uses L's context, claim, stuttering and fairness only (the
 * threads of runtime_cndfs.c each have such an L of their own) */
static int64_t l_expand(ltl_t *L, const uint64_t *src, uint64_t **succ, int64_t *n,
                        int64_t *cap, int checks) {
    ctx_t *C = L->C;
    uint64_t w[LW];
    memcpy(w, src, sizeof w);
    m_unpack(w, L->v);
    ctx_reset(C);
    int q = L_Q(w[NW]), c = L_C(w[NW]);
    L->last_ns = L->last_nt = 0;
    int nt = m_claim(C, L->v, L->claim, q, L->targets);
    if (C->ovf) return -L_OVERFLOW;
    if (nt == 0) return 0;
    ctx_reset(C);
    m_successors(C, L->v);
    if (C->oom) return -L_MEMORY;
    if (C->ovf) return -L_OVERFLOW;
    int ns = C->nsteps;
    if (checks && L->safety && C->nfails) return -L_SAFETY;
    if (ns == 0) {
        if (checks && L->deadlock) {
            int ve = m_valid_end(C, L->v);
            if (C->ovf) return -L_OVERFLOW;
            if (!ve) return -L_SAFETY;
        }
        if (!L->stutter) return 0;
        if (!l_reserve(succ, cap, (*n + nt) * LW)) return -L_MEMORY;
        for (int k = 0; k < nt; k++) {
            uint64_t *o = *succ + (*n + k) * LW;
            memcpy(o, w, sizeof(uint64_t) * NW);
            uint64_t nc = 0;
            if (L->fair) {  /* every process is blocked: a running counter goes to the seed */
                int f = l_fair_start(L, c, L->targets[k]);
                nc = (uint64_t)(f ? L_SEED : 0) << 32;
            }
            o[NW] = (uint64_t)L->targets[k] | nc;
        }
        *n += nt;
        return nt;
    }
    int32_t *ord = (int32_t *)realloc(L->order, (size_t)ns * sizeof(int32_t));
    if (!ord) return -L_MEMORY;
    L->order = ord;
    /* stable: highest process first (kernel/ltl/irproduct.py, spin_order) */
    for (int i = 0; i < ns; i++) {
        int key = m_fn_of[C->ch[C->soff[i]]];
        int j = i;
        while (j > 0 && m_fn_of[C->ch[C->soff[ord[j - 1]]]] < key) { ord[j] = ord[j - 1]; j--; }
        ord[j] = i;
    }
    uint8_t en[NFN > 0 ? NFN : 1];  /* weak fairness: processes with a command in a step */
    if (L->fair) {
        memset(en, 0, sizeof en);
        for (int i = 0; i < ns; i++)
            for (int m = 0; m < C->slen[i]; m++) en[m_fn_of[C->ch[C->soff[i] + m]]] = 1;
    }
    if (!l_reserve(succ, cap, (*n + (int64_t)nt * ns) * LW)) return -L_MEMORY;
    uint64_t *o = *succ + *n * LW;
    for (int i = 0; i < ns; i++) {
        m_pack(C->sst + (size_t)ord[i] * NVA, o);
        o[NW] = 0;
        o += LW;
    }
    for (int k = 1; k < nt; k++) {
        memcpy(o, *succ + *n * LW, sizeof(uint64_t) * LW * ns);
        o += LW * ns;
    }
    for (int k = 0; k < nt; k++) {
        int f0 = L->fair ? l_fair_start(L, c, L->targets[k]) : 0;
        for (int i = 0; i < ns; i++) {
            int f = f0;
            if (f != 0 && f != L_SEED)  /* rule 2: process f - 1 moves, or it is blocked */
                f = en[f - 1] ? l_fair_pass(C, ord[i], f, 0)
                              : l_fair_pass(C, ord[i], f > 1 ? f - 1 : L_SEED, 1);
            (*succ)[(*n + (int64_t)k * ns + i) * LW + NW] =
                (uint64_t)L->targets[k] | (uint64_t)f << 32;
        }
    }
    *n += (int64_t)nt * ns;
    L->last_ns = ns;
    L->last_nt = nt;
    return (int64_t)nt * ns;
}

/* Partial-order reduction of the product (docs/reductions.md, "LTL"): whether the process of
 * row r of m_lpor_proc is at a location safe for the claim (visibility C2: its steps write
 * nothing the automaton's guards read) in the unpacked state L->v */
static int l_por_safe(ltl_t *L, int r) {
    if (L->fair) {  /* under weak fairness: m_lfpor, native/fairpor.py */
        int sl = m_lfpor_slot[r];
        if (sl < 0) return 1;
        int64_t x = L->v[sl];
        for (int j = m_lfpor_off[r]; j < m_lfpor_off[r + 1]; j++)
            if (m_lfpor_locs[j] == x) return m_lfpor_cond(j, L->v, L->C);
        return 0;
    }
    int sl = m_lpor_slot[r];
    if (sl < 0) return 1;
    int64_t x = L->v[sl];
    for (int j = m_lpor_off[r]; j < m_lpor_off[r + 1]; j++)
        if (m_lpor_locs[j] == x) return m_lpor_cond(j, L->v, L->C);
    return 0;
}

/* the id whose amp holds id's choice: id, or under weak fairness its (s, q)'s first copy */
static inline int64_t l_amp_id(ltl_t *L, int64_t id) {
    return L->fair ? (int64_t)L->rep[id] : id;
}

/* whether product state w is on the outer stack (under weak fairness: any copy of its
 * (s, q), the stack proviso of the (s, q) graph) */
static int l_on_stack(ltl_t *L, const uint64_t *w) {
    if (L->fair) {
        int64_t r = l_pair(L, w, -1);
        return r >= 0 && L->pstk[r] > 0;
    }
    if (L->store) return lc_stack_find(L, w, l_hash(w)) >= 0;
    int64_t t = l_find(L, w, l_hash(w), 0);
    return t >= 0 && (L->flags[t] & 1);
}

/* id enters (+1) or leaves (-1) the outer stack (exact store; compact: lc_stack_*) */
static inline void l_stack_mark(ltl_t *L, int64_t id, int d) {
    if (d > 0) L->flags[id] |= 1;
    else L->flags[id] &= (uint8_t)~1;
    if (L->por && L->fair) L->pstk[L->rep[id]] += d;
}

/* the process of the i-th system step (in l_expand's order) of the last expansion */
static inline int l_step_proc(ltl_t *L, int i) {
    return m_fn_of[L->C->ch[L->C->soff[L->order[i]]]];
}

/* keeps of the n successors at buf[off..] of the last expansion (claim move k, step i at
 * k * ns + i) those whose system step is one of process p, in order; returns their number */
static int64_t l_keep(ltl_t *L, uint64_t *buf, int64_t off, int64_t n, int p) {
    int ns = L->last_ns;
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++) {
        if (l_step_proc(L, (int)(j % ns)) != p) continue;
        if (m != j) memcpy(buf + (off + m) * LW, buf + (off + j) * LW, sizeof(uint64_t) * LW);
        m++;
    }
    return m;
}

/* the outer search's ample set of state id (compact store: its depth), just expanded fully
 * into osucc[off..off + n):
 * the first process at a safe location (youngest first, as pan's do_reach) that has some but
 * not every step, none of whose successors is on the outer stack (the cycle proviso C3 as the
 * stack condition of Peled 1994 / Holzmann, Peled, Yannakakis 1996; id itself is on the
 * stack already); the successors are cut down to it and amp[id] records it. Returns the
 * number of successors kept (n: expanded fully) */
static int64_t l_ample(ltl_t *L, int64_t id, int64_t off, int64_t n) {
    int ns = L->last_ns;
    if (!L->por || ns < 2 || L->last_nt == 0) return n;
    if (L->fair) {  /* the choice of the (s, q), once for all its counter copies */
        int64_t a = L->rep[id];
        if (L->flags[a] & 4) {
            if (!L->amp[a]) return n;
            L->por_reduced++;
            return l_keep(L, L->osucc, off, n, L->amp[a] - 1);
        }
        L->flags[a] |= 4;
        id = a;
    }
    for (int r = (L->fair ? LFPOR_ROWS : LPOR_ROWS) - 1; r >= 0; r--) {
        if (!l_por_safe(L, r)) continue;
        int p = L->fair ? m_lfpor_proc[r] : m_lpor_proc[r], c = 0, single = 1;
        for (int i = 0; i < ns; i++) {
            if (l_step_proc(L, i) != p) continue;
            c++;
            /* under weak fairness, no step that moves another process too (a rendezvous) */
            int st = L->order[i];
            for (int m = 1; m < L->C->slen[st]; m++)
                if (m_fn_of[L->C->ch[L->C->soff[st] + m]] != p) single = 0;
        }
        if (c == 0) continue;
        if (c == ns) return n; /* the process has every step: nothing to leave out */
        if (L->fair && !single) continue;
        int ok = 1;
        for (int64_t j = 0; j < n && ok; j++) {
            if (l_step_proc(L, (int)(j % ns)) != p) continue;
            if (l_on_stack(L, L->osucc + (off + j) * LW)) ok = 0;
        }
        if (!ok) continue;
        if (!L->store) L->amp[id] = p + 1;
        else if (!lc_choice_put(L, L->oh[id], p)) return n; /* no room: expanded fully */
        L->por_reduced++;
        return l_keep(L, L->osucc, off, n, p);
    }
    return n;
}

/* expands state id onto the outer stack (a compact store: id is its depth, where
 * lc_stack_push put it); 0 or a negative status */
static int l_push_outer(ltl_t *L, int64_t id) {
    if (!l_frames(&L->os, &L->caposs, L->nos + 1)) return -L_MEMORY;
    int64_t off = L->nosucc;
    int64_t depth = L->nos;
    int64_t n = l_expand(L, l_ostate(L, id), &L->osucc, &L->nosucc, &L->caposucc, 1);
    if (n < 0) return (int)n;
    if (!L->store) l_stack_mark(L, id, 1);
    if (L->por) {
        n = l_ample(L, id, off, n);
        L->nosucc = off + n;
    }
    if (depth > L->deepest) L->deepest = depth;
    if (L->max_depth >= 0 && depth == L->max_depth) {
        if (n > 0) L->truncated = 1;
        L->transitions += n;
        L->nosucc = off;
        n = 0;
    } else {
        L->transitions += n;
    }
    lframe_t *f = &L->os[L->nos++];
    f->id = id;
    f->off = off;
    f->n = (int32_t)n;
    f->i = 0;
    return 0;
}

/* a lasso's states: outer[0..nouter), then inner[1..ninner) (the nested stack after its
 * seed; ninner 0 for none), then `close`; *len their number, *cycle_start close's first place
 * in outer (-1: none). NULL when out of memory. Serves l_lasso and CNDFS's cn_lasso. */
static int64_t *l_lasso_path(const lframe_t *outer, int64_t nouter, const lframe_t *inner,
                             int64_t ninner, int64_t close, int64_t *len,
                             int64_t *cycle_start) {
    int64_t n = nouter + (ninner ? ninner - 1 : 0) + 1;
    int64_t *p = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    if (!p) return NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < nouter; i++) p[k++] = outer[i].id;
    for (int64_t i = 1; i < ninner; i++) p[k++] = inner[i].id;
    p[k++] = close;
    *cycle_start = -1;
    for (int64_t i = 0; i < nouter; i++)
        if (outer[i].id == close) { *cycle_start = i; break; }
    *len = k;
    return p;
}

static int l_lasso(ltl_t *L, int nested, int64_t close) {
    int64_t top = nested ? L->seed_depth + 1 : L->nos, n, start;
    int64_t *p = l_lasso_path(L->os, top, L->ns, nested ? L->nns : 0, close, &n, &start);
    if (!p) return L_MEMORY;
    free(L->lasso);
    L->lasso = p;
    L->nlasso = n;
    L->cycle_start = start;
    return L_FOUND;
}

/* the ample process + 1 the outer search chose for the state of frame id (compact: nested
 * states by hash h), 0: expanded fully */
static inline int l_choice(const ltl_t *L, int64_t id, uint64_t h) {
    if (!L->por) return 0;
    return L->store ? lc_choice_get(L, h) : L->amp[l_amp_id((ltl_t *)L, id)];
}

/* expands state s onto the nested stack, cut to the outer search's ample set (HPY 1996): its
 * frame's id is its arena id (exact store) or its place on the nested stack, where s is (a
 * compact store, whose choice is found by s's hash h); L_RUNNING or a status */
static int l_push_nested(ltl_t *L, const uint64_t *s, int64_t id, uint64_t h) {
    if (!l_frames(&L->ns, &L->capns, L->nns + 1)) return L_MEMORY;
    int64_t off = L->nnsucc;
    int64_t n = l_expand(L, s, &L->nsucc, &L->nnsucc, &L->capnsucc, 0);
    if (n < 0) return (int)-n;
    int a = l_choice(L, id, h);
    if (a) {
        n = l_keep(L, L->nsucc, off, n, a - 1);
        L->nnsucc = off + n;
    }
    lframe_t *g = &L->ns[L->nns++];
    g->id = id;
    g->off = off;
    g->n = (int32_t)n;
    g->i = 0;
    return L_RUNNING;
}

static int l_start_nested(ltl_t *L, int64_t seed) {
    L->nnsucc = 0;
    L->nns = 0;
    const uint64_t *s = l_ostate(L, seed);
    uint64_t h = 0;
    if (L->store) {  /* the nested stack's own copy of its seed */
        if (!l_reserve(&L->nw, &L->capnw, LW)) return L_MEMORY;
        memcpy(L->nw, s, sizeof(uint64_t) * LW);
        s = L->nw;
        h = L->oh[seed];
    }
    int r = l_push_nested(L, s, L->store ? 0 : seed, h);
    if (r != L_RUNNING) return r;
    L->seed_depth = L->nos - 1;
    L->in_nested = 1;
    return L_RUNNING;
}

/* one step of the nested search */
static int l_nested_step(ltl_t *L) {
    lframe_t *f = &L->ns[L->nns - 1];
    if (f->i == f->n) {
        L->nnsucc = f->off;
        if (--L->nns == 0) {
            L->in_nested = 0;
            /* the seed leaves the outer stack */
            lframe_t *o = &L->os[L->nos - 1];
            if (L->store) lc_stack_pop(L, o->id);
            else l_stack_mark(L, o->id, -1);
            L->nosucc = o->off;
            L->nos--;
            return L->nos ? L_RUNNING : L_DONE;
        }
        return L_RUNNING;
    }
    const uint64_t *t = L->nsucc + (f->off + f->i) * LW;
    f->i++;
    if (L->store) return lc_nested_step(L, t);
    int64_t id = l_find(L, t, l_hash(t), 0);
    if (id < 0) return L_RUNNING; /* not stored by the outer search (past a depth bound) */
    if (L->flags[id] & 1) return l_lasso(L, 1, id);
    if (L->flags[id] & 2) return L_RUNNING;
    L->flags[id] |= 2;
    L->nested_states++;
    return l_push_nested(L, L->arena + id * LW, id, 0);
}

/* a state property violated in product state t (with `safety`): L_SAFETY, L_OVERFLOW or 0 */
static int l_state_checks(ltl_t *L, const uint64_t *t) {
    if (!L->safety || !L->state_checks) return 0;
    int32_t out[NPROP > 0 ? NPROP : 1];
    m_unpack(t, L->v);
    ctx_reset(L->C);
    int nv = m_violated(L->C, L->v, out);
    if (L->C->ovf) return L_OVERFLOW;
    return nv ? L_SAFETY : 0;
}

/* one step of the outer search */
static int l_outer_step(ltl_t *L) {
    lframe_t *f = &L->os[L->nos - 1];
    if (f->i == f->n) {
        if (l_accepting(L, l_ostate(L, f->id))) return l_start_nested(L, f->id);
        if (L->store) lc_stack_pop(L, f->id);
        else l_stack_mark(L, f->id, -1);
        L->nosucc = f->off;
        L->nos--;
        return L->nos ? L_RUNNING : L_DONE;
    }
    uint64_t t[LW];
    memcpy(t, L->osucc + (f->off + f->i) * LW, sizeof t);
    f->i++;
    uint64_t h = l_hash(t);
    if (L->store) return lc_outer_step(L, t, h, f->id);
    int64_t id = l_find(L, t, h, 0);
    if (id >= 0) {
        if (L->early && (L->flags[id] & 1) &&
            (l_accepting(L, t) || l_accepting(L, L->arena + f->id * LW)))
            return l_lasso(L, 0, id);
        return L_RUNNING;
    }
    if (L->max_states >= 0 && L->nstates >= L->max_states) return L_STATES;
    id = l_find(L, t, h, 1);
    if (id == L_NOMEM) return L_MEMORY;
    id = -2 - id;
    int c = l_state_checks(L, t);
    if (c) return c;
    int r = l_push_outer(L, id);
    return r < 0 ? -r : L_RUNNING;
}

ltl_t *l_new(int claim, int stutter, int safety, int deadlock, int state_checks, int early,
             int64_t max_states, int64_t max_depth) {
    ltl_t *L = (ltl_t *)calloc(1, sizeof(ltl_t));
    if (!L) return NULL;
    L->C = ctx_new();
    L->targets = (int32_t *)malloc(sizeof(int32_t) * (size_t)(m_claim_size(claim) + 1));
    if (!L->C || !L->targets || !l_table_grow(L)) { free(L->targets); free(L); return NULL; }
    L->claim = claim;
    L->stutter = stutter;
    L->safety = safety;
    L->deadlock = safety && deadlock;
    L->state_checks = state_checks;
    L->early = early;
    L->max_states = max_states;
    L->max_depth = max_depth;
    return L;
}

void l_free(ltl_t *L) {
    if (!L) return;
    ctx_free(L->C);
    free(L->arena); free(L->table); free(L->flags); free(L->os); free(L->ns);
    free(L->osucc); free(L->nsucc); free(L->lasso); free(L->order); free(L->targets);
    free(L->amp); free(L->rep); free(L->pstk); free(L->ptable);
    free(L->hc); free(L->bits); free(L->ow); free(L->oh); free(L->onext); free(L->shead);
    free(L->nw); free(L->ch); free(L->lasso_w);
    free(L);
}

/* search for at most `seconds`; returns an L_* status (L_SLICE: call again) */
int l_run(ltl_t *L, const int64_t *init, double seconds) {
    if (L->status != L_RUNNING) return L->status;
    if (!L->started) {
        L->started = 1;
        if (!m_in_range(init)) return L->status = L_OVERFLOW;
        uint64_t w[LW];
        m_pack(init, w);
        w[NW] = (uint64_t)m_claim_init(L->claim);
        uint64_t h = l_hash(w);
        int64_t id = 0;
        if (L->store) {
            if (!lc_add(L, w, h) || !lc_stack_reserve(L, 0)) return L->status = L_MEMORY;
        } else {
            id = l_find(L, w, h, 1);
            if (id == L_NOMEM) return L->status = L_MEMORY;
            id = -2 - id;
        }
        int c = l_state_checks(L, w);
        if (c) return L->status = c;
        if (L->store) lc_stack_push(L, 0, w, h);
        int r = l_push_outer(L, id);
        if (r < 0) return L->status = -r;
    }
    double end = now_s() + seconds;
    for (uint64_t k = 1;; k++) {
        int s = L->in_nested ? l_nested_step(L) : l_outer_step(L);
        if (s != L_RUNNING) return L->status = s;
        if (!(k & 4095) && now_s() >= end) return L_SLICE;
    }
}

int64_t l_stat(ltl_t *L, int which) {
    switch (which) {
    case 0: return L->store ? L->cstored : L->nstates;
    case 1: return L->transitions;
    case 2: return L->deepest;
    case 3: return L->truncated;
    case 4: return L->nested_states;
    case 5: return L->nlasso;
    case 6: return L->cycle_start;
    case 7:
        if (L->store) return lc_store_bytes(L);
        return (int64_t)(L->cap * LW * 8 + L->tcap * 8 + L->cap + (L->amp ? L->cap * 4 : 0) +
                         (L->rep ? L->cap * 8 + L->ptcap * 8 : 0));
    case 8: return L->nos;
    case 9: return L->por_reduced;
    default: return 0;
    }
}

/* the k-th state of the lasso: its unpacked system state into out, its automaton state */
int l_lasso_state(ltl_t *L, int64_t k, int64_t *out) {
    const uint64_t *w = L->store ? L->lasso_w + k * LW : L->arena + L->lasso[k] * LW;
    m_unpack(w, out);
    return L_Q(w[NW]);
}

/* the weak-fairness counter of the k-th state of the lasso (0 without fairness) */
int l_lasso_counter(ltl_t *L, int64_t k) {
    return L_C(L->store ? L->lasso_w[k * LW + NW] : L->arena[L->lasso[k] * LW + NW]);
}

/* weak fairness (SPIN's -f): before the first l_run */
void l_set_fair(ltl_t *L, int on) { L->fair = on; }

/* partial-order reduction of the product (one thread; with weak fairness, l_set_fair first,
 * the tables m_lfpor) on (1) or off (0), before the first l_run; returns whether it is on (0
 * when no location is safe) */
int l_set_reduce(ltl_t *L, int on) {
    if (L->started || L->nstates > 0) return L->por = 0;
    if (L->store && L->fair) return L->por = 0;  /* its choice per (s, q) needs the arena */
    L->por = on && (L->fair ? LFPOR_ROWS : LPOR_ROWS) > 0;
    if (L->por && L->fair && !l_ptable_grow(L)) return L->por = 0;
    return L->por;
}


#ifndef LTL_COMPACT
/* without the compact stores (see above): l_set_store refuses every store but the exact one,
 * so none of these is reached */
static int lc_add(ltl_t *L, const uint64_t *w, uint64_t h) { (void)L; (void)w; (void)h; return 0; }
static int lc_stack_reserve(ltl_t *L, int64_t d) { (void)L; (void)d; return 0; }
static void lc_stack_push(ltl_t *L, int64_t d, const uint64_t *w, uint64_t h) {
    (void)L; (void)d; (void)w; (void)h;
}
static void lc_stack_pop(ltl_t *L, int64_t d) { (void)L; (void)d; }
static int64_t lc_stack_find(const ltl_t *L, const uint64_t *w, uint64_t h) {
    (void)L; (void)w; (void)h;
    return -1;
}
static int lc_choice_put(ltl_t *L, uint64_t h, int p) { (void)L; (void)h; (void)p; return 0; }
static int lc_choice_get(const ltl_t *L, uint64_t h) { (void)L; (void)h; return 0; }
static int lc_nested_step(ltl_t *L, const uint64_t *t) { (void)L; (void)t; return L_MEMORY; }
static int lc_outer_step(ltl_t *L, const uint64_t *t, uint64_t h, int64_t src) {
    (void)L; (void)t; (void)h; (void)src;
    return L_MEMORY;
}
static int64_t lc_store_bytes(const ltl_t *L) { (void)L; return 0; }

int l_set_store(ltl_t *L, int kind, int log2_bits, int k) {
    (void)log2_bits; (void)k;
    return kind == L_EXACT && !L->started;
}

void l_bitstate_counts(ltl_t *L, int64_t *out) {
    (void)L;
    for (int i = 0; i < 5; i++) out[i] = 0;
}
#endif
