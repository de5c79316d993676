/* rot.h -- small double-precision rotation helpers shared by kinematics/
 * modules (not the solver, whose float math lives in solver/frame.h).
 * Matrices are 3x3 row-major; quaternions are (x, y, z, w). */
#ifndef RT_KIN_ROT_H
#define RT_KIN_ROT_H

#include <math.h>

/* Unit quaternion (x,y,z,w) of rotation matrix m, w >= 0 (Shepperd's method). */
static inline void kin_mat_to_quat(const double *m, double *q)
{
    double tr = m[0] + m[4] + m[8];
    if (tr > 0.0) {
        double s = sqrt(tr + 1.0) * 2.0;
        q[3] = 0.25 * s;
        q[0] = (m[7] - m[5]) / s;
        q[1] = (m[2] - m[6]) / s;
        q[2] = (m[3] - m[1]) / s;
    } else if (m[0] > m[4] && m[0] > m[8]) {
        double s = sqrt(1.0 + m[0] - m[4] - m[8]) * 2.0;
        q[3] = (m[7] - m[5]) / s;
        q[0] = 0.25 * s;
        q[1] = (m[1] + m[3]) / s;
        q[2] = (m[2] + m[6]) / s;
    } else if (m[4] > m[8]) {
        double s = sqrt(1.0 + m[4] - m[0] - m[8]) * 2.0;
        q[3] = (m[2] - m[6]) / s;
        q[0] = (m[1] + m[3]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[5] + m[7]) / s;
    } else {
        double s = sqrt(1.0 + m[8] - m[0] - m[4]) * 2.0;
        q[3] = (m[3] - m[1]) / s;
        q[0] = (m[2] + m[6]) / s;
        q[1] = (m[5] + m[7]) / s;
        q[2] = 0.25 * s;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (q[3] < 0.0) n = -n;
    for (int i = 0; i < 4; i++) q[i] /= n;
}

/* Rotation matrix of quaternion q (x,y,z,w), normalized first; a zero or
 * non-finite quaternion is read as the identity rather than giving NaNs. */
static inline void kin_quat_to_mat(const double *qin, double *m)
{
    double n = sqrt(qin[0] * qin[0] + qin[1] * qin[1] + qin[2] * qin[2] + qin[3] * qin[3]);
    double x = 0, y = 0, z = 0, w = 1;
    if (n > 0 && isfinite(n)) {
        x = qin[0] / n;
        y = qin[1] / n;
        z = qin[2] / n;
        w = qin[3] / n;
    }
    m[0] = 1 - 2 * (y * y + z * z); m[1] = 2 * (x * y - z * w);     m[2] = 2 * (x * z + y * w);
    m[3] = 2 * (x * y + z * w);     m[4] = 1 - 2 * (x * x + z * z); m[5] = 2 * (y * z - x * w);
    m[6] = 2 * (x * z - y * w);     m[7] = 2 * (y * z + x * w);     m[8] = 1 - 2 * (x * x + y * y);
}

/* o = a b (3x3 row-major); o must not alias a or b. */
static inline void kin_mat_mul(const double *a, const double *b, double *o)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            o[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/* o = m v; o must not alias v. */
static inline void kin_mat_vec(const double *m, const double *v, double *o)
{
    for (int i = 0; i < 3; i++) o[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
}

/* o = a x b; o must not alias a or b. */
static inline void kin_cross(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* Cosine of the angle of the rotation a^T b between two matrices, held to
 * [-1, 1] (its angle is kin_acos() of it: trig.h, four at a time). */
static inline double kin_rot_cos(const double *a, const double *b)
{
    double tr = 0.0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) tr += a[3 * k + i] * b[3 * k + i];
    double c = 0.5 * (tr - 1.0);
    if (c > 1.0) c = 1.0;
    if (c < -1.0) c = -1.0;
    return c;
}

#endif
