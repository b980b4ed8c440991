/* ctxagent.context._chunkscan: the per-chunk loop of `textstats.analyse`, compiled.
 *
 * What it computes is defined in Python and stays there: a chunk's terms and figures come
 * from `textstats.chunk_figures` (called once per chunk never seen before), and chunks are
 * cut exactly as `terms.chunks` cuts them (maximal runs of the bytes kept by
 * `terms._KEEP`: ASCII letters, digits, `_`, `.`, `'` and every byte >= 0x80, of the text's
 * UTF-8 with surrogates passed through). This file only replaces the loop over a text's
 * chunks (split, dictionary lookup, sums, query-term counts) that costs ~100 ns a chunk in
 * CPython by one that costs 25-40 ns here, with no Python object made per chunk, and
 * computes `select.sketch` from the same table.
 *
 * Scanner(figures) -> a table of chunks:
 *   figures(chunk: bytes) -> (terms: tuple, n_terms: int, pieces: int, value100: int)
 *   scan(texts: list[str], query: dict[str, int], capacity: int, tag: object = None)
 *     -> list of (n_terms, pieces, value100, tag, found) per text (`textstats.Entry`),
 *        where found is a tuple of (query term, count) for the query terms the text
 *        holds, in order of first appearance, and `tag` is passed through; or None when
 *        the scanner is busy (another thread, or a call made from inside `figures`): the
 *        caller then uses the pure-Python path.
 *     `query` maps each distinct query term to its index 0..n-1. `capacity` bounds the
 *     chunks kept: when it is reached, the older half goes (as `terms.evict_oldest`).
 *   sketch(text: str, k: int, capacity: int) -> frozenset[int] or None when busy: the k
 *     smallest distinct CRC-32s (zlib's) of "a\0b" over the text's adjacent terms a, b
 *     (of the one term when there is one), as `select.sketch` defines it.
 *   clear(); len(scanner): chunks held.
 *
 * The table is an insertion-ordered open-addressing hash table (dense entries plus an
 * index of slots, as CPython's dict), keyed by the chunk's bytes. A cold build reads
 * chunks from all over a table of tens of thousands, so memory reads are what a lookup
 * costs: a slot holds part of the hash beside the entry's index (a probe that misses
 * reads no entry), and an entry holds its key (up to 16 bytes), figures and query state
 * in one cache line. Each entry keeps which query terms its terms are, for the query
 * generation it was last used with; a new query recomputes that lazily from the entry's
 * terms, with no call into Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define INLINE_KEY 16 /* chunks up to this many bytes are kept inside their entry */

/* What a lookup reads, in one 64-byte cache line: the key, the figures, the query state. */
typedef struct {
    uint64_t hash;
    int32_t len;       /* bytes of the chunk */
    int32_t n_hold;    /* query terms among its terms, repeats kept (for generation `gen`) */
    int64_t n_terms, pieces, value100;
    uint64_t gen;      /* the query generation `n_hold` and `Cold.hold` belong to (0: none yet) */
    union {
        char bytes[INLINE_KEY]; /* len <= INLINE_KEY */
        PyObject *chunk;        /* bytes (owned), len > INLINE_KEY */
    } key;
} Entry;

_Static_assert(sizeof(Entry) == 64, "an entry is one cache line");

/* What a lookup reads only for a new query or a chunk holding query terms. */
typedef struct {
    PyObject *terms;   /* tuple (owned) */
    Py_ssize_t *hold;  /* indices of the query terms among `terms` (PyMem) */
} Cold;

typedef struct {
    PyObject_HEAD
    PyObject *figures;       /* callable(chunk) -> (terms, n_terms, pieces, value100) */
    Entry *entries;          /* dense, oldest first, 64-byte aligned (inside entries_block) */
    void *entries_block;
    Cold *cold;              /* parallel to entries */
    Py_ssize_t n_entries, cap_entries;
    uint64_t *slots;         /* (hash >> 32) << 32 | (entry index + 1); 0 for an empty slot; a power of two */
    Py_ssize_t n_slots;
    PyObject *query;         /* the current generation's query (a dict copy) */
    uint64_t gen;
    int busy;
} Scanner;

/* Chunks looked up together (see scan_text), and a chunk's place in its text. */
#define BLOCK 64
typedef struct {
    Py_ssize_t start, len;
    uint64_t hash;
} Span;

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)0)
#endif

/* Bytes kept in chunks (terms._KEEP): letters, digits, `_`, `.`, `'`, and >= 0x80. */
static unsigned char KEEP[256];

static void
init_keep(void)
{
    for (int b = 0; b < 256; b++) {
        KEEP[b] = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_' || b == '.'
                  || b == '\'' || b >= 0x80;
    }
}

static uint64_t
hash_bytes(const unsigned char *p, Py_ssize_t n)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
    for (Py_ssize_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static const char *
key_of(const Entry *e)
{
    return e->len <= INLINE_KEY ? e->key.bytes : PyBytes_AS_STRING(e->key.chunk);
}

static void
entry_release(Entry *e, Cold *c)
{
    if (e->len > INLINE_KEY) {
        Py_CLEAR(e->key.chunk);
    }
    Py_CLEAR(c->terms);
    PyMem_Free(c->hold);
    c->hold = NULL;
}

static uint64_t
slot_of(uint64_t hash, Py_ssize_t k)
{
    return (hash >> 32) << 32 | (uint64_t)(k + 1);
}

/* Fill `slots` (n_slots of them, all 0) with the entries' indices. */
static void
index_entries(Scanner *self, uint64_t *slots, Py_ssize_t n_slots)
{
    size_t mask = (size_t)n_slots - 1;
    for (Py_ssize_t k = 0; k < self->n_entries; k++) {
        uint64_t h = self->entries[k].hash;
        size_t i = (size_t)h & mask;
        while (slots[i] != 0) {
            i = (i + 1) & mask;
        }
        slots[i] = slot_of(h, k);
    }
}

static int
rebuild_slots(Scanner *self, Py_ssize_t n_slots)
{
    uint64_t *slots = PyMem_Calloc(n_slots, sizeof(uint64_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    index_entries(self, slots, n_slots);
    PyMem_Free(self->slots);
    self->slots = slots;
    self->n_slots = n_slots;
    return 0;
}

/* Keep the `keep` newest entries (terms.evict_oldest). The slots are re-indexed in place:
 * nothing is allocated, so this cannot fail and leave slots naming entries that moved. */
static void
evict_oldest(Scanner *self, Py_ssize_t keep)
{
    Py_ssize_t drop = self->n_entries - (keep < 0 ? 0 : keep);
    if (drop <= 0) {
        return;
    }
    for (Py_ssize_t k = 0; k < drop; k++) {
        entry_release(&self->entries[k], &self->cold[k]);
    }
    Py_ssize_t left = self->n_entries - drop;
    memmove(self->entries, self->entries + drop, left * sizeof(Entry));
    memmove(self->cold, self->cold + drop, left * sizeof(Cold));
    self->n_entries = left;
    memset(self->slots, 0, self->n_slots * sizeof(uint64_t));
    index_entries(self, self->slots, self->n_slots);
}

/* Room for one more entry: the arrays doubled when full, entries kept 64-byte aligned. */
static int
grow(Scanner *self)
{
    if (self->n_entries < self->cap_entries) {
        return 0;
    }
    Py_ssize_t cap = self->cap_entries ? 2 * self->cap_entries : 256;
    void *block = PyMem_Malloc(cap * sizeof(Entry) + 63);
    Cold *cold = PyMem_Realloc(self->cold, cap * sizeof(Cold));
    if (block == NULL || cold == NULL) {
        PyMem_Free(block);
        if (cold != NULL) {
            self->cold = cold;
        }
        PyErr_NoMemory();
        return -1;
    }
    Entry *entries = (Entry *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    if (self->n_entries) {
        memcpy(entries, self->entries, self->n_entries * sizeof(Entry));
    }
    PyMem_Free(self->entries_block);
    self->entries_block = block;
    self->entries = entries;
    self->cold = cold;
    self->cap_entries = cap;
    return 0;
}

static Py_ssize_t
find(Scanner *self, const unsigned char *p, Py_ssize_t n, uint64_t h)
{
    size_t mask = (size_t)self->n_slots - 1;
    uint64_t tag = h >> 32;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint64_t slot = self->slots[i];
        if (slot == 0) {
            return -1;
        }
        if (slot >> 32 == tag) {
            Py_ssize_t k = (Py_ssize_t)(slot & 0xffffffffu) - 1;
            Entry *e = &self->entries[k];
            if (e->hash == h && e->len == n && memcmp(key_of(e), p, n) == 0) {
                return k;
            }
        }
    }
}

static int
as_int64(PyObject *value, int64_t *out)
{
    if (!PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "figures(chunk) must return (tuple, int, int, int)");
        return -1;
    }
    long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* Learn a chunk never seen: ask `figures`, then append it. Returns its index, -1 on error. */
static Py_ssize_t
learn(Scanner *self, const unsigned char *p, Py_ssize_t n, uint64_t h, Py_ssize_t capacity)
{
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a chunk of over 2 GB");
        return -1;
    }
    PyObject *chunk = PyBytes_FromStringAndSize((const char *)p, n);
    if (chunk == NULL) {
        return -1;
    }
    PyObject *figures = Py_NewRef(self->figures); /* alive until it returns, even if it calls Scanner.__init__ */
    PyObject *result = PyObject_CallOneArg(figures, chunk);
    Py_DECREF(figures);
    Entry e = {.hash = h, .len = (int32_t)n};
    Cold c = {NULL, NULL};
    if (result == NULL) {
        goto fail;
    }
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 4 || !PyTuple_Check(PyTuple_GET_ITEM(result, 0))) {
        PyErr_SetString(PyExc_TypeError, "figures(chunk) must return (tuple, int, int, int)");
        goto fail;
    }
    if (as_int64(PyTuple_GET_ITEM(result, 1), &e.n_terms) < 0 || as_int64(PyTuple_GET_ITEM(result, 2), &e.pieces) < 0
        || as_int64(PyTuple_GET_ITEM(result, 3), &e.value100) < 0) {
        goto fail;
    }
    c.terms = Py_NewRef(PyTuple_GET_ITEM(result, 0));
    Py_CLEAR(result);
    Py_ssize_t bound = capacity < INT32_MAX ? capacity : INT32_MAX; /* a slot holds the index in 32 bits */
    if (self->n_entries >= bound) {
        evict_oldest(self, bound / 2);
    }
    if (grow(self) < 0) {
        goto fail;
    }
    if (2 * (self->n_entries + 1) > self->n_slots) {
        Py_ssize_t n_slots = self->n_slots ? self->n_slots : 512;
        while (2 * (self->n_entries + 1) > n_slots) {
            n_slots *= 2;
        }
        if (rebuild_slots(self, n_slots) < 0) {
            goto fail;
        }
    }
    if (n <= INLINE_KEY) {
        memcpy(e.key.bytes, p, n);
        Py_CLEAR(chunk);
    }
    else {
        e.key.chunk = chunk; /* the entry owns it now */
        chunk = NULL;
    }
    Py_ssize_t k = self->n_entries++;
    self->entries[k] = e;
    self->cold[k] = c;
    size_t mask = (size_t)self->n_slots - 1;
    size_t i = (size_t)h & mask;
    while (self->slots[i] != 0) {
        i = (i + 1) & mask;
    }
    self->slots[i] = slot_of(h, k);
    return k;
fail:
    Py_XDECREF(result);
    Py_XDECREF(chunk);
    Py_XDECREF(c.terms);
    return -1;
}

/* The indices of the query terms among the entry's terms, for the current generation. */
static int
compute_hold(Scanner *self, Entry *e, Cold *c)
{
    Py_ssize_t n = PyTuple_GET_SIZE(c->terms), found = 0;
    Py_ssize_t *hold = NULL;
    for (Py_ssize_t t = 0; t < n; t++) {
        PyObject *index = PyDict_GetItemWithError(self->query, PyTuple_GET_ITEM(c->terms, t));
        if (index == NULL) {
            if (PyErr_Occurred()) {
                PyMem_Free(hold);
                return -1;
            }
            continue;
        }
        if (hold == NULL && (hold = PyMem_Malloc((n - t) * sizeof(Py_ssize_t))) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        hold[found++] = PyLong_AsSsize_t(index); /* checked when the query was taken */
    }
    if (found > INT32_MAX) {
        PyMem_Free(hold);
        PyErr_SetString(PyExc_OverflowError, "a chunk holding over 2**31 query terms");
        return -1;
    }
    PyMem_Free(c->hold);
    c->hold = hold;
    e->n_hold = (int32_t)found;
    e->gen = self->gen;
    return 0;
}

/* Take `query` (term -> index 0..n-1) as the current generation, unless it equals it.
 * Fills `terms` (index -> term, borrowed from self->query). */
static int
take_query(Scanner *self, PyObject *query, PyObject **terms, Py_ssize_t n)
{
    int same = self->query != NULL ? PyObject_RichCompareBool(query, self->query, Py_EQ) : 0;
    if (same < 0) {
        return -1;
    }
    if (!same) {
        PyObject *copy = PyDict_Copy(query);
        if (copy == NULL) {
            return -1;
        }
        Py_XSETREF(self->query, copy);
        self->gen++;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        terms[i] = NULL;
    }
    Py_ssize_t pos = 0;
    PyObject *term, *index;
    while (PyDict_Next(self->query, &pos, &term, &index)) {
        Py_ssize_t i = PyLong_Check(index) ? PyLong_AsSsize_t(index) : -1;
        if (i < 0 || i >= n || terms[i] != NULL) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "query must map each term to a distinct index 0..len(query)-1");
            Py_CLEAR(self->query); /* never keep a bad query as the current generation */
            return -1;
        }
        terms[i] = term;
    }
    return 0;
}

/* (n_terms, pieces, value100, tag, found); steals `found`. */
static PyObject *
entry_tuple(int64_t n_terms, int64_t pieces, int64_t value100, PyObject *tag, PyObject *found)
{
    PyObject *result = PyTuple_New(5);
    if (result == NULL) {
        Py_DECREF(found);
        return NULL;
    }
    int64_t figures[3] = {n_terms, pieces, value100};
    for (int i = 0; i < 3; i++) {
        PyObject *value = PyLong_FromLongLong(figures[i]);
        if (value == NULL) {
            Py_DECREF(result); /* the unset items are NULL: safe to free */
            Py_DECREF(found);
            return NULL;
        }
        PyTuple_SET_ITEM(result, i, value);
    }
    PyTuple_SET_ITEM(result, 3, Py_NewRef(tag));
    PyTuple_SET_ITEM(result, 4, found);
    return result;
}

/* The UTF-8 bytes of `text` (surrogates passed through, as `terms.chunks` encodes):
 * the string's own buffer when it is ASCII, else a new bytes object left in *encoded. */
static int
text_bytes(PyObject *text, const unsigned char **data, Py_ssize_t *size, PyObject **encoded)
{
    *encoded = NULL;
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "texts must be str, not %.100s", Py_TYPE(text)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return -1;
    }
#endif
    if (PyUnicode_IS_ASCII(text)) {
        *data = PyUnicode_1BYTE_DATA(text);
        *size = PyUnicode_GET_LENGTH(text);
        return 0;
    }
    *encoded = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
    if (*encoded == NULL) {
        return -1;
    }
    *data = (const unsigned char *)PyBytes_AS_STRING(*encoded);
    *size = PyBytes_GET_SIZE(*encoded);
    return 0;
}

/* Called for each chunk of a text in order, with its entry's index; -1 stops the walk. */
typedef int (*visit_fn)(Scanner *self, Py_ssize_t k, void *ctx);

/* Each chunk of `data`, looked up (or learnt) and handed to `visit`. Chunks go in blocks:
 * cut and hash them, and ask the memory for their slots and then their entries before
 * reading any, so that the cache misses of a cold table overlap instead of coming one
 * after another. The lookups that follow are the ordinary ones (a prefetch is only a
 * hint, right or stale). */
static int
walk_chunks(Scanner *self, const unsigned char *data, Py_ssize_t size, Py_ssize_t capacity, visit_fn visit, void *ctx)
{
    Span spans[BLOCK];
    for (Py_ssize_t i = 0; i < size;) {
        int n_spans = 0;
        size_t mask = (size_t)self->n_slots - 1;
        while (n_spans < BLOCK && i < size) {
            if (!KEEP[data[i]]) {
                i++;
                continue;
            }
            Py_ssize_t start = i;
            while (i < size && KEEP[data[i]]) {
                i++;
            }
            uint64_t h = hash_bytes(data + start, i - start);
            spans[n_spans++] = (Span){start, i - start, h};
            if (self->n_slots) {
                PREFETCH(&self->slots[h & mask]);
            }
        }
        for (int j = 0; self->n_slots && j < n_spans; j++) {
            uint64_t slot = self->slots[spans[j].hash & mask];
            if (slot != 0) {
                PREFETCH(&self->entries[(slot & 0xffffffffu) - 1]);
            }
        }
        for (int j = 0; j < n_spans; j++) {
            const unsigned char *chunk = data + spans[j].start;
            Py_ssize_t k = self->n_slots ? find(self, chunk, spans[j].len, spans[j].hash) : -1;
            if (k < 0 && (k = learn(self, chunk, spans[j].len, spans[j].hash, capacity)) < 0) {
                return -1;
            }
            if (visit(self, k, ctx) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* What `scan` adds up over a text's chunks. */
typedef struct {
    int64_t n_terms, pieces, value100;
    int64_t *counts;      /* per query term index */
    Py_ssize_t *order;    /* query term indices in order of first appearance */
    Py_ssize_t n_order;
} Figures;

static int
add_figures(Scanner *self, Py_ssize_t k, void *ctx)
{
    Figures *f = ctx;
    Entry *e = &self->entries[k];
    f->n_terms += e->n_terms;
    f->pieces += e->pieces;
    f->value100 += e->value100;
    if (e->gen != self->gen && compute_hold(self, e, &self->cold[k]) < 0) {
        return -1;
    }
    if (e->n_hold) {
        const Py_ssize_t *hold = self->cold[k].hold;
        for (int32_t m = 0; m < e->n_hold; m++) {
            if (f->counts[hold[m]]++ == 0) {
                f->order[f->n_order++] = hold[m];
            }
        }
    }
    return 0;
}

/* One text's figures and found query terms, as the tuple `scan` returns for it. */
static PyObject *
scan_text(Scanner *self, PyObject *text, Py_ssize_t capacity, PyObject *tag, PyObject **terms, int64_t *counts,
          Py_ssize_t *order)
{
    PyObject *encoded, *result = NULL;
    const unsigned char *data;
    Py_ssize_t size;
    if (text_bytes(text, &data, &size, &encoded) < 0) {
        return NULL;
    }
    Figures f = {0, 0, 0, counts, order, 0};
    if (walk_chunks(self, data, size, capacity, add_figures, &f) < 0) {
        goto done;
    }
    PyObject *found = PyTuple_New(f.n_order);
    if (found == NULL) {
        goto done;
    }
    for (Py_ssize_t j = 0; j < f.n_order; j++) {
        PyObject *pair = PyTuple_New(2), *count = PyLong_FromLongLong(counts[order[j]]);
        if (pair == NULL || count == NULL) {
            Py_XDECREF(pair);
            Py_XDECREF(count);
            Py_DECREF(found);
            goto done;
        }
        PyTuple_SET_ITEM(pair, 0, Py_NewRef(terms[order[j]]));
        PyTuple_SET_ITEM(pair, 1, count);
        PyTuple_SET_ITEM(found, j, pair);
    }
    result = entry_tuple(f.n_terms, f.pieces, f.value100, tag, found);
done:
    for (Py_ssize_t j = 0; j < f.n_order; j++) {
        counts[order[j]] = 0;
    }
    Py_XDECREF(encoded);
    return result;
}

/* CRC-32 as zlib computes it (reflected polynomial 0xEDB88320): crc32_update(crc, b) is
 * zlib.crc32(b, crc), so crc32_update(crc32_update(0, a), b) is the CRC-32 of a then b. */
static uint32_t CRC_TABLE[256];

static void
init_crc(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        CRC_TABLE[n] = c;
    }
}

static uint32_t
crc32_update(uint32_t crc, const unsigned char *p, Py_ssize_t n)
{
    crc = ~crc;
    for (Py_ssize_t i = 0; i < n; i++) {
        crc = CRC_TABLE[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

/* What `sketch` gathers over a text's terms: the CRC-32 of each term bigram "a\0b". */
typedef struct {
    uint32_t *hashes;
    Py_ssize_t n_hashes, cap;
    Py_ssize_t n_terms;
    uint32_t head;   /* CRC-32 of the previous term and "\0" */
    uint32_t first;  /* CRC-32 of the first term (the shingle of a one-term text) */
} Shingles;

static int
add_shingles(Scanner *self, Py_ssize_t k, void *ctx)
{
    Shingles *sh = ctx;
    PyObject *terms = self->cold[k].terms;
    for (Py_ssize_t t = 0; t < PyTuple_GET_SIZE(terms); t++) {
        Py_ssize_t n;
        const char *utf8 = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(terms, t), &n);
        if (utf8 == NULL) {
            return -1;
        }
        const unsigned char *bytes = (const unsigned char *)utf8;
        if (sh->n_terms++ == 0) {
            sh->first = crc32_update(0, bytes, n);
        }
        else {
            if (sh->n_hashes == sh->cap) {
                Py_ssize_t cap = sh->cap ? 2 * sh->cap : 256;
                uint32_t *grown = PyMem_Realloc(sh->hashes, cap * sizeof(uint32_t));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    return -1;
                }
                sh->hashes = grown;
                sh->cap = cap;
            }
            sh->hashes[sh->n_hashes++] = crc32_update(sh->head, bytes, n);
        }
        sh->head = crc32_update(crc32_update(0, bytes, n), (const unsigned char *)"", 1);
    }
    return 0;
}

static int
compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* frozenset of the `k` smallest distinct values among `values` (sorted in place). */
static PyObject *
bottom_k(uint32_t *values, Py_ssize_t n, Py_ssize_t k)
{
    if (n > 1) {
        qsort(values, (size_t)n, sizeof(uint32_t), compare_u32);
    }
    PyObject *out = PyFrozenSet_New(NULL);
    Py_ssize_t taken = 0;
    for (Py_ssize_t i = 0; out != NULL && i < n && taken < k; i++) {
        if (i > 0 && values[i] == values[i - 1]) {
            continue;
        }
        PyObject *value = PyLong_FromUnsignedLong(values[i]);
        if (value == NULL || PySet_Add(out, value) < 0) {
            Py_CLEAR(out);
        }
        Py_XDECREF(value);
        taken++;
    }
    return out;
}

static PyObject *
Scanner_scan(Scanner *self, PyObject *args)
{
    PyObject *texts, *query, *tag = Py_None;
    Py_ssize_t capacity;
    if (!PyArg_ParseTuple(args, "OO!n|O:scan", &texts, &PyDict_Type, &query, &capacity, &tag)) {
        return NULL;
    }
    if (self->figures == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner.__init__ was not called");
        return NULL;
    }
    PyObject *seq = PySequence_Tuple(texts); /* a copy: no other thread can change it under us */
    if (seq == NULL) {
        return NULL;
    }
    if (self->busy) { /* tested after the copy, which can run Python code (an iterator) and so let other threads in */
        Py_DECREF(seq);
        Py_RETURN_NONE;
    }
    self->busy = 1;
    Py_ssize_t n_query = PyDict_GET_SIZE(query), n = PyTuple_GET_SIZE(seq);
    PyObject **terms = PyMem_Malloc((n_query + 1) * sizeof(PyObject *));
    int64_t *counts = PyMem_Calloc(n_query + 1, sizeof(int64_t));
    Py_ssize_t *order = PyMem_Malloc((n_query + 1) * sizeof(Py_ssize_t));
    PyObject *out = NULL;
    if (terms == NULL || counts == NULL || order == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (take_query(self, query, terms, n_query) < 0 || (out = PyList_New(n)) == NULL) {
        goto done;
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        PyObject *item = scan_text(self, PyTuple_GET_ITEM(seq, t), capacity, tag, terms, counts, order);
        if (item == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, t, item);
    }
done:
    self->busy = 0;
    PyMem_Free(terms);
    PyMem_Free(counts);
    PyMem_Free(order);
    Py_DECREF(seq);
    return out;
}

static PyObject *
Scanner_sketch(Scanner *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t k, capacity;
    if (!PyArg_ParseTuple(args, "Unn:sketch", &text, &k, &capacity)) {
        return NULL;
    }
    if (self->figures == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner.__init__ was not called");
        return NULL;
    }
    PyObject *encoded, *out = NULL;
    const unsigned char *data;
    Py_ssize_t size;
    if (text_bytes(text, &data, &size, &encoded) < 0) {
        return NULL;
    }
    if (self->busy) { /* tested with no Python code run between the test and the set */
        Py_XDECREF(encoded);
        Py_RETURN_NONE;
    }
    self->busy = 1;
    Shingles sh = {NULL, 0, 0, 0, 0, 0};
    if (walk_chunks(self, data, size, capacity, add_shingles, &sh) == 0) {
        if (sh.n_terms == 1) {
            out = bottom_k(&sh.first, 1, k);
        }
        else {
            out = bottom_k(sh.hashes, sh.n_hashes, k);
        }
    }
    self->busy = 0;
    PyMem_Free(sh.hashes);
    Py_XDECREF(encoded);
    return out;
}

static void
clear_entries(Scanner *self)
{
    for (Py_ssize_t k = 0; k < self->n_entries; k++) {
        entry_release(&self->entries[k], &self->cold[k]);
    }
    self->n_entries = 0;
    for (Py_ssize_t i = 0; i < self->n_slots; i++) {
        self->slots[i] = 0;
    }
}

static PyObject *
Scanner_clear(Scanner *self, PyObject *Py_UNUSED(ignored))
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the scanner is busy");
        return NULL;
    }
    self->busy = 1; /* releasing terms can run Python code (a __del__), which may call scan or clear */
    clear_entries(self);
    Py_CLEAR(self->query);
    self->busy = 0;
    Py_RETURN_NONE;
}

static Py_ssize_t
Scanner_len(Scanner *self)
{
    return self->n_entries;
}

static int
Scanner_init(Scanner *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"figures", NULL};
    PyObject *figures;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Scanner", kwlist, &figures)) {
        return -1;
    }
    if (!PyCallable_Check(figures)) {
        PyErr_SetString(PyExc_TypeError, "figures must be callable");
        return -1;
    }
    Py_XSETREF(self->figures, Py_NewRef(figures));
    return 0;
}

/* The collector's view: `figures`, the query and the terms may lead back to the scanner
 * (a closure over it), so the scanner takes part in the garbage collector. */
static int
Scanner_traverse(Scanner *self, visitproc visit, void *arg)
{
    Py_VISIT(self->figures);
    Py_VISIT(self->query);
    for (Py_ssize_t k = 0; k < self->n_entries; k++) {
        Py_VISIT(self->cold[k].terms);
    }
    return 0;
}

static int
Scanner_tp_clear(Scanner *self)
{
    if (self->busy) { /* never while a scan runs (an unreachable scanner runs none) */
        return 0;
    }
    self->busy = 1;
    clear_entries(self);
    Py_CLEAR(self->query);
    self->busy = 0;
    Py_CLEAR(self->figures);
    return 0;
}

static void
Scanner_dealloc(Scanner *self)
{
    PyObject_GC_UnTrack(self);
    clear_entries(self);
    PyMem_Free(self->entries_block);
    PyMem_Free(self->cold);
    PyMem_Free(self->slots);
    Py_CLEAR(self->figures);
    Py_CLEAR(self->query);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Scanner_methods[] = {
    {"scan", (PyCFunction)Scanner_scan, METH_VARARGS,
     "scan(texts, query, capacity, tag=None) -> [(n_terms, pieces, value100, tag, found)] or None when busy"},
    {"sketch", (PyCFunction)Scanner_sketch, METH_VARARGS,
     "sketch(text, k, capacity) -> frozenset of the k smallest CRC-32s of the text's term bigrams, or None when busy"},
    {"clear", (PyCFunction)Scanner_clear, METH_NOARGS, "Forget every chunk and the query."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Scanner_as_sequence = {
    .sq_length = (lenfunc)Scanner_len,
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ctxagent.context._chunkscan.Scanner",
    .tp_doc = "A table of chunks and their figures; see the module docstring.",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_traverse = (traverseproc)Scanner_traverse,
    .tp_clear = (inquiry)Scanner_tp_clear,
    .tp_free = PyObject_GC_Del,
    .tp_methods = Scanner_methods,
    .tp_as_sequence = &Scanner_as_sequence,
};

static struct PyModuleDef chunkscan_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ctxagent.context._chunkscan",
    .m_doc = "The per-chunk loop of ctxagent.context.textstats, compiled (optional; a pure-Python path does the same).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__chunkscan(void)
{
    init_keep();
    init_crc();
    if (PyType_Ready(&ScannerType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&chunkscan_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
