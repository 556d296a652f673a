
/* ---- tree compression (--store tree) ------------------------------------------------------
 * Laarman, van de Pol, Weber, "Parallel Recursive State Compression for Free" (SPIN 2011),
 * Sect. 3 (Fig. 2), as in LTSmin's tree database. The packed state (NW 64-bit words) is read
 * as 32-bit leaves (the halves of its words that some variable uses); a binary tree splits them in halves (the left one the larger), and
 * every inner node below the root has a table of its own that maps a pair (left, right) of
 * 32-bit values (a leaf's value, or the index of a child's pair) to a dense 32-bit index. The
 * root's pair then identifies the state: the root set (below) holds one entry per state, while
 * the inner tables hold only the distinct halves, quarters, ... of the states (usually far
 * fewer). The search keeps the BFS frontier in full (as hash-compact) and no parent ids: a
 * violation's path comes from an exact search bounded by its depth
 * (engines/explicit/native.py). One thread (the threaded search does not use this store).
 * Not done (LTSmin's): the incremental insertion that reuses the parent state's unchanged
 * subtrees, and the concurrent tables of the multi-core search. */

typedef struct tnode_s {
    uint64_t *keys;  /* the node's pairs by index (append-only) */
    uint32_t *idx;   /* open addressing: index + 1 (0 empty) */
    uint64_t n, cap, icap;
    uint64_t last_key; /* the last pair found or added and its index + 1 (0: none): the */
    uint64_t last_idx; /* successors of a state mostly share their parent's subtrees */
} tnode_t;

#define TREE_LEAVES (2 * NWA)

static inline uint64_t tree_hash(uint64_t key) { return mix64(key ^ 0x2545F4914F6CDD1DULL); }

static uint64_t tnode_bytes(const tnode_t *t) {
    return t->n * sizeof(uint64_t) + t->icap * sizeof(uint32_t);
}

/* the node's index of `key` (-1: out of memory; -2: absent and !add) */
static int64_t tnode_find_add(tnode_t *t, uint64_t key, int add) {
    if (t->last_idx && t->last_key == key) return (int64_t)(t->last_idx - 1);
    if ((t->n + 1) * 100 > t->icap * 85) { /* grow x1.5 past 85% load */
        uint64_t nc = t->icap ? t->icap + t->icap / 2 : 1024;
        uint32_t *ni = (uint32_t *)calloc(nc, sizeof(uint32_t));
        if (!ni) return -1;
        for (uint64_t k = 0; k < t->n; k++) {
            uint64_t p = fastrange(tree_hash(t->keys[k]), nc);
            while (ni[p]) p = (p + 1 == nc) ? 0 : p + 1;
            ni[p] = (uint32_t)(k + 1);
        }
        free(t->idx);
        t->idx = ni;
        t->icap = nc;
    }
    uint64_t p = fastrange(tree_hash(key), t->icap);
    for (;;) {
        uint32_t x = t->idx[p];
        if (!x) break;
        if (t->keys[x - 1] == key) {
            t->last_key = key;
            t->last_idx = x;
            return (int64_t)(x - 1);
        }
        p = (p + 1 == t->icap) ? 0 : p + 1;
    }
    if (!add) return -2;
    if (t->n >= 0xfffffff0ULL) return -1; /* indices are 32 bits */
    if (t->n + 1 > t->cap) {
        /* glibc's realloc moves a large block with mremap: no copy, no old + new peak */
        uint64_t nc = t->cap ? t->cap * 2 : 1024;
        uint64_t *nk = (uint64_t *)realloc(t->keys, (size_t)nc * sizeof(uint64_t));
        if (!nk) return -1;
        t->keys = nk;
        t->cap = nc;
    }
    t->keys[t->n] = key;
    t->idx[p] = (uint32_t)(t->n + 1);
    t->last_key = key;
    t->last_idx = t->n + 1;
    return (int64_t)t->n++;
}

/* the value of leaves [lo, lo + n): the leaf itself, or the index of the node's pair in its
 * table (nodes numbered in pre-order from *k); -1 out of memory, -2 absent (!add) */
static int64_t tree_value(search_t *S, const uint32_t *v, int lo, int n, int *k, int add) {
    if (n == 1) return v[lo];
    int me = (*k)++, nl = (n + 1) / 2;
    int64_t l = tree_value(S, v, lo, nl, k, add);
    if (l < 0) return l;
    int64_t r = tree_value(S, v, lo + nl, n - nl, k, add);
    if (r < 0) return r;
    return tnode_find_add(&S->tnodes[me], (uint64_t)l << 32 | (uint64_t)r, add);
}

/* the root's pair of packed state w (-1 out of memory, -2 some part absent and !add) */
static int tree_root_key(search_t *S, const uint64_t *w, int add, uint64_t *key) {
    uint32_t v[TREE_LEAVES];
    int n = S->tree_n, k = 0;
    for (int i = 0; i < n; i++) {
        int c = S->tree_leaf[i];
        v[i] = (uint32_t)(w[c >> 1] >> (32 * (c & 1)));
    }
    if (n < 2) { /* a pair of the one leaf (or none) and 0 */
        if (n == 0) v[0] = 0;
        v[1] = 0;
        n = 2;
    }
    int nl = (n + 1) / 2;
    int64_t l = tree_value(S, v, 0, nl, &k, add);
    if (l < 0) return (int)l;
    int64_t r = tree_value(S, v, nl, n - nl, &k, add);
    if (r < 0) return (int)r;
    *key = (uint64_t)l << 32 | (uint64_t)r;
    return 0;
}

/* The root set: 2^ROOT_SEL_BITS small open-addressing tables (linear probing). A root pair
 * is first permuted by a bijection (mix64: xor-shifts and odd multipliers); its top 16 bits
 * choose the table and only the other 48 are stored (6 bytes per slot: quotienting, as
 * Cleary's compact hash tables and Laarman's compact tree tables drop the bits the position
 * implies). Each table grows by itself (x1.25 past 90% load), so a growth copies a few KB and
 * the peak is never an old plus a new table of every state. */
#define ROOT_SEL_BITS 16
#define ROOT_TABLES (1u << ROOT_SEL_BITS)
#define ROOT_REST_MASK ((1ULL << (64 - ROOT_SEL_BITS)) - 1)
#define ROOT_LOAD 90

typedef struct rtab_s {
    uint8_t *slots;  /* cap 6-byte entries (+ 2 bytes so that 8 can be read at the last) */
    uint32_t cap, used;
} rtab_t;

static inline uint64_t rslot_get(const uint8_t *t, uint64_t p) {
    uint64_t x;
    memcpy(&x, t + 6 * p, 8);
    return x & ROOT_REST_MASK;
}

static inline void rslot_set(uint8_t *t, uint64_t p, uint64_t e) {
    memcpy(t + 6 * p, &e, 6);
}

static inline uint64_t rslot_home(uint64_t rest, uint64_t cap) {
    return fastrange(mix64(rest), cap);
}

static int rtab_grow(search_t *S, rtab_t *t) {
    uint32_t ncap = t->cap ? t->cap + t->cap / 4 + 1 : 8;
    if (S->max_bytes >= 0 &&
        store_bytes(S) + (int64_t)(ncap - t->cap) * 6 > S->max_bytes) {
        S->status = STOP_MEMORY_LIMIT;
        return 0;
    }
    uint8_t *n = (uint8_t *)calloc((size_t)ncap * 6 + 2, 1);
    if (!n) return 0;
    for (uint32_t i = 0; i < t->cap; i++) {
        uint64_t e = rslot_get(t->slots, i);
        if (!e) continue;
        uint64_t p = rslot_home(e, ncap);
        while (rslot_get(n, p)) p = (p + 1 == ncap) ? 0 : p + 1;
        rslot_set(n, p, e);
    }
    free(t->slots);
    S->root_bytes += (int64_t)(ncap - t->cap) * 6;
    t->slots = n;
    t->cap = ncap;
    return 1;
}

/* the root's pair of packed state w, its inner nodes added (the breadth-first loop computes it
 * while it expands a batch, and prefetches the pair's root slot); 0, or -1 out of memory */
static int tree_key(search_t *S, const uint64_t *w, uint64_t *key) {
    return tree_root_key(S, w, 1, key) < 0 ? -1 : 0;
}

static inline void tree_prefetch(search_t *S, uint64_t key) {
    uint64_t h = mix64(key);
    const rtab_t *t = &S->rtabs[h >> (64 - ROOT_SEL_BITS)];
    if (t->cap) __builtin_prefetch(t->slots + 6 * rslot_home(h & ROOT_REST_MASK, t->cap));
}

/* insert the state of root pair key: 1 new, 0 seen, -1 out of memory */
static int tree_insert_key(search_t *S, uint64_t key, int add) {
    uint64_t h = mix64(key); /* a bijection: h identifies the pair */
    uint32_t sel = (uint32_t)(h >> (64 - ROOT_SEL_BITS));
    uint64_t rest = h & ROOT_REST_MASK;
    if (rest == 0) { /* 0 marks an empty slot: these pairs are flagged per table */
        uint8_t bit = (uint8_t)(1u << (sel & 7));
        if (S->root_zero[sel >> 3] & bit) return 0;
        if (add) { S->root_zero[sel >> 3] |= bit; S->tused++; }
        return 1;
    }
    rtab_t *t = &S->rtabs[sel];
    if ((uint64_t)(t->used + 1) * 100 > (uint64_t)t->cap * ROOT_LOAD && !rtab_grow(S, t))
        return -1;
    uint64_t p = rslot_home(rest, t->cap);
    for (;;) {
        uint64_t x = rslot_get(t->slots, p);
        if (!x) break;
        if (x == rest) return 0;
        p = (p + 1 == t->cap) ? 0 : p + 1;
    }
    if (!add) return 1;
    rslot_set(t->slots, p, rest);
    t->used++;
    S->tused++;
    return 1;
}

/* insert packed state w: 1 new, 0 seen, -1 out of memory */
static int tree_insert(search_t *S, const uint64_t *w, int add) {
    uint64_t key;
    int r = tree_root_key(S, w, add, &key);
    if (r == -2) return 1;
    if (r < 0) return -1;
    return tree_insert_key(S, key, add);
}

/* make S (made with hc = 1) a tree-compressed search over the n 32-bit halves leaves[] of the
 * packed state (word * 2 + 1 for a word's high half; the halves some variable uses, so that
 * unused bits make no inner node); 0: no memory or bad leaves */
int s_set_tree(search_t *S, const int32_t *leaves, int n) {
    if (n < 0 || n > TREE_LEAVES) return 0;
    for (int i = 0; i < n; i++) {
        if (leaves[i] < 0 || leaves[i] >= 2 * NW) return 0;
        S->tree_leaf[i] = leaves[i];
    }
    S->tree_n = n;
    S->tree = 1;
    S->tnodes = (tnode_t *)calloc(TREE_LEAVES, sizeof(tnode_t));
    S->rtabs = (rtab_t *)calloc(ROOT_TABLES, sizeof(rtab_t));
    S->root_zero = (uint8_t *)calloc(ROOT_TABLES / 8, 1);
    S->root_bytes = (int64_t)(ROOT_TABLES * sizeof(rtab_t) + ROOT_TABLES / 8);
    return S->tnodes && S->rtabs && S->root_zero;
}

static int64_t tree_bytes(search_t *S) {
    int64_t b = S->root_bytes;
    for (int i = 0; S->tnodes && i < TREE_LEAVES; i++) b += (int64_t)tnode_bytes(&S->tnodes[i]);
    return b;
}

/* the distinct pairs of inner node i (pre-order; -1 past the last) */
int64_t s_tree_nodes(search_t *S, int i) {
    if (!S->tree || i < 0 || i >= S->tree_n - 2) return -1;
    return (int64_t)S->tnodes[i].n;
}

static void tree_free(search_t *S) {
    if (S->rtabs)
        for (uint32_t i = 0; i < ROOT_TABLES; i++) free(S->rtabs[i].slots);
    free(S->rtabs);
    free(S->root_zero);
    S->rtabs = NULL;
    if (!S->tnodes) return;
    for (int i = 0; i < TREE_LEAVES; i++) {
        free(S->tnodes[i].keys);
        free(S->tnodes[i].idx);
    }
    free(S->tnodes);
    S->tnodes = NULL;
}
