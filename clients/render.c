/* render.c -- `retarget render CLIP.bvh RESULT.csv --robot NAME -o FILE.svg
 * [--frames a,b,c | --worst REPORT.json]`: an SVG with, for each chosen frame, the source skeleton
 * (blue) beside the robot's link chain (orange), seen along x (y across,
 * z up) and seen along y (x across, z up) -- front and side views for a
 * clip that faces along x, and the robot turns as the clip does -- so that a
 * person can see at a glance whether the motion carried over. Without
 * --frames, six evenly spaced frames. Each figure is centred on its own root;
 * the line at the bottom of a cell is the ground (z = 0 for the robot, the
 * clip's lowest point over the chosen frames for the source). With --worst,
 * the frames the solve's report names as the worst (the deepest
 * self-penetration, the fastest sliding foot), each captioned with what
 * happens there, so that a person can look at them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../kinematics/robot.h"
#include "../kinematics/traj.h"
#include "../retarget/retarget.h"
#include <cjson/cJSON.h>
#include "cli.h"

#define RENDER_MAX_FRAMES 32
#define RENDER_PX_PER_M 110.0
#define RENDER_CELL_W 2.4 /* m: source and robot side by side */
#define RENDER_CELL_H 2.2 /* m */

static int render_usage(void)
{
    fprintf(stderr, "usage: retarget render CLIP.bvh RESULT.csv --robot NAME|URDF -o FILE.svg "
                    "[--frames a,b,c | --worst REPORT.json]\n");
    return 2;
}

/* Parses "a,b,c" into frames[]; returns the count, or -1 on a bad list. */
static int parse_frames(const char *s, int *frames, int cap)
{
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        if (*s < '0' || *s > '9') return -1;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v < 0 || v > 100000000L || n >= cap) return -1;
        frames[n++] = (int)v;
        s = end;
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return n;
}

/* The worst frames of a report (quality.self_penetration_worst_frame,
 * quality.foot_slide_worst_frame) into frames[] and their captions into
 * caption[] (64 bytes each); returns their count (0: the report names
 * none), -1 with err set when the report cannot be read. */
static int worst_frames(const char *path, int *frames, char caption[][64], struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int n = 0;
    if (rt_read_file(path, (size_t)256 << 20, &text, &len, err) != RT_OK) return -1;
    cJSON *rep = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(rep, "quality");
    if (!cJSON_IsObject(q)) {
        cJSON_Delete(rep);
        rt_err_set(err, RT_EPARSE, path, "not a retarget report (no \"quality\" object)");
        return -1;
    }
    const cJSON *sf = cJSON_GetObjectItemCaseSensitive(q, "self_penetration_worst_frame");
    const cJSON *pair = cJSON_GetObjectItemCaseSensitive(q, "self_penetration_pair");
    const cJSON *depth = cJSON_GetObjectItemCaseSensitive(q, "self_penetration_m");
    if (cJSON_IsNumber(sf) && sf->valuedouble >= 0) {
        const cJSON *a = cJSON_GetArrayItem(pair, 0), *b = cJSON_GetArrayItem(pair, 1);
        frames[n] = (int)sf->valuedouble;
        snprintf(caption[n], 64, "%.1f cm: %s / %s", cJSON_IsNumber(depth) ? depth->valuedouble * 100 : 0.0,
                 cJSON_IsString(a) ? a->valuestring : "?", cJSON_IsString(b) ? b->valuestring : "?");
        n++;
    }
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(q, "foot_slide_worst_frame");
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(q, "foot_slide_speed_m_s"),
                                                       "max");
    if (cJSON_IsNumber(lf) && lf->valuedouble >= 0) {
        frames[n] = (int)lf->valuedouble;
        snprintf(caption[n], 64, "foot slides %.3f m/s", cJSON_IsNumber(sp) ? sp->valuedouble : 0.0);
        n++;
    }
    cJSON_Delete(rep);
    return n;
}

/* One stick figure: segments (a, b) over points pts[3*i], projected on
 * horizontal axis `ax` (0: x, 1: y) and z, centred at (cx, ground). */
static void draw_figure(FILE *f, const double *pts, const int *parent, int n, int ax, double root_h,
                        double ground, double cx, double base_y, const char *color)
{
    for (int i = 0; i < n; i++) {
        int p = parent[i];
        if (p < 0) continue;
        double x1 = cx + (pts[3 * i + ax] - root_h) * RENDER_PX_PER_M;
        double y1 = base_y - (pts[3 * i + 2] - ground) * RENDER_PX_PER_M;
        double x2 = cx + (pts[3 * p + ax] - root_h) * RENDER_PX_PER_M;
        double y2 = base_y - (pts[3 * p + 2] - ground) * RENDER_PX_PER_M;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\" "
                   "stroke-linecap=\"round\"/>\n", x1, y1, x2, y2, color);
    }
}

int cli_render(int argc, char **argv)
{
    const char *clip_path = NULL, *csv_path = NULL, *robot_name = NULL, *out_path = NULL, *frames_arg = NULL;
    const char *worst_arg = NULL;
    char caption[RENDER_MAX_FRAMES][64];
    struct kin_clip *clip = NULL;
    struct kin_robot *robot = NULL;
    struct kin_bvh_convert conv;
    struct rt_err err;
    double *states = NULL, *spos = NULL, *srot = NULL, *rpos = NULL, *rrot = NULL, *x = NULL;
    int *sparent = NULL, *rparent = NULL;
    int frames[RENDER_MAX_FRAMES], n_sel = 0, n_states = 0, rc = 1;
    FILE *f = NULL;
    rt_err_clear(&err);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--robot") == 0 && i + 1 < argc) robot_name = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out_path = argv[++i];
        else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) frames_arg = argv[++i];
        else if (strcmp(argv[i], "--worst") == 0 && i + 1 < argc) worst_arg = argv[++i];
        else if (argv[i][0] == '-') return render_usage();
        else if (!clip_path) clip_path = argv[i];
        else if (!csv_path) csv_path = argv[i];
        else return render_usage();
    }
    if (!clip_path || !csv_path || !robot_name || !out_path || (frames_arg && worst_arg)) return render_usage();
    memset(caption, 0, sizeof caption);
    if (kin_bvh_load(clip_path, &clip, &err) || kin_robot_load(robot_name, &robot, &err)) goto fail;
    if (clip->n_frames < 1) {
        rt_err_set(&err, RT_EINVAL, clip_path, "the clip has no frames");
        goto fail;
    }
    /* The clip's units and up axis as a solve without a profile settles them. */
    struct rtg_source_units units;
    if (rtg_source_units_clip(clip, NULL, &units, &err)) goto fail;
    conv.scale = units.scale;
    conv.up = units.up;
    int cols = RT_ROOT_COLS + robot->n_dof;
    if (kin_traj_read(csv_path, cols, &states, &n_states, &err)) goto fail;
    if (n_states < 1) {
        rt_err_set(&err, RT_EINVAL, csv_path, "the trajectory has no rows");
        goto fail;
    }
    if (worst_arg) {
        if ((n_sel = worst_frames(worst_arg, frames, caption, &err)) < 0) goto fail;
        if (n_sel == 0) {
            rt_err_set(&err, RT_EINVAL, worst_arg, "the report names no worst frame (no self-penetration, no sliding foot)");
            goto fail;
        }
        for (int i = 0; i < n_sel; i++)
            if (frames[i] >= n_states) {
                rt_err_set(&err, RT_EINVAL, worst_arg, "frame %d is past the trajectory's %d rows", frames[i], n_states);
                goto fail;
            }
    } else if (frames_arg) {
        n_sel = parse_frames(frames_arg, frames, RENDER_MAX_FRAMES);
        if (n_sel <= 0) {
            rt_err_set(&err, RT_EINVAL, "--frames", "expected up to %d comma-separated frame numbers",
                       RENDER_MAX_FRAMES);
            goto fail;
        }
        for (int i = 0; i < n_sel; i++)
            if (frames[i] >= n_states) {
                rt_err_set(&err, RT_EINVAL, "--frames", "frame %d is past the trajectory's %d rows", frames[i],
                           n_states);
                goto fail;
            }
    } else {
        n_sel = n_states < 6 ? n_states : 6;
        for (int i = 0; i < n_sel; i++) frames[i] = n_sel > 1 ? (int)((long)i * (n_states - 1) / (n_sel - 1)) : 0;
    }
    int n_all = clip->n_joints + clip->n_end_sites;
    spos = malloc((size_t)n_all * 3 * sizeof *spos * RENDER_MAX_FRAMES);
    srot = malloc((size_t)n_all * 9 * sizeof *srot);
    rpos = malloc((size_t)robot->n_links * 3 * sizeof *rpos * RENDER_MAX_FRAMES);
    rrot = malloc((size_t)robot->n_links * 9 * sizeof *rrot);
    x = malloc((size_t)cols * sizeof *x);
    sparent = malloc((size_t)n_all * sizeof *sparent);
    rparent = malloc((size_t)robot->n_links * sizeof *rparent);
    if (!spos || !srot || !rpos || !rrot || !x || !sparent || !rparent) {
        rt_err_set(&err, RT_ENOMEM, "render", "out of memory");
        goto fail;
    }
    for (int j = 0; j < n_all; j++) sparent[j] = clip->joints[j].parent;
    for (int l = 0; l < robot->n_links; l++) rparent[l] = robot->links[l].parent;
    double sground = 1e30;
    for (int i = 0; i < n_sel; i++) {
        /* The clip frame at the same time as the trajectory row (the row
         * itself when the clip has as many frames: the division is exact). */
        int cf = n_states > 1 ? (int)((long)frames[i] * (clip->n_frames - 1) / (n_states - 1)) : 0;
        double *sp = spos + (size_t)i * n_all * 3;
        kin_clip_global(clip, cf, &conv, sp, srot);
        for (int j = 0; j < n_all; j++)
            if (sp[3 * j + 2] < sground) sground = sp[3 * j + 2];
        for (int c = 0; c < cols; c++) x[c] = states[(size_t)frames[i] * cols + c];
        kin_fk(robot, x, rpos + (size_t)i * robot->n_links * 3, rrot);
    }
    f = fopen(out_path, "w");
    if (!f) {
        rt_err_set(&err, RT_EIO, out_path, "cannot write: %s", strerror(errno));
        goto fail;
    }
    double cw = RENDER_CELL_W * RENDER_PX_PER_M, ch = RENDER_CELL_H * RENDER_PX_PER_M, top = 40;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"13\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            cw * n_sel, top + 2 * ch + 20);
    fprintf(f, "<text x=\"8\" y=\"18\">source (blue) and %s (orange); top: seen along x (y across, z up), "
               "bottom: seen along y (x across, z up)</text>\n", robot->name);
    for (int i = 0; i < n_sel; i++) {
        const double *sp = spos + (size_t)i * n_all * 3, *rp = rpos + (size_t)i * robot->n_links * 3;
        double x0 = i * cw;
        fprintf(f, "<text x=\"%.1f\" y=\"34\">frame %d%s%s</text>\n", x0 + 8, frames[i], caption[i][0] ? ": " : "",
                caption[i]);
        for (int v = 0; v < 2; v++) {
            int ax = v == 0 ? 1 : 0;
            double base = top + (v + 1) * ch - 10;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>\n", x0 + 5, base,
                    x0 + cw - 5, base);
            draw_figure(f, sp, sparent, n_all, ax, sp[ax], sground, x0 + cw * 0.28, base, "#2a6fdb");
            draw_figure(f, rp, rparent, robot->n_links, ax, rp[ax], 0.0, x0 + cw * 0.72, base, "#e07b00");
        }
    }
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        f = NULL;
        rt_err_set(&err, RT_EIO, out_path, "write failed");
        goto fail;
    }
    f = NULL;
    rc = 0;
fail:
    if (f) fclose(f);
    if (rc) cli_fail(&err);
    free(states);
    free(spos);
    free(srot);
    free(rpos);
    free(rrot);
    free(x);
    free(sparent);
    free(rparent);
    kin_robot_free(robot);
    kin_clip_free(clip);
    return rc;
}
