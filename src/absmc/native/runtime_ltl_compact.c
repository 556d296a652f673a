/* absmc native back end: the hash-compact and bitstate stores of the LTL product search
 * (runtime_ltl.c, whose header describes them), compiled only into a library built for them
 * (native/ltl.py NativeLtl(compact=True): LTL_COMPACT defined before runtime_ltl.c, this file
 * appended after it). */

/* the nested searches' bitstate key of a state of hash h (SPIN's second copy of a state) */
#define L_NESTED_K 0xD6E8FEB86659FD93ULL
/* bitstate: one state in 64 (top bits of its hash zero) is also kept exactly, at most
 * L_SHADOW_MAX of them (the safety search's rule, runtime_tail.c) */
#define L_SAMPLE_BITS 6
#define L_SHADOW_MAX (1 << 20)

/* hash-compact: the table key of hash h (bit 0 is the nested searches' mark; never 0) */
static inline uint64_t lc_key(uint64_t h) {
    uint64_t k = h & ~1ULL;
    return k ? k : 2;
}

static int lc_hc_grow(ltl_t *L) { return l_grow(&L->hc, &L->hccap, 1u << 16, 1); }

/* the position of key in the hash-compact table (*found 1), or the empty one it goes to */
static uint64_t lc_hc_probe(ltl_t *L, uint64_t key, int *found) {
    uint64_t m = L->hccap - 1, p = l_slot(key >> 1, L->hccap), e;
    while ((e = L->hc[p]) != 0) {
        if ((e & ~1ULL) == key) { *found = 1; return p; }
        p = (p + 1) & m;
    }
    *found = 0;
    return p;
}

/* bitstate: whether the k bits of key h (double hashing, h + i * h2) are all set */
static inline int lc_bits_all(const ltl_t *L, uint64_t h) {
    uint64_t mask = (1ULL << L->bs_log2) - 1, h2 = mix64(h ^ L_K1) | 1;
    for (int i = 0; i < L->bs_k; i++) {
        uint64_t q = (h + (uint64_t)i * h2) & mask;
        if (!(L->bits[q >> 3] & (1u << (q & 7)))) return 0;
    }
    return 1;
}

static void lc_bits_set(ltl_t *L, uint64_t h) {
    uint64_t mask = (1ULL << L->bs_log2) - 1, h2 = mix64(h ^ L_K1) | 1;
    for (int i = 0; i < L->bs_k; i++) {
        uint64_t q = (h + (uint64_t)i * h2) & mask;
        uint8_t b = (uint8_t)(1u << (q & 7));
        if (!(L->bits[q >> 3] & b)) { L->bits[q >> 3] |= b; L->bs_counts[4]++; }
    }
}

static size_t l_bits_bytes(const ltl_t *L) {
    return (size_t)1 << (L->bs_log2 > 3 ? L->bs_log2 - 3 : 0);
}

static inline int lc_sampled(uint64_t h) { return (h >> (64 - L_SAMPLE_BITS)) == 0; }

/* whether the outer search stored product state w (hash h); bitstate counts the match and,
 * for a sampled state absent from the shadow set, a certain false match (then kept there).
 * -1: no memory */
static int lc_seen(ltl_t *L, const uint64_t *w, uint64_t h) {
    if (L->store == L_HC) {
        int found;
        lc_hc_probe(L, lc_key(h), &found);
        return found;
    }
    if (!lc_bits_all(L, h)) return 0;
    L->bs_counts[1]++;
    if (lc_sampled(h) && L->nstates < L_SHADOW_MAX && l_find(L, w, h, 0) < 0) {
        if (l_find(L, w, h, 1) == L_NOMEM) return -1;
        L->bs_counts[3]++;
    }
    return 1;
}

/* stores w (hash h, not seen: lc_seen); 0 on no memory */
static int lc_add(ltl_t *L, const uint64_t *w, uint64_t h) {
    if (L->store == L_HC) {
        if ((L->hcused + 1) * 2 > L->hccap && !lc_hc_grow(L)) return 0;
        int found;
        uint64_t p = lc_hc_probe(L, lc_key(h), &found);
        L->hc[p] = lc_key(h);
        L->hcused++;
    } else {
        lc_bits_set(L, h);
        L->bs_counts[0]++;
        if (lc_sampled(h) && L->nstates < L_SHADOW_MAX) {
            if (l_find(L, w, h, 1) == L_NOMEM) return 0;
            L->bs_counts[2]++;
        }
    }
    L->cstored++;
    return 1;
}

/* the nested searches' visit of w (hash h): 1 when the outer search stored it (a state past a
 * depth bound it did not) and no nested search visited it yet (now marked), else 0 */
static int lc_nested_add(ltl_t *L, uint64_t h) {
    if (L->store == L_HC) {
        int found;
        uint64_t p = lc_hc_probe(L, lc_key(h), &found);
        if (!found || (L->hc[p] & 1)) return 0;
        L->hc[p] |= 1;
        return 1;
    }
    if (!lc_bits_all(L, h)) return 0;
    uint64_t hn = mix64(h ^ L_NESTED_K);
    if (lc_bits_all(L, hn)) return 0;
    lc_bits_set(L, hn);
    L->bs_nested++;
    return 1;
}

/* The outer stack with a compact store: its states by depth (ow, hashes oh), found through
 * chained buckets (shead: depth + 1 of the bucket's newest state, onext[d] the next one's).
 * A pop removes the newest state of the whole stack, so the head of its bucket: no search. */
static void lc_stack_link(ltl_t *L, int64_t d) {
    uint64_t b = l_slot(L->oh[d] >> 32, L->shcap);
    L->onext[d] = L->shead[b];
    L->shead[b] = (uint32_t)(d + 1);
}

/* room for depth d on the outer stack (the buckets at most half full); 0 on no memory */
static int lc_stack_reserve(ltl_t *L, int64_t d) {
    if (!l_reserve(&L->ow, &L->capow, (d + 1) * LW) || !l_reserve(&L->oh, &L->capoh, d + 1) ||
        !l_reserve(&L->onext, &L->caponext, d + 1))
        return 0;
    if ((uint64_t)(d + 1) * 2 > L->shcap) {
        uint64_t nc = L->shcap ? L->shcap * 2 : 512;
        uint32_t *t = (uint32_t *)calloc(nc, sizeof(uint32_t));
        if (!t) return 0;
        free(L->shead);
        L->shead = t;
        L->shcap = nc;
        for (int64_t i = 0; i < L->nos; i++) lc_stack_link(L, i);  /* oldest first */
    }
    return 1;
}

/* w (hash h) enters the outer stack at depth d (lc_stack_reserve first) */
static void lc_stack_push(ltl_t *L, int64_t d, const uint64_t *w, uint64_t h) {
    memcpy(L->ow + d * LW, w, sizeof(uint64_t) * LW);
    L->oh[d] = h;
    lc_stack_link(L, d);
}

static void lc_stack_pop(ltl_t *L, int64_t d) {
    L->shead[l_slot(L->oh[d] >> 32, L->shcap)] = (uint32_t)L->onext[d];
}

/* the depth of w (hash h) on the outer stack, or -1 */
static int64_t lc_stack_find(const ltl_t *L, const uint64_t *w, uint64_t h) {
    for (uint64_t d = L->shead[l_slot(h >> 32, L->shcap)]; d; d = L->onext[d - 1]) {
        const uint64_t *s = L->ow + (int64_t)(d - 1) * LW;
        if (L->oh[d - 1] == h && memcmp(s, w, sizeof(uint64_t) * LW) == 0)
            return (int64_t)d - 1;
    }
    return -1;
}

/* The ample choices with a compact store, by state hash (a state of the same hash may read
 * another's choice: the nested search then follows real steps all the same, a subset of the
 * full product's; every lasso is replayed). Entry: hash with its low 10 bits replaced by
 * 1 << 9 | process + 1. */
#define LC_CHOICE_LOW 0x3FFULL
static int lc_choice_put(ltl_t *L, uint64_t h, int p) {
    if ((L->chused + 1) * 2 > L->chcap && !l_grow(&L->ch, &L->chcap, 1024, 32)) return 0;
    uint64_t key = h & ~LC_CHOICE_LOW, m = L->chcap - 1, q = l_slot(h >> 32, L->chcap), e;
    while ((e = L->ch[q]) != 0 && (e & ~LC_CHOICE_LOW) != key) q = (q + 1) & m;
    if (!e) L->chused++;
    L->ch[q] = key | 0x200 | (uint64_t)(p + 1);
    return 1;
}

/* 1 + the ample process recorded for hash h, 0 for none (expanded fully) */
static int lc_choice_get(const ltl_t *L, uint64_t h) {
    if (!L->chcap) return 0;
    uint64_t key = h & ~LC_CHOICE_LOW, m = L->chcap - 1, q = l_slot(h >> 32, L->chcap), e;
    while ((e = L->ch[q]) != 0) {
        if ((e & ~LC_CHOICE_LOW) == key) return (int)(e & 0x1FF);
        q = (q + 1) & m;
    }
    return 0;
}

/* a compact store's lasso: the outer stack to `top`, the nested stack after its seed
 * (`nested`), then `close`, on the outer stack at depth d */
static int lc_lasso(ltl_t *L, int nested, const uint64_t *close, int64_t d) {
    int64_t top = nested ? L->seed_depth + 1 : L->nos, inner = nested ? L->nns - 1 : 0;
    int64_t n = top + inner + 1;
    uint64_t *p = (uint64_t *)malloc((size_t)n * LW * sizeof(uint64_t));
    if (!p) return L_MEMORY;
    memcpy(p, L->ow, (size_t)top * LW * sizeof(uint64_t));
    if (inner) memcpy(p + top * LW, L->nw + LW, (size_t)inner * LW * sizeof(uint64_t));
    memcpy(p + (top + inner) * LW, close, LW * sizeof(uint64_t));
    free(L->lasso_w);
    L->lasso_w = p;
    L->nlasso = n;
    L->cycle_start = d;
    return L_FOUND;
}

/* the nested search's step to t with a compact store (l_nested_step's, by hash and stacks) */
static int lc_nested_step(ltl_t *L, const uint64_t *t) {
    uint64_t h = l_hash(t);
    int64_t d = lc_stack_find(L, t, h);
    if (d >= 0) return lc_lasso(L, 1, t, d);
    if (!lc_nested_add(L, h)) return L_RUNNING;
    L->nested_states++;
    if (!l_reserve(&L->nw, &L->capnw, (L->nns + 1) * LW)) return L_MEMORY;
    uint64_t *s = L->nw + L->nns * LW;
    memcpy(s, t, sizeof(uint64_t) * LW);  /* before the expansion moves nsucc */
    return l_push_nested(L, s, L->nns, h);
}

/* the outer search's step to t (hash h) from the state at depth src with a compact store */
static int lc_outer_step(ltl_t *L, const uint64_t *t, uint64_t h, int64_t src) {
    int seen = lc_seen(L, t, h);
    if (seen < 0) return L_MEMORY;
    if (seen) {
        if (L->early) {
            int64_t d = lc_stack_find(L, t, h);
            if (d >= 0 && (l_accepting(L, t) || l_accepting(L, L->ow + src * LW)))
                return lc_lasso(L, 0, t, d);
        }
        return L_RUNNING;
    }
    if (L->max_states >= 0 && L->cstored >= L->max_states) return L_STATES;
    if (!lc_add(L, t, h)) return L_MEMORY;
    int c = l_state_checks(L, t);
    if (c) return c;
    int64_t d = L->nos;
    if (!lc_stack_reserve(L, d)) return L_MEMORY;
    lc_stack_push(L, d, t, h);
    int r = l_push_outer(L, d);
    return r < 0 ? -r : L_RUNNING;
}

/* the store, before l_set_reduce and the first l_run: L_EXACT (0, the default), L_HC (1,
 * hash-compact) or L_BS (2, bitstate: 2^log2_bits bits, 3..40, and k hash functions, 1..32);
 * returns 0 for a bad argument or no memory */
int l_set_store(ltl_t *L, int kind, int log2_bits, int k) {
    if (L->started || L->store || L->por) return 0;
    if (kind == L_HC) {
        if (!lc_hc_grow(L)) return 0;
    } else if (kind == L_BS) {
        if (log2_bits < 3 || log2_bits > 40 || k < 1 || k > 32) return 0;
        L->bs_log2 = log2_bits;
        L->bs_k = k;
        L->bits = (uint8_t *)calloc(l_bits_bytes(L), 1);
        if (!L->bits) return 0;
    } else if (kind != L_EXACT) {
        return 0;
    }
    L->store = kind;
    return 1;
}

/* the bitstate store's counts: keys stored (the outer search's states and the nested
 * searches' second copies), the outer search's lookups that matched, sampled new states,
 * certain false matches among the sampled lookups, bits set */
void l_bitstate_counts(ltl_t *L, int64_t *out) {
    for (int i = 0; i < 5; i++) out[i] = L->bs_counts[i];
    out[0] += L->bs_nested;
}

/* the keys or bits, and the ample choices by hash */
static int64_t lc_store_bytes(const ltl_t *L) {
    return (int64_t)((L->store == L_HC ? L->hccap * 8 : l_bits_bytes(L)) + L->chcap * 8);
}
