/* bench_corpus.c -- the corpus of `make bench-e2e` (bench/e2e.sh): N windows
 * of one robot trajectory CSV, each written as its own CSV file.
 *
 * A window is the consecutive rows [start, start + len) of the source, len
 * uniform in [MIN_LEN, R] and start uniform in [0, R - len], R the number of
 * data rows. The draws come from splitmix64 seeded with SEED and integer
 * rejection sampling, so every machine builds the same corpus from the same
 * source and seed. Rows are copied byte for byte; a header row (a first
 * line that does not start like a number) is kept at the top of every
 * window. The real G1 reference trajectory has no header.
 *
 * Usage: bench_corpus SRC.csv OUTDIR N [SEED] [MIN_LEN]
 * Writes OUTDIR/wNNNN.csv (N windows) and OUTDIR/windows.txt (one line per
 * window: name start len); prints the totals on stdout. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64 (Steele, Lea, Flood 2014): the whole state is one counter. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, n), n >= 1, without modulo bias: draws at or
 * above the largest multiple of n are rejected. */
static uint64_t uniform_below(uint64_t *s, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, r;
    do r = splitmix64(s);
    while (r >= limit);
    return r % n;
}

static int arg_u64(const char *what, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "bench_corpus: %s: expected an integer in [%llu, %llu], got '%.20s'\n", what,
                (unsigned long long)lo, (unsigned long long)hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int looks_numeric(const char *line)
{
    return (line[0] >= '0' && line[0] <= '9') || line[0] == '-' || line[0] == '+' || line[0] == '.';
}

int main(int argc, char **argv)
{
    uint64_t n_win, seed = 11, min_len = 300;
    char *text = NULL, path[4096];
    const char **row = NULL; /* row[i]: start of data row i; row[n_rows]: end of text */
    size_t len = 0, cap = 0, n_rows = 0;
    const char *header = NULL;
    size_t header_len = 0;
    unsigned long long total = 0;
    int rc = 1;
    FILE *list = NULL;
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: bench_corpus SRC.csv OUTDIR N [SEED] [MIN_LEN]\n");
        return 2;
    }
    if (arg_u64("N", argv[3], 1, 100000, &n_win) ||
        (argc > 4 && arg_u64("SEED", argv[4], 0, UINT64_MAX, &seed)) ||
        (argc > 5 && arg_u64("MIN_LEN", argv[5], 1, 100000000, &min_len)))
        return 2;
    const uint64_t seed0 = seed;

    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "bench_corpus: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    for (;;) {
        if (len + 65536 + 2 > cap) {
            char *t = realloc(text, cap = 2 * cap + 65536 + 2);
            if (!t) goto oom;
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len - 2, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        fprintf(stderr, "bench_corpus: %s: read error\n", argv[1]);
        fclose(f);
        goto done;
    }
    fclose(f);
    if (len && text[len - 1] != '\n') text[len++] = '\n'; /* every row ends in a newline */
    text[len] = 0;

    /* Split into lines; the first is a header when it is not a number. */
    {
        size_t n_lines = 0;
        for (size_t i = 0; i < len; i++) n_lines += text[i] == '\n';
        if (!(row = malloc((n_lines + 1) * sizeof *row))) goto oom;
        const char *p = text, *end = text + len;
        if (p < end && !looks_numeric(p)) {
            header = p;
            p = memchr(p, '\n', (size_t)(end - p)) + 1;
            header_len = (size_t)(p - header);
        }
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (nl > p && !(nl == p + 1 && p[0] == '\r')) row[n_rows++] = p; /* blank lines skipped */
            p = nl + 1;
        }
        row[n_rows] = end;
    }
    if (n_rows < min_len) {
        fprintf(stderr, "bench_corpus: %s: %zu rows, fewer than the shortest window (%llu)\n", argv[1],
                n_rows, (unsigned long long)min_len);
        goto done;
    }

    snprintf(path, sizeof path, "%s/windows.txt", argv[2]);
    if (!(list = fopen(path, "w"))) {
        fprintf(stderr, "bench_corpus: %s: %s\n", path, strerror(errno));
        goto done;
    }
    for (uint64_t w = 0; w < n_win; w++) {
        uint64_t wlen = min_len + uniform_below(&seed, n_rows - min_len + 1);
        uint64_t start = uniform_below(&seed, n_rows - wlen + 1);
        char name[32];
        snprintf(name, sizeof name, "w%04llu", (unsigned long long)w);
        snprintf(path, sizeof path, "%s/%s.csv", argv[2], name);
        FILE *o = fopen(path, "wb");
        if (!o) {
            fprintf(stderr, "bench_corpus: %s: %s\n", path, strerror(errno));
            goto done;
        }
        size_t bytes = (size_t)(row[start + wlen] - row[start]);
        int bad = (header && fwrite(header, 1, header_len, o) != header_len) ||
                  fwrite(row[start], 1, bytes, o) != bytes;
        if (fclose(o) || bad) {
            fprintf(stderr, "bench_corpus: %s: write failed\n", path);
            goto done;
        }
        fprintf(list, "%s %llu %llu\n", name, (unsigned long long)start, (unsigned long long)wlen);
        total += wlen;
    }
    if (fclose(list)) {
        list = NULL;
        fprintf(stderr, "bench_corpus: %s/windows.txt: write failed\n", argv[2]);
        goto done;
    }
    list = NULL;
    printf("corpus: %llu windows, %llu frames, of %s (%zu rows, %s), seed %llu, lengths %llu..%zu\n",
           (unsigned long long)n_win, total, argv[1], n_rows, header ? "header kept" : "no header",
           (unsigned long long)seed0, (unsigned long long)min_len, n_rows);
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "bench_corpus: out of memory\n");
done:
    if (list) fclose(list);
    free(row);
    free(text);
    return rc;
}
