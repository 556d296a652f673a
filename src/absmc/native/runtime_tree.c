
/* ---- tree compression (--store tree) ------------------------------------------------------
 * Laarman, van de Pol, Weber, "Parallel Recursive State Compression for Free" (SPIN 2011),
 * Sect. 3 (Fig. 2), as in LTSmin's tree database. The packed state (NW 64-bit words) is read
 * as 2*NW 32-bit leaves; a binary tree splits them in halves (the left one the larger), and
 * every inner node below the root has a table of its own that maps a pair (left, right) of
 * 32-bit values (a leaf's value, or the index of a child's pair) to a dense 32-bit index. The
 * root's pair then identifies the state: the root table is a set of 64-bit pairs (open
 * addressing, linear probing, 8 bytes per slot) and holds one entry per state, while the inner
 * tables hold only the distinct halves, quarters, ... of the states (usually far fewer).
 * The search keeps the BFS frontier in full (as hash-compact) and no parent ids: a violation's
 * path comes from an exact search bounded by its depth (engines/explicit/native.py).
 * The root table grows by x1.25 past 80% load; its entries move in slot order, and since a
 * slot's position is monotone in the hash (fastrange) the new table is written in the same
 * order, so the old table's pages are given back (MADV_DONTNEED) as the move passes them: the
 * peak is the new table, not old + new. One thread (the threaded search does not use it). */

typedef struct tnode_s {
    uint64_t *keys;  /* the node's pairs by index (append-only) */
    uint32_t *idx;   /* open addressing: index + 1 (0 empty) */
    uint64_t n, cap, icap;
} tnode_t;

#define TREE_LEAVES (2 * NWA)
#define TREE_ROOT_LOAD 80      /* percent: the root table grows past this load */
#define TREE_ROOT_GROW_X8 10   /* ... by 10/8 */

static inline uint64_t tree_hash(uint64_t key) { return mix64(key ^ 0x2545F4914F6CDD1DULL); }

static uint64_t tnode_bytes(const tnode_t *t) {
    return t->cap * sizeof(uint64_t) + t->icap * sizeof(uint32_t);
}

/* the node's index of `key` (-1: out of memory; -2: absent and !add) */
static int64_t tnode_find_add(tnode_t *t, uint64_t key, int add) {
    if ((t->n + 1) * 4 > t->icap * 3) {
        uint64_t nc = t->icap ? t->icap * 2 : 1024;
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
        if (t->keys[x - 1] == key) return (int64_t)(x - 1);
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
    int n = 2 * NW, k = 0;
    if (n < 2) n = 2;
    for (int i = 0; i < NW; i++) {
        v[2 * i] = (uint32_t)w[i];
        v[2 * i + 1] = (uint32_t)(w[i] >> 32);
    }
    if (NW == 0) v[0] = v[1] = 0;
    int nl = (n + 1) / 2;
    int64_t l = tree_value(S, v, 0, nl, &k, add);
    if (l < 0) return (int)l;
    int64_t r = tree_value(S, v, nl, n - nl, &k, add);
    if (r < 0) return (int)r;
    *key = (uint64_t)l << 32 | (uint64_t)r;
    return 0;
}

/* grow the root table by x1.25, giving the old table's pages back as the move passes them */
static int tree_root_grow(search_t *S) {
    uint64_t ncap = S->tcap * TREE_ROOT_GROW_X8 / 8;
    if (S->max_bytes >= 0 && store_bytes(S) + (int64_t)((ncap - S->tcap) * 8) > S->max_bytes) {
        S->status = STOP_MEMORY_LIMIT;
        return 0;
    }
    uint64_t *nt = (uint64_t *)mem_map((size_t)ncap * sizeof(uint64_t), MAP_NORESERVE);
    if (!nt) return 0;
    uint64_t *old = S->table;
    const uint64_t chunk = HUGE_PAGE / sizeof(uint64_t);
    /* a table of 2 MB or more starts on a 2 MB boundary (mem_map) */
    int release = S->tcap * sizeof(uint64_t) >= HUGE_PAGE;
    /* entries of the table's first cluster may have wrapped from its end: move those first so
       that the pages at the start can be released as soon as the move passes them */
    uint64_t start = 0;
    while (start < S->tcap && old[start]) start++;
    for (uint64_t i = 0; i < S->tcap; i++) {
        uint64_t s = (start + i) % S->tcap, e = old[s];
        if (e) {
            uint64_t p = fastrange(tree_hash(e), ncap);
            while (nt[p]) p = (p + 1 == ncap) ? 0 : p + 1;
            nt[p] = e;
        }
        if (release && (s + 1) % chunk == 0 && s + 1 >= start + chunk)
            madvise(old + (s + 1 - chunk), HUGE_PAGE, MADV_DONTNEED);
    }
    table_mem_free(old, S->tcap);
    S->table = nt;
    S->tcap = ncap;
    return 1;
}

/* insert packed state w: 1 new, 0 seen, -1 out of memory */
static int tree_insert(search_t *S, const uint64_t *w, int add) {
    uint64_t key;
    int r = tree_root_key(S, w, add, &key);
    if (r == -2) return 1;
    if (r < 0) return -1;
    if (key == 0) {
        if (S->tree_zero) return 0;
        if (add) S->tree_zero = 1;
        return 1;
    }
    if ((S->tused + 1) * 100 > S->tcap * TREE_ROOT_LOAD && !tree_root_grow(S)) return -1;
    uint64_t p = fastrange(tree_hash(key), S->tcap);
    for (;;) {
        uint64_t x = S->table[p];
        if (!x) break;
        if (x == key) return 0;
        p = (p + 1 == S->tcap) ? 0 : p + 1;
    }
    if (!add) return 1;
    S->table[p] = key;
    S->tused++;
    return 1;
}

/* make S (made with hc = 1) a tree-compressed search (0: no memory) */
int s_set_tree(search_t *S) {
    S->tree = 1;
    S->tnodes = (tnode_t *)calloc(TREE_LEAVES, sizeof(tnode_t));
    return S->tnodes != NULL;
}

static int64_t tree_bytes(search_t *S) {
    int64_t b = 0;
    for (int i = 0; S->tnodes && i < TREE_LEAVES; i++) b += (int64_t)tnode_bytes(&S->tnodes[i]);
    return b;
}

/* the distinct pairs of inner node i (pre-order; -1 past the last) */
int64_t s_tree_nodes(search_t *S, int i) {
    if (!S->tree || i < 0 || i >= 2 * (NW > 1 ? NW : 1) - 2) return -1;
    return (int64_t)S->tnodes[i].n;
}

static void tree_free(search_t *S) {
    if (!S->tnodes) return;
    for (int i = 0; i < TREE_LEAVES; i++) {
        free(S->tnodes[i].keys);
        free(S->tnodes[i].idx);
    }
    free(S->tnodes);
    S->tnodes = NULL;
}
