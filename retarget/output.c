/* output.c -- column names and trajectory rows (see output.h). */
#include "output.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static const char *const root_cols[RT_ROOT_COLS] = {"root_x",  "root_y",  "root_z", "root_qx",
                                                    "root_qy", "root_qz", "root_qw"};

int rtg_columns(const struct kin_robot *r, const char **names)
{
    for (int k = 0; k < RT_ROOT_COLS; k++) names[k] = root_cols[k];
    for (int k = 0; k < r->n_dof; k++) names[RT_ROOT_COLS + k] = r->joints[r->coord_joint[k]].name;
    return RT_ROOT_COLS + r->n_dof;
}

char *rtg_columns_json(const struct kin_robot *r)
{
    const char **names = malloc((size_t)(RT_ROOT_COLS + r->n_dof) * sizeof *names);
    cJSON *a = names ? cJSON_CreateArray() : NULL;
    char *t = NULL;
    int n = names ? rtg_columns(r, names) : 0;
    for (int k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateString(names[k]));
    if (a && cJSON_GetArraySize(a) == n) t = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    free(names);
    return t;
}

int rtg_format_float(float v, char *buf) { return snprintf(buf, 16, "%.9g", (double)v); }

enum rt_status rtg_csv_write(FILE *f, const char *const *names, int cols, const float *state,
                             int n_frames, struct rt_err *err)
{
    char num[16];
    if (names) {
        for (int k = 0; k < cols; k++) {
            if (k) fputc(',', f);
            fputs(names[k], f);
        }
        fputc('\n', f);
    }
    for (int t = 0; t < n_frames; t++) {
        const float *row = state + (size_t)t * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            int n = rtg_format_float(row[c], num);
            if (c) fputc(',', f);
            fwrite(num, 1, (size_t)n, f);
        }
        fputc('\n', f);
    }
    if (ferror(f)) return rt_err_set(err, RT_EIO, "output", "write failed");
    return RT_OK;
}

void rtg_json_rows_write(FILE *f, int cols, const float *state, int n_frames)
{
    char num[16];
    fputc('[', f);
    for (int t = 0; t < n_frames; t++) {
        fputs(t ? ",[" : "[", f);
        for (int k = 0; k < cols; k++) {
            int n = rtg_format_float(state[(size_t)t * (size_t)cols + (size_t)k], num);
            if (k) fputc(',', f);
            fwrite(num, 1, (size_t)n, f);
        }
        fputc(']', f);
    }
    fputc(']', f);
}
