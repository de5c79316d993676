/* test_profile.c -- retargeting profiles: defaults, every bundled profile,
 * and errors that name the field the user must fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../retarget/profile.h"
#include "test.h"

/* Parses `json`; returns the status and leaves the error in *err. */
static int parse(const char *json, struct rt_err *err)
{
    struct rtg_profile *p = NULL;
    rt_err_clear(err);
    int st = rtg_profile_parse(json, strlen(json), "t.json", &p, err);
    CHECK((st == RT_OK) == (p != NULL));
    rtg_profile_free(p);
    return st;
}

/* Checks that `json` fails with `code` and a where equal to `where`. */
#define CHECK_FAILS(json, code, where_)                                                        \
    do {                                                                                       \
        struct rt_err e_;                                                                      \
        CHECK_EQ_INT(parse(json, &e_), code);                                                  \
        CHECK_EQ_STR(e_.where, where_);                                                        \
    } while (0)

static const char *minimal =
    "{\"root\":{\"joint\":\"Hips\",\"link\":\"pelvis\"},"
    " \"links\":[{\"joint\":\"LeftLeg\",\"link\":\"left_knee_link\"}]}";

static void test_defaults(void)
{
    struct rtg_profile *p = NULL;
    struct rt_err err;
    CHECK_EQ_INT(rtg_profile_parse(minimal, strlen(minimal), "dir/short.json", &p, &err), RT_OK);
    if (!p) return;
    CHECK_EQ_STR(p->name, "short");
    CHECK_EQ_INT(p->n_links, 2);
    CHECK_EQ_INT(p->links[0].parent, -1);
    CHECK_EQ_INT(p->links[0].attach, RTG_ATTACH_ROOT);
    CHECK_EQ_INT(p->links[1].parent, 0);
    CHECK_EQ_INT(p->links[1].attach, RTG_ATTACH_DIRECTION);
    CHECK_NEAR(p->links[1].wpos, 1.0, 0);
    CHECK_NEAR(p->links[1].wrot, 0.0, 0);
    CHECK_EQ_INT(p->source, RTG_SOURCE_BVH);
    CHECK_NEAR(p->units, 0.0, 0); /* detect */
    CHECK_EQ_INT(p->up, 0);
    CHECK_NEAR(p->scale, 0.0, 0); /* auto */
    CHECK_EQ_INT(p->ground, RTG_GROUND_LOWEST); /* no feet: no contacts */
    CHECK(p->sole_offset < 0);
    CHECK_EQ_INT(p->max_lm_iters, -1);
    CHECK_EQ_INT(rtg_profile_link_index(p, "LeftLeg"), 1);
    CHECK_EQ_INT(rtg_profile_link_index(p, "Nope"), -1);
    struct solver_options o;
    memset(&o, 0, sizeof o);
    o.max_lm_iters = 7;
    rtg_profile_solver_options(p, &o);
    CHECK_EQ_INT(o.max_lm_iters, 7);
    rtg_profile_free(p);
}

static void test_full(void)
{
    const char *j =
        "{\"name\":\"x\",\"robot\":\"g1\",\"source\":{\"kind\":\"bvh\",\"units\":\"cm\",\"up\":\"y\","
        "\"match\":[\"Hips\"]},\"scale\":0.8,"
        "\"root\":{\"joint\":\"Hips\",\"link\":\"pelvis\",\"orientation_weight\":2,"
        "\"frame\":{\"y\":[\"R\",\"L\"],\"z\":[\"Hips\",\"Spine\"]}},"
        "\"links\":[{\"joint\":\"L\",\"link\":\"l\",\"attach\":\"rigid\"},"
        "{\"joint\":\"LK\",\"link\":\"lk\",\"parent\":\"L\"},"
        "{\"joint\":\"LF\",\"link\":\"lf\",\"parent\":\"LK\",\"frame\":\"source\",\"offset\":[0,0,0,2]},"
        "{\"joint\":\"RF\",\"link\":\"rf\",\"attach\":\"scaled\",\"offset\":\"identity\",\"reference\":\"contacts\"}],"
        "\"feet\":{\"left\":{\"joint\":\"LF\",\"toe\":\"LT\"},\"right\":{\"joint\":\"RF\"}},"
        "\"ground\":{\"mode\":\"contacts\",\"sole_offset_m\":0.03,\"contact_height_m\":0.05,"
        "\"contact_speed_m_s\":0.4,\"min_contact_s\":0.2,\"contact_weight\":8},"
        "\"weights\":{\"velocity\":2,\"acceleration\":0.5,\"rest\":3},"
        "\"solver\":{\"max_lm_iters\":20,\"max_cg_iters\":30,\"init_iters\":0,\"cg_tol\":0.01}}";
    struct rtg_profile *p = NULL;
    struct rt_err err;
    CHECK_EQ_INT(rtg_profile_parse(j, strlen(j), "x.json", &p, &err), RT_OK);
    if (!p) {
        fprintf(stderr, "%s: %s\n", err.where, err.msg);
        return;
    }
    CHECK_NEAR(p->units, 0.01, 0);
    CHECK_EQ_INT(p->up, 'y');
    CHECK_NEAR(p->scale, 0.8, 0);
    CHECK_EQ_INT(p->n_match, 1);
    CHECK_EQ_INT(p->links[0].frame.axis[0], 'y');
    CHECK_EQ_INT(p->links[0].frame.axis[1], 'z');
    CHECK_EQ_STR(p->links[0].frame.to[1], "Spine");
    CHECK_EQ_INT(p->links[1].attach, RTG_ATTACH_RIGID);
    CHECK_EQ_INT(p->links[2].parent, 1);
    CHECK_EQ_INT(p->links[3].frame.source, 1);
    CHECK_EQ_INT(p->links[3].offset_mode, RTG_OFFSET_GIVEN);
    CHECK_NEAR(p->links[3].offset[3], 1.0, 1e-12); /* normalized */
    CHECK_EQ_INT(p->links[4].attach, RTG_ATTACH_SCALED);
    CHECK_EQ_INT(p->links[4].offset_mode, RTG_OFFSET_IDENTITY);
    CHECK_EQ_INT(p->links[4].ref_contacts, 1);
    CHECK_EQ_INT(p->feet[0].link, 3);
    CHECK_EQ_INT(p->feet[1].link, 4);
    CHECK_EQ_STR(p->feet[0].toe, "LT");
    CHECK_EQ_INT(p->ground, RTG_GROUND_CONTACTS);
    CHECK_NEAR(p->contact_weight, 8, 0);
    CHECK_NEAR(p->w_rest, 3, 0);
    CHECK_EQ_INT(p->max_cg_iters, 30);
    CHECK_EQ_INT(p->init_iters, 0);
    rtg_profile_free(p);
}

static void test_errors(void)
{
    struct rt_err e;
    /* Malformed JSON: a line number. */
    CHECK_EQ_INT(parse("{\n\"root\": {\n,}", &e), RT_EPARSE);
    CHECK_EQ_STR(e.where, "t.json:3");
    CHECK_FAILS("[1]", RT_EINVAL, "t.json:(top)");
    CHECK_FAILS("{\"links\":[]}", RT_EINVAL, "t.json:root");
    CHECK_FAILS("{\"rooot\":{}}", RT_EINVAL, "t.json:rooot");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\"}}", RT_EINVAL, "t.json:root.link");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":{}}", RT_EINVAL, "t.json:links");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\"},"
                "{\"joint\":\"B\",\"link\":\"b\"},{\"joint\":\"C\",\"link\":\"c\"},"
                "{\"joint\":\"D\",\"link\":\"d\",\"position_weight\":\"heavy\"}]}",
                RT_EINVAL, "t.json:links[3].position_weight");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\","
                "\"orientation_weight\":-1}]}",
                RT_EINVAL, "t.json:links[0].orientation_weight");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\","
                "\"positon_weight\":1}]}",
                RT_EINVAL, "t.json:links[0].positon_weight");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\","
                "\"orientation_weight\":1}]}",
                RT_EINVAL, "t.json:links[0].orientation_weight");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\","
                "\"parent\":\"Z\"}]}",
                RT_EINVAL, "t.json:links[0].parent");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\"},"
                "{\"joint\":\"A\",\"link\":\"b\"}]}",
                RT_EINVAL, "t.json:links[1].joint");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"p\"}]}",
                RT_EINVAL, "t.json:links[0].link");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\","
                "\"attach\":\"rigid\"}]}",
                RT_EINVAL, "t.json:links[0].attach");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\","
                "\"attach\":\"glued\"}]}",
                RT_EINVAL, "t.json:links[0].attach");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\",\"frame\":{\"x\":[\"A\",\"B\"]}}}", RT_EINVAL,
                "t.json:root.frame");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\",\"frame\":{\"x\":[\"A\",\"B\"],\"w\":[\"A\",\"C\"]}}}",
                RT_EINVAL, "t.json:root.frame.w");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\",\"frame\":{\"x\":[\"A\",\"B\"],\"x\":[\"A\",\"C\"]}}}",
                RT_EINVAL, "t.json:root.frame");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\",\"offset\":[0,0,0]}}", RT_EINVAL,
                "t.json:root.offset");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\",\"parent\":\"X\"}}", RT_EINVAL, "t.json:root.parent");
    CHECK_FAILS("{\"scale\":-1,\"root\":{\"joint\":\"H\",\"link\":\"p\"}}", RT_EINVAL, "t.json:scale");
    CHECK_FAILS("{\"scale\":\"big\",\"root\":{\"joint\":\"H\",\"link\":\"p\"}}", RT_EINVAL, "t.json:scale");
    CHECK_FAILS("{\"source\":{\"units\":\"furlong\"},\"root\":{\"joint\":\"H\",\"link\":\"p\"}}", RT_EINVAL,
                "t.json:source.units");
    CHECK_FAILS("{\"source\":{\"up\":\"x\"},\"root\":{\"joint\":\"H\",\"link\":\"p\"}}", RT_EINVAL,
                "t.json:source.up");
    CHECK_FAILS("{\"source\":{\"kind\":\"robot\"},\"root\":{\"joint\":\"H\",\"link\":\"p\"}}", RT_EINVAL,
                "t.json:source.robot");
    CHECK_FAILS("{\"source\":{\"match\":[]},\"root\":{\"joint\":\"H\",\"link\":\"p\"}}", RT_EINVAL,
                "t.json:source.match");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"feet\":{\"left\":{\"joint\":\"H\"},"
                "\"right\":{\"joint\":\"H\"}}}",
                RT_EINVAL, "t.json:feet.left.joint");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[{\"joint\":\"A\",\"link\":\"a\"}],"
                "\"feet\":{\"left\":{\"joint\":\"A\"}}}",
                RT_EINVAL, "t.json:feet.right");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"ground\":{\"mode\":\"lava\"}}", RT_EINVAL,
                "t.json:ground.mode");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"ground\":{\"sole_offset_m\":2}}", RT_EINVAL,
                "t.json:ground.sole_offset_m");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"weights\":{\"jerk\":1}}", RT_EINVAL,
                "t.json:weights.jerk");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"solver\":{\"max_lm_iters\":1.5}}", RT_EINVAL,
                "t.json:solver.max_lm_iters");
    /* The option table's ranges (retarget/options.c): N accepted, N+1 not. */
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"solver\":{\"max_lm_iters\":10001}}", RT_EINVAL,
                "t.json:solver.max_lm_iters");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"solver\":{\"max_cg_iters\":0}}", RT_EINVAL,
                "t.json:solver.max_cg_iters");
    CHECK_FAILS("{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"solver\":{\"cg_tol\":1}}", RT_EINVAL,
                "t.json:solver.cg_tol");
    {
        struct rtg_profile *p = NULL;
        const char *ok = "{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"solver\":{\"max_lm_iters\":10000,\"max_cg_iters\":1,\"cg_tol\":0}}";
        CHECK_EQ_INT(rtg_profile_parse(ok, strlen(ok), "t.json", &p, NULL), RT_OK);
        if (p) CHECK_EQ_INT(p->max_lm_iters, 10000);
        rtg_profile_free(p);
    }
}

/* RTG_PROFILE_MAX_LINKS mappings (root included) are accepted, one more is not. */
static void test_limits(void)
{
    for (int extra = 0; extra < 2; extra++) {
        int n = RTG_PROFILE_MAX_LINKS - 1 + extra;
        size_t cap = 128 + (size_t)n * 64, used = 0;
        char *j = malloc(cap);
        struct rt_err e;
        used += (size_t)snprintf(j + used, cap - used, "{\"root\":{\"joint\":\"H\",\"link\":\"p\"},\"links\":[");
        for (int i = 0; i < n; i++)
            used += (size_t)snprintf(j + used, cap - used, "%s{\"joint\":\"j%d\",\"link\":\"l%d\"}", i ? "," : "", i, i);
        snprintf(j + used, cap - used, "]}");
        int st = parse(j, &e);
        CHECK_EQ_INT(st, extra ? RT_ELIMIT : RT_OK);
        if (extra) CHECK_EQ_STR(e.where, "t.json:links");
        free(j);
    }
    /* Oversize input. */
    struct rtg_profile *p = NULL;
    struct rt_err e;
    CHECK_EQ_INT(rtg_profile_parse("{}", (size_t)RTG_PROFILE_MAX_BYTES + 1, "big.json", &p, &e), RT_ELIMIT);
    CHECK(p == NULL);
    /* Deep nesting is refused before anything reads it. */
    char deep[256];
    size_t k = 0;
    k += (size_t)snprintf(deep, sizeof deep, "{\"root\":");
    for (int i = 0; i < 40; i++) deep[k++] = '[';
    for (int i = 0; i < 40; i++) deep[k++] = ']';
    deep[k++] = '}';
    deep[k] = 0;
    CHECK_EQ_INT(parse(deep, &e), RT_ELIMIT);
}

static void test_bundled(void)
{
    const char *const *names = rtg_profile_bundled();
    int n = 0;
    for (; names[n]; n++) {
        struct rtg_profile *p = NULL;
        struct rt_err e;
        int st = rtg_profile_load(names[n], &p, &e);
        if (st) fprintf(stderr, "bundled %s: %s: %s\n", names[n], e.where, e.msg);
        CHECK_EQ_INT(st, RT_OK);
        if (p) {
            CHECK_EQ_STR(p->name, names[n]);
            CHECK(p->robot != NULL);
            CHECK(p->feet[0].link > 0 && p->feet[1].link > 0);
        }
        rtg_profile_free(p);
    }
    CHECK(n >= 11);
    struct rtg_profile *p = NULL;
    struct rt_err e;
    CHECK_EQ_INT(rtg_profile_load("no_such_profile", &p, &e), RT_ENOTFOUND);
    CHECK(strstr(e.msg, "cmu_g1") != NULL); /* the message lists what exists */
    CHECK_EQ_INT(rtg_profile_load("/nonexistent/p.json", &p, &e), RT_EIO);
    size_t len = 0;
    CHECK(rtg_profile_bundled_text("cmu_g1", &len) != NULL && len > 100);
    CHECK(rtg_profile_bundled_text("nope", &len) == NULL);
}

int main(void)
{
    test_defaults();
    test_full();
    test_errors();
    test_limits();
    test_bundled();
    return test_report("test_profile");
}
