/* absmc native back end: the reachable state graph for explicit CTL (absmc.native.graph).
 * Appended after runtime_tail.c and the generated m_atoms (the atomic propositions of the CTL
 * formulas), in a library of its own. A breadth-first search, one thread, in time slices:
 * packed states in BFS order (ids), an open-addressing table of ids, the successor lists as
 * CSR arrays (off, dst, with the first command of each step's chain in cmd) and each state's
 * atom values. Successors are api_successors' steps (failures are no transitions), duplicates
 * of a target dropped, a state without step has itself as its only successor (cmd -1). */

enum { G_RUNNING, G_DONE, G_STATES, G_OVERFLOW, G_MEMORY, G_SLICE };

typedef struct graph_s {
    ctx_t *C;
    int natoms;
    int64_t max_states;
    uint64_t *st;          /* packed states, NWA words each, in id (BFS) order */
    int64_t n, cap;
    int64_t *tab;          /* id + 1 per slot, 0 empty; capacity a power of two */
    uint64_t tcap;
    int64_t done;          /* states expanded (a prefix of the ids) */
    int64_t *off;          /* off[i]: first edge of state i; off[done] = ne */
    int32_t *dst, *cmd;
    int64_t ne, ecap;
    uint8_t *atoms;        /* natoms values per state */
    int64_t *poff;         /* the reverse CSR (g_finish) */
    int32_t *psrc;
    int status;
    int64_t vals[NVA];
    uint64_t packed[NWA];
} graph_t;

static uint64_t g_hash(const uint64_t *w) {
    uint64_t h = 0x13198A2E03707344ULL;
    for (int i = 0; i < NW; i++) h = mix64(h ^ w[i]) * 0x9E3779B97F4A7C15ULL;
    return mix64(h);
}

void g_free(graph_t *G) {
    if (!G) return;
    ctx_free(G->C);
    free(G->st); free(G->tab); free(G->off); free(G->dst); free(G->cmd); free(G->atoms);
    free(G->poff); free(G->psrc);
    free(G);
}

graph_t *g_new(int natoms, int64_t max_states) {
    graph_t *G = (graph_t *)calloc(1, sizeof(graph_t));
    if (!G) return NULL;
    G->C = ctx_new();
    G->natoms = natoms;
    G->max_states = max_states;
    G->tcap = 1024;
    G->tab = (int64_t *)calloc(G->tcap, sizeof(int64_t));
    if (!G->C || !G->tab) { g_free(G); return NULL; }
    return G;
}

static int g_rehash(graph_t *G) {
    uint64_t cap = G->tcap * 2;
    int64_t *t = (int64_t *)calloc(cap, sizeof(int64_t));
    if (!t) return 0;
    for (int64_t i = 0; i < G->n; i++) {
        uint64_t p = g_hash(G->st + (size_t)i * NWA) & (cap - 1);
        while (t[p]) p = (p + 1) & (cap - 1);
        t[p] = i + 1;
    }
    free(G->tab);
    G->tab = t;
    G->tcap = cap;
    return 1;
}

/* the id of packed state w; a new one gets the next id (-1: the state limit, -2: memory) */
static int64_t g_id(graph_t *G, const uint64_t *w, int add) {
    uint64_t p = g_hash(w) & (G->tcap - 1);
    while (G->tab[p]) {
        int64_t i = G->tab[p] - 1;
        if (memcmp(G->st + (size_t)i * NWA, w, sizeof(uint64_t) * NWA) == 0) return i;
        p = (p + 1) & (G->tcap - 1);
    }
    if (!add) return -3;
    if (G->max_states >= 0 && G->n >= G->max_states) return -1;
    if (G->n + 1 > G->cap) {
        int64_t cap = G->cap ? G->cap + G->cap / 2 : 1024;
        uint64_t *st = (uint64_t *)realloc(G->st, (size_t)cap * NWA * sizeof(uint64_t));
        if (!st) return -2;
        G->st = st;
        int64_t *off = (int64_t *)realloc(G->off, (size_t)(cap + 1) * sizeof(int64_t));
        if (!off) return -2;
        G->off = off;
        if (G->natoms) {
            uint8_t *a = (uint8_t *)realloc(G->atoms, (size_t)cap * G->natoms);
            if (!a) return -2;
            G->atoms = a;
        }
        G->cap = cap;
    }
    int64_t i = G->n++;
    memcpy(G->st + (size_t)i * NWA, w, sizeof(uint64_t) * NWA);
    G->tab[p] = i + 1;
    if ((uint64_t)G->n * 10 > G->tcap * 7 && !g_rehash(G)) return -2;
    if (G->natoms) m_atoms(G->C, G->vals, G->atoms + (size_t)i * G->natoms);
    return i;
}

static int g_edge(graph_t *G, int64_t j, int32_t ci) {
    for (int64_t e = G->off[G->done]; e < G->ne; e++)
        if (G->dst[e] == (int32_t)j) return 1;
    if (G->ne + 1 > G->ecap) {
        int64_t cap = G->ecap ? G->ecap + G->ecap / 2 : 4096;
        int32_t *d = (int32_t *)realloc(G->dst, (size_t)cap * sizeof(int32_t));
        if (!d) return 0;
        G->dst = d;
        int32_t *c = (int32_t *)realloc(G->cmd, (size_t)cap * sizeof(int32_t));
        if (!c) return 0;
        G->cmd = c;
        G->ecap = cap;
    }
    G->dst[G->ne] = (int32_t)j;
    G->cmd[G->ne] = ci;
    G->ne++;
    return 1;
}

int g_init(graph_t *G, const int64_t *init) {
    memcpy(G->vals, init, sizeof(int64_t) * NVA);
    m_pack(G->vals, G->packed);
    int64_t i = g_id(G, G->packed, 1);
    if (i == -2 || G->C->oom) return G->status = G_MEMORY;
    if (G->C->ovf) return G->status = G_OVERFLOW;
    G->off[0] = 0;
    return G->status = G_RUNNING;
}

int g_run(graph_t *G, double seconds) {
    if (G->status != G_RUNNING) return G->status;
    double end = now_s() + seconds;
    ctx_t *C = G->C;
    int64_t vals[NVA];
    while (G->done < G->n) {
        int64_t i = G->done;
        m_unpack(G->st + (size_t)i * NWA, vals);
        G->off[i] = G->ne;
        int r = api_successors(C, vals);
        if (r == 1) return G->status = G_OVERFLOW;
        if (r == 2) return G->status = G_MEMORY;
        int ns = C->nsteps;
        for (int k = 0; k < ns; k++) {
            memcpy(G->vals, C->sst + (size_t)k * NVA, sizeof(int64_t) * NVA);
            m_pack(G->vals, G->packed);
            int64_t j = g_id(G, G->packed, 1);
            if (j == -1) return G->status = G_STATES;
            if (j == -2 || C->oom) return G->status = G_MEMORY;
            if (C->ovf) return G->status = G_OVERFLOW;
            if (j > INT32_MAX - 1) return G->status = G_MEMORY;
            if (!g_edge(G, j, C->ch[C->soff[k]])) return G->status = G_MEMORY;
        }
        if (G->ne == G->off[i] && !g_edge(G, i, -1)) return G->status = G_MEMORY;
        G->done = i + 1;
        G->off[G->done] = G->ne;
        if (!(G->done & 255) && now_s() >= end) return G_SLICE;
    }
    return G->status = G_DONE;
}

/* the predecessor lists (reverse CSR) of the edges found; 0 when out of memory */
int g_finish(graph_t *G) {
    int64_t n = G->n;
    free(G->poff); free(G->psrc);
    G->poff = (int64_t *)calloc((size_t)n + 1, sizeof(int64_t));
    G->psrc = (int32_t *)malloc((size_t)(G->ne ? G->ne : 1) * sizeof(int32_t));
    if (!G->poff || !G->psrc) return 0;
    for (int64_t e = 0; e < G->ne; e++) G->poff[G->dst[e] + 1]++;
    for (int64_t i = 0; i < n; i++) G->poff[i + 1] += G->poff[i];
    int64_t *fill = (int64_t *)malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!fill) return 0;
    memcpy(fill, G->poff, (size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < G->done; i++)
        for (int64_t e = G->off[i]; e < G->off[i + 1]; e++) G->psrc[fill[G->dst[e]]++] = (int32_t)i;
    free(fill);
    return 1;
}

/* 0 states, 1 edges, 2 states expanded, 3 bytes held */
int64_t g_stat(graph_t *G, int which) {
    switch (which) {
    case 0: return G->n;
    case 1: return G->ne;
    case 2: return G->done;
    case 3:
        return G->cap * (int64_t)(NWA * 8 + 8 + G->natoms) + (int64_t)G->tcap * 8 +
               G->ecap * 8 + (G->poff ? (G->n + 1) * 8 + G->ne * 4 : 0);
    default: return 0;
    }
}

int64_t *g_off(graph_t *G) { return G->off; }
int32_t *g_dst(graph_t *G) { return G->dst; }
int32_t *g_cmd(graph_t *G) { return G->cmd; }
int64_t *g_poff(graph_t *G) { return G->poff; }
int32_t *g_psrc(graph_t *G) { return G->psrc; }

/* atom k of every state, one byte per state, into out (n bytes) */
void g_atom_column(graph_t *G, int k, uint8_t *out) {
    for (int64_t i = 0; i < G->n; i++) out[i] = G->atoms[(size_t)i * G->natoms + k];
}

/* the unpacked state of id i */
void g_state(graph_t *G, int64_t i, int64_t *out) { m_unpack(G->st + (size_t)i * NWA, out); }

/* the id of an unpacked state (-1: not in the graph) */
int64_t g_find(graph_t *G, const int64_t *v) {
    uint64_t w[NWA];
    m_pack(v, w);
    int64_t i = g_id(G, w, 0);
    return i < 0 ? -1 : i;
}
