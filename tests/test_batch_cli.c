/* test_batch_cli.c -- `retarget batch` solving locally: every clip of a
 * corpus gets the bytes `retarget solve` writes for it with the same job
 * options (the local batch runs the same recipe, without an argv), the
 * manifest records each clip, and a second run skips what is done; joint
 * positions (.npy with its names, .npz, joint CSV) likewise; a corpus of
 * many clips solved in groups (one `retarget solve --batch` call each),
 * the same bytes as alone, a bad clip in a group failing alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../clients/cli.h"
#include "joints_util.h"
#include "test.h"

static int same_files(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = test_slurp(a, &la), *y = test_slurp(b, &lb);
    int same = x && y && la == lb && !memcmp(x, y, la);
    if (!same) fprintf(stderr, "%s and %s differ\n", a, b);
    free(x);
    free(y);
    return same;
}

/* Lines of file `path` (-1 when it cannot be read). */
static int count_lines(const char *path)
{
    char *m = test_slurp(path, NULL);
    int lines = m ? 0 : -1;
    for (const char *p = m; p && *p; p++) lines += *p == '\n';
    free(m);
    return lines;
}

int main(void)
{
    char dir[] = "/tmp/test_batch_cli_XXXXXX", corpus[128], out[128], ref[128], cmd[1024], a[256], b[256];
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(a, sizeof a, "%s/clips/run_forward.bvh", test_data_dir());
    if (access(a, R_OK)) TEST_SKIP("no shared data");
    snprintf(corpus, sizeof corpus, "%s/corpus", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(ref, sizeof ref, "%s/ref", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/sub && cp %s/clips/run_forward.bvh %s/ && cp %s/clips/jumping_jacks.bvh %s/sub/",
             corpus, test_data_dir(), corpus, test_data_dir(), corpus);
    CHECK_EQ_INT(system(cmd), 0);
    char *bargv[] = {corpus, "--robot", "g1", "--out", out, "--max-lm", "3", "--cg-tol", "0.01", "--threads", "2", "--quiet", NULL};
    CHECK_EQ_INT(cli_batch(12, bargv), 0);
    /* The references: retarget solve with the same options. */
    snprintf(a, sizeof a, "%s/run_forward.bvh", corpus);
    snprintf(b, sizeof b, "%s/sub/jumping_jacks.bvh", corpus);
    char refsub[160];
    snprintf(refsub, sizeof refsub, "%s/sub", ref);
    char *s1[] = {a, "--robot", "g1", "-o", ref, "--max-lm", "3", "--cg-tol", "0.01", "--threads", "2", "--quiet", NULL};
    char *s2[] = {b, "--robot", "g1", "-o", refsub, "--max-lm", "3", "--cg-tol", "0.01", "--threads", "2", "--quiet", NULL};
    CHECK_EQ_INT(cli_solve(12, s1), 0);
    CHECK_EQ_INT(cli_solve(12, s2), 0);
    snprintf(a, sizeof a, "%s/run_forward.csv", out);
    snprintf(b, sizeof b, "%s/run_forward.csv", ref);
    CHECK(same_files(a, b));
    snprintf(a, sizeof a, "%s/sub/jumping_jacks.csv", out);
    snprintf(b, sizeof b, "%s/sub/jumping_jacks.csv", ref);
    CHECK(same_files(a, b));
    /* The manifest: one "done" line per clip; a rerun skips both. */
    snprintf(a, sizeof a, "%s/manifest.jsonl", out);
    char *m = test_slurp(a, NULL);
    CHECK(m && strstr(m, "\"clip\":\"run_forward.bvh\"") && strstr(m, "\"clip\":\"sub/jumping_jacks.bvh\""));
    free(m);
    CHECK_EQ_INT(count_lines(a), 2);
    CHECK_EQ_INT(cli_batch(12, bargv), 0);
    CHECK_EQ_INT(count_lines(a), 2);
    /* Another option value is another input: solved again. */
    char *bargv2[] = {corpus, "--robot", "g1", "--out", out, "--max-lm", "4", "--threads", "2", "--quiet", NULL};
    CHECK_EQ_INT(cli_batch(10, bargv2), 0);
    CHECK_EQ_INT(count_lines(a), 4);
    /* Joint positions (the first 40 frames of run_forward as CSV, .npy
     * with its names beside it, .npz) are sources too, each given the bytes
     * `retarget solve` writes for it; a CSV of another layout (no
     * NAME_x,NAME_y,NAME_z header) is no source without --source-robot. */
    {
        char jdir[160], jout[160], jref[160], jcorpus[160];
        struct kin_clip *c = NULL;
        struct rt_err err;
        snprintf(jdir, sizeof jdir, "%s/jcorpus/j", dir);
        snprintf(jout, sizeof jout, "%s/jout", dir);
        snprintf(jref, sizeof jref, "%s/jref", dir);
        snprintf(cmd, sizeof cmd, "mkdir -p %s && printf 'a,b\\n1,2\\n' > %s/notes.csv", jdir, jdir);
        CHECK_EQ_INT(system(cmd), 0);
        snprintf(a, sizeof a, "%s/clips/run_forward.bvh", test_data_dir());
        CHECK_EQ_INT(kin_bvh_load(a, &c, &err), RT_OK);
        CHECK_EQ_INT(c ? test_write_joint_files(c, 40, jdir, "rf") : 0, 40);
        kin_clip_free(c);
        snprintf(jcorpus, sizeof jcorpus, "%s/jcorpus", dir);
        char *jargv[] = {jcorpus, "--robot", "g1", "--out", jout, "--max-lm", "3", "--threads", "2", "--quiet", NULL};
        CHECK_EQ_INT(cli_batch(10, jargv), 0);
        static const char *const files[] = {"rf.csv", "rf_npy.npy", "rf_npz.npz"};
        for (int k = 0; k < 3; k++) {
            char src[256], name[64];
            snprintf(src, sizeof src, "%s/%s", jdir, files[k]);
            char *sargv[] = {src, "--robot", "g1", "-o", jref, "--max-lm", "3", "--threads", "2", "--quiet", NULL};
            CHECK_EQ_INT(cli_solve(10, sargv), 0);
            snprintf(name, sizeof name, "%.*s", (int)(strlen(files[k]) - 4), files[k]);
            snprintf(a, sizeof a, "%s/j/%s.csv", jout, name);
            snprintf(b, sizeof b, "%s/%s.csv", jref, name);
            CHECK(same_files(a, b));
            snprintf(a, sizeof a, "%s/j/%s.report.json", jout, name);
            CHECK(access(a, R_OK) == 0);
        }
        snprintf(a, sizeof a, "%s/manifest.jsonl", jout);
        CHECK_EQ_INT(count_lines(a), 3);
        m = test_slurp(a, NULL);
        CHECK(m && strstr(m, "\"clip\":\"j/rf_npy.npy\"") && !strstr(m, "notes.csv"));
        free(m);
        /* The names of an .npy are part of its input: changed, solved again. */
        snprintf(cmd, sizeof cmd, "printf '\\n' >> %s/rf_npy.txt", jdir);
        CHECK_EQ_INT(system(cmd), 0);
        CHECK_EQ_INT(cli_batch(10, jargv), 0);
        CHECK_EQ_INT(count_lines(a), 4);
    }
    /* Groups: 17 windows of the G1 reference trajectory (16 in one
     * folder, one below it) and a broken one among them: 18 clips to do,
     * groups of up to two; the bad clip's group is solved again clip by
     * clip, so only it fails. Every window gets the bytes of `retarget
     * solve` on it alone. */
    {
        char gdir[160], gout[160], gref[160], path[256];
        char *ref_text = NULL;
        size_t ref_len = 0;
        snprintf(a, sizeof a, "%s/reference/g1/dance1_subject1.csv", test_data_dir());
        ref_text = test_slurp(a, &ref_len);
        CHECK(ref_text != NULL);
        snprintf(gdir, sizeof gdir, "%s/gcorpus", dir);
        snprintf(gout, sizeof gout, "%s/gout", dir);
        snprintf(gref, sizeof gref, "%s/gref", dir);
        snprintf(cmd, sizeof cmd, "mkdir -p %s/deeper", gdir);
        CHECK_EQ_INT(system(cmd), 0);
        const char *line = ref_text;
        for (int w = 0; w < 17 && ref_text; w++) {
            /* window w: 30 + w rows from row 40 w */
            snprintf(path, sizeof path, "%s/%sw%02d.csv", gdir, w == 16 ? "deeper/" : "", w);
            FILE *f = fopen(path, "wb");
            const char *p = ref_text;
            for (int r = 0; r < 40 * w && p; r++) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
            line = p;
            for (int r = 0; r < 30 + w && p && *p; r++) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
            CHECK(f && line && fwrite(line, 1, (size_t)(p - line), f) == (size_t)(p - line));
            if (f) fclose(f);
        }
        snprintf(path, sizeof path, "%s/w05b.csv", gdir); /* sorts between w05 and w06 */
        FILE *f = fopen(path, "wb");
        CHECK(f && fputs("0,0,0.8,0,0,0,1\n", f) >= 0); /* 7 values, the G1 wants 36 */
        if (f) fclose(f);
        free(ref_text);
        char *gargv[] = {gdir, "--robot", "g1", "--source-robot", "g1", "--out", gout, "--threads", "2", "--quiet", NULL};
        CHECK_EQ_INT(cli_batch(10, gargv), 1); /* one failed */
        snprintf(a, sizeof a, "%s/manifest.jsonl", gout);
        CHECK_EQ_INT(count_lines(a), 18);
        m = test_slurp(a, NULL);
        CHECK(m && strstr(m, "\"clip\":\"w05b.csv\",\"hash\"") && strstr(m, "\"status\":\"failed\"") &&
              strstr(m, "\"clip\":\"deeper/w16.csv\""));
        int failed = 0;
        for (const char *q = m; q && (q = strstr(q, "\"status\":\"failed\"")); q++) failed++;
        CHECK_EQ_INT(failed, 1);
        free(m);
        for (int w = 0; w < 17; w++) {
            char src[256], name[16], sub[200];
            snprintf(name, sizeof name, "w%02d", w);
            snprintf(src, sizeof src, "%s/%s%s.csv", gdir, w == 16 ? "deeper/" : "", name);
            snprintf(sub, sizeof sub, "%s%s", gref, w == 16 ? "/deeper" : "");
            char *sargv[] = {src, "--robot", "g1", "--source-robot", "g1", "-o", sub, "--threads", "2", "--quiet", NULL};
            CHECK_EQ_INT(cli_solve(10, sargv), 0);
            snprintf(a, sizeof a, "%s/%s%s.csv", gout, w == 16 ? "deeper/" : "", name);
            snprintf(b, sizeof b, "%s/%s.csv", sub, name);
            CHECK(same_files(a, b));
        }
        /* The groups' reports say so: some clip was solved beside another. */
        snprintf(a, sizeof a, "%s/w00.report.json", gout);
        m = test_slurp(a, NULL);
        const char *bc = m ? strstr(m, "\"batch_clips\"") : NULL;
        CHECK(bc && strtol(bc + strcspn(bc, ":") + 1, NULL, 10) == 2);
        free(m);
    }
    /* A bad job option is refused with the table's range. */
    char *bad[] = {corpus, "--robot", "g1", "--out", out, "--max-cg", "0", NULL};
    CHECK_EQ_INT(cli_batch(7, bad), 2);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
    return test_report("test_batch_cli");
}
