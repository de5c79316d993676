/* options.h -- the one table of options. Every option a user can give --
 * the job options (solver budgets, linear solver, a trajectory's frame
 * rate), which go in a daemon job's "options" object, a profile's "solver"
 * object and on the command line alike, and the flags of each command-line
 * verb and of retargetd -- has one row here with its name, type, range,
 * default and help. The CLI's parsers, the JSON reader, `--help` of every
 * verb, docs/api.md's option list and the solver's own checks (the ranges
 * are solver.h's SOLVER_MAX_* limits) read it, so an option has one range
 * everywhere.
 *
 * Memory: rtg_job_options_json() returns malloc'd text the caller frees. */
#ifndef RT_RTG_OPTIONS_H
#define RT_RTG_OPTIONS_H

#include <stdio.h>

#include "../base/status.h"
#include "../solver/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a row applies (a bit set). */
enum rtg_scope {
    RTG_SCOPE_JOB = 1 << 0,     /* a job option: JSON "options", profile "solver", CLI flag */
    RTG_SCOPE_SOLVE = 1 << 1,   /* retarget solve */
    RTG_SCOPE_SUBMIT = 1 << 2,  /* retarget submit */
    RTG_SCOPE_BATCH = 1 << 3,   /* retarget batch */
    RTG_SCOPE_CLIENT = 1 << 4,  /* retarget status|wait|fetch|cancel|list */
    RTG_SCOPE_RENDER = 1 << 5,  /* retarget render */
    RTG_SCOPE_DAEMON = 1 << 6,  /* retargetd */
    RTG_SCOPE_TOKEN = 1 << 7    /* retargetd token add|list|revoke */
};

enum rtg_opt_kind {
    RTG_OPT_FLAG = 0,   /* no value */
    RTG_OPT_INT = 1,    /* integer in [lo, hi] */
    RTG_OPT_REAL = 2,   /* real in lo..hi, ends open or closed */
    RTG_OPT_CHOICE = 3, /* one of `choices` */
    RTG_OPT_TEXT = 4    /* any text (a name, a path, an address) */
};

/* The job options, in the order of their rows (and of the canonical JSON). */
enum rtg_job_opt {
    RTG_JOB_MAX_LM = 0,
    RTG_JOB_MAX_CG,
    RTG_JOB_INIT_ITERS,
    RTG_JOB_CG_TOL,
    RTG_JOB_LINEAR,
    RTG_JOB_FPS,
    RTG_JOB_COLLIDE_WEIGHT,
    RTG_JOB_COLLIDE_MARGIN,
    RTG_JOB_VELOCITY_WEIGHT,
    RTG_JOB_GROUND_WEIGHT,
    RTG_JOB_OPT_COUNT
};

struct rtg_option {
    const char *key;   /* JSON key of a job option ("max_lm_iters"), else NULL */
    const char *flag;  /* command-line flag ("--max-lm"), or NULL (JSON only) */
    const char *arg;   /* the value's name in usage ("N"), NULL for a flag */
    int kind;          /* enum rtg_opt_kind */
    double lo, hi;     /* INT and REAL */
    int lo_open, hi_open; /* REAL: 1 when the end is excluded */
    const char *const *choices; /* CHOICE: NULL-terminated */
    unsigned scope;    /* enum rtg_scope bits */
    const char *def;   /* the default, as said in help ("12", "auto"), or NULL */
    const char *help;  /* one line */
};

/* The table, terminated by a row with flag == NULL and key == NULL. */
const struct rtg_option *rtg_options(void);

/* The row of job option `which`. */
const struct rtg_option *rtg_job_option(enum rtg_job_opt which);

/* The row for flag `flag` that applies to `scope`, or NULL. */
const struct rtg_option *rtg_option_by_flag(const char *flag, unsigned scope);

/* The job options a user set: bit i of `set` says option i was given. */
struct rtg_job_options {
    unsigned set;
    int max_lm_iters, max_cg_iters, init_iters, linear; /* linear: enum solver_linear */
    double cg_tol, fps;
    double collide_weight, collide_margin; /* the self-collision term (retarget/collide.h) */
    double velocity_weight;                /* the velocity limits (retarget/targets.h) */
    double ground_weight;                  /* capsules above the ground (retarget/collide.h) */
};

/* Checks and stores `text` as the value of job option `which`; `where`
 * names it in errors ("--max-lm", "query.max_lm_iters"). RT_EINVAL with
 * "expected an integer in [0, 10000], got 'x'" style messages. */
enum rt_status rtg_job_options_set_text(struct rtg_job_options *o, enum rtg_job_opt which,
                                        const char *text, const char *where, struct rt_err *err);

/* Reads a JSON "options" object (NULL or JSON null: none) into `o`
 * (cleared first). Unknown keys and bad values are RT_EINVAL at
 * "PREFIX.KEY" (prefix "body.options"). */
struct cJSON;
enum rt_status rtg_job_options_from_json(const struct cJSON *obj, const char *prefix,
                                         struct rtg_job_options *o, struct rt_err *err);

/* The canonical JSON text of `o`: the options given, in table order,
 * compact. malloc'd; NULL when out of memory. */
char *rtg_job_options_json(const struct rtg_job_options *o);

/* Applies the options given to `s` (the caller has filled in the defaults
 * and the profile's). fps is not a solver option and is not applied. */
void rtg_job_options_apply(const struct rtg_job_options *o, struct solver_options *s);

/* Writes the usage lines of every row in `scope`: "  --flag ARG  help
 * (range; default D)", one per line. */
void rtg_options_usage(FILE *f, unsigned scope);

/* Writes the job options as a Markdown table (key, type, range, default,
 * help): docs/api.md carries this table, and tests/test_docs.sh checks that
 * it is the table's. */
void rtg_options_markdown(FILE *f);

/* The metres per unit of a --units choice ("m" 1, "cm" 0.01, "mm" 0.001,
 * "in" 0.0254, "cmu" the CMU scale of kinematics/bvh.h) into *metres:
 * returns 1, or 0 (*metres untouched) for any other text. The CLI's
 * --units and a daemon job's joint-position "units" read it. */
int rtg_units_metres(const char *name, double *metres);

/* The range of a row in words: "an integer in [0, 10000]", "a number in
 * (0, 10000]", "pcg or direct", into buf. */
const char *rtg_option_range(const struct rtg_option *r, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
