/* trig.h -- sine and cosine in double for the forward kinematics
 * (kin_fk, kin_fk_frames), and the arc cosine of the quality figures'
 * rotation errors (retarget/quality.c), four values at a time.
 *
 * The host's FK takes a sine and a cosine a revolute joint a frame, and
 * libm's sincos() was 9-10% of the job's host stages (the targets' and the
 * quality's FK: bench/bench_host under perf), libm's acos() another 4% (the
 * quality's rotation errors). These are the fdlibm algorithms (the medium
 * range reduction of e_rem_pio2.c, the kernels of k_sin.c and k_cos.c,
 * e_acos.c; their coefficients), written once over GCC's vector of four
 * doubles so that every lane takes the same IEEE operations: kin_sincos()
 * of one value is one lane of kin_sincos4(), bit for bit (kin_acos() of
 * kin_acos4()), and an AVX clone runs four lanes in one register. Error
 * below one unit in the last place (tests/test_trig.c checks it against
 * long double); the sine and cosine over the fast range (|x| <=
 * KIN_TRIG_FAST_MAX), outside it and for inf and NaN a lane takes libm's
 * sin() and cos(). Nothing is contracted (-ffp-contract=off), so the bits
 * are the same on every IEEE machine, where libm's depend on the variant it
 * picks for the processor. KIN_CLONES builds a function that calls them for
 * AVX2, AVX and the default target (not under ASan, whose run then checks
 * the default one).
 *
 * fdlibm: Copyright (C) 1993 by Sun Microsystems, Inc. All rights
 * reserved. Developed at SunSoft, a Sun Microsystems, Inc. business.
 * Permission to use, copy, modify, and distribute this software is freely
 * granted, provided that this notice is preserved. */
#ifndef RT_KIN_TRIG_H
#define RT_KIN_TRIG_H

#include <math.h>
#include <stdint.h>

typedef double kin_v4d __attribute__((vector_size(32)));
typedef int64_t kin_v4i __attribute__((vector_size(32)));  /* lane masks: all ones or zero */
typedef uint64_t kin_v4u __attribute__((vector_size(32))); /* bit patterns */

/* A function built three times, the processor's best taken at load
 * (GCC's target_clones); on x86-64 only, and not under ASan. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KIN_TRIG_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KIN_TRIG_ASAN 1
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(KIN_TRIG_ASAN)
#if __has_attribute(target_clones)
#define KIN_CLONES __attribute__((target_clones("avx2", "avx", "default")))
#endif
#endif
#ifndef KIN_CLONES
#define KIN_CLONES
#endif

/* The fast range: |x| * 2/pi rounds to an integer of at most 18 bits, so
 * that n * pio2_1 (33 bits) is exact. */
#define KIN_TRIG_FAST_MAX 0x1p17

/* (mask ? a : b) lane by lane, mask all ones or all zeros; and the biased
 * exponent of every lane (macros: a function returning a vector would
 * change its ABI in a unit built without AVX). */
#define KIN_TRIG_BLEND(mask, a, b) ((kin_v4d)(((kin_v4i)(a) & (mask)) | ((kin_v4i)(b) & ~(mask))))
#define KIN_TRIG_EXP(x) ((kin_v4i)(((kin_v4u)(x) >> 52) & 0x7ff))

/* s[l] = sin(x[l]), c[l] = cos(x[l]) for the four lanes. */
static inline __attribute__((always_inline)) void kin_sincos4(const kin_v4d *xp, kin_v4d *sp, kin_v4d *cp)
{
    const double invpio2 = 6.36619772367581382433e-01; /* 0x3FE45F30 6DC9C883 */
    const double pio2_1 = 1.57079632673412561417e+00;  /* 0x3FF921FB 54400000: the first 33 bits of pi/2 */
    const double pio2_1t = 6.07710050650619224932e-11; /* pi/2 - pio2_1 */
    const double pio2_2 = 6.07710050630396597660e-11;  /* 0x3DD0B461 1A600000: the next 33 bits */
    const double pio2_2t = 2.02226624879595063154e-21; /* pi/2 - (pio2_1 + pio2_2) */
    const double pio2_3 = 2.02226624871116645580e-21;  /* 0x3BA3198A 2E000000: the next 33 bits */
    const double pio2_3t = 8.47842766036889956997e-32; /* pi/2 - (pio2_1 + pio2_2 + pio2_3) */
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    const double magic = 0x1.8p52; /* x + magic - magic: x rounded to an integer, which the low bits hold */
    kin_v4d x = *xp;
    /* Out of the fast range (or not finite): the lane's x is replaced by 0
     * here and its result by libm's below. */
    kin_v4i big = ~((kin_v4d)((kin_v4i)x & INT64_MAX) <= KIN_TRIG_FAST_MAX);
    x = (kin_v4d)((kin_v4i)x & ~big);
    /* n = rint(x 2/pi); y0 + y1 = x - n pi/2 in one, two or three rounds
     * as the cancellation requires (e_rem_pio2.c's medium case). */
    kin_v4d tn = x * invpio2 + magic, fn = tn - magic;
    kin_v4i q = (kin_v4i)tn & 3;
    kin_v4d r = x - fn * pio2_1, w = fn * pio2_1t, y0 = r - w;
    kin_v4i j = KIN_TRIG_EXP(x);
    kin_v4i more = j - KIN_TRIG_EXP(y0) > 16;
    {
        kin_v4d w2 = fn * pio2_2, r2 = r - w2;
        w2 = fn * pio2_2t - ((r - r2) - w2);
        kin_v4d y2 = r2 - w2;
        kin_v4i most = more & (j - KIN_TRIG_EXP(y2) > 49);
        kin_v4d w3 = fn * pio2_3, r3 = r2 - w3;
        w3 = fn * pio2_3t - ((r2 - r3) - w3);
        kin_v4d y3 = r3 - w3;
        r = KIN_TRIG_BLEND(most, r3, KIN_TRIG_BLEND(more, r2, r));
        w = KIN_TRIG_BLEND(most, w3, KIN_TRIG_BLEND(more, w2, w));
        y0 = KIN_TRIG_BLEND(most, y3, KIN_TRIG_BLEND(more, y2, y0));
    }
    kin_v4d y1 = (r - y0) - w;
    /* The kernels on [-pi/4, pi/4] (k_sin.c with its tail, k_cos.c). */
    kin_v4d z = y0 * y0, zz = z * z;
    kin_v4d rs = S2 + z * (S3 + z * S4) + z * zz * (S5 + z * S6), v = z * y0;
    kin_v4d s = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * S1);
    kin_v4d rc = z * (C1 + z * (C2 + z * C3)) + zz * zz * (C4 + z * (C5 + z * C6));
    kin_v4d hz = 0.5 * z, wc = 1.0 - hz;
    kin_v4d c = wc + (((1.0 - wc) - hz) + (z * rc - y0 * y1));
    /* The quadrant n mod 4: sin is s, c, -s, -c; cos is c, -s, -c, s. */
    kin_v4i odd = -(q & 1);
    kin_v4d so = KIN_TRIG_BLEND(odd, c, s), co = KIN_TRIG_BLEND(odd, s, c);
    so = (kin_v4d)((kin_v4u)so ^ ((kin_v4u)(q & 2) << 62));
    co = (kin_v4d)((kin_v4u)co ^ ((kin_v4u)((q + 1) & 2) << 62));
    for (int l = 0; l < 4; l++)
        if (big[l]) so[l] = sin((*xp)[l]), co[l] = cos((*xp)[l]);
    *sp = so;
    *cp = co;
}

/* *s = sin(x), *c = cos(x): kin_sincos4's bits (trig.c; one value takes
 * a four-lane call, 18-20 ns with AVX2 and 52-63 without on the build
 * machine, libm's 12: the FK's frames go four at a time, kin_fk_frames). */
void kin_sincos(double x, double *s, double *c);

/* out[l] = acos(x[l]) (e_acos.c: a rational function of x^2 below 1/2 in
 * magnitude, of (1 - |x|) / 2 and its square root above); x = 1 gives 0,
 * x = -1 pi, anything else outside [-1, 1] and NaN give NaN. */
static inline __attribute__((always_inline)) void kin_acos4(const kin_v4d *xp, kin_v4d *out)
{
    const double pi = 3.14159265358979311600e+00, pio2_hi = 1.57079632679489655800e+00,
                 pio2_lo = 6.12323399573676603587e-17;
    const double pS0 = 1.66666666666666657415e-01, pS1 = -3.25565818622400915405e-01,
                 pS2 = 2.01212532134862925881e-01, pS3 = -4.00555345006794114027e-02,
                 pS4 = 7.91534994289814532176e-04, pS5 = 3.47933107596021167570e-05;
    const double qS1 = -2.40339491173441421878e+00, qS2 = 2.02094576023350569471e+00,
                 qS3 = -6.88283971605453293030e-01, qS4 = 7.70381505559019352791e-02;
    kin_v4d x = *xp, ax = (kin_v4d)((kin_v4i)x & INT64_MAX);
    kin_v4i mid = ax < 0.5, neg = x < 0.0;
    /* z = x^2 in the middle, (1 - |x|) / 2 outside (e_acos.c's (1 + x) / 2
     * below -1/2 is the same operation) */
    kin_v4d z = KIN_TRIG_BLEND(mid, x * x, (1.0 - ax) * 0.5), s;
    for (int l = 0; l < 4; l++) s[l] = sqrt(z[l]);
    kin_v4d p = z * (pS0 + z * (pS1 + z * (pS2 + z * (pS3 + z * (pS4 + z * pS5)))));
    kin_v4d q = 1.0 + z * (qS1 + z * (qS2 + z * (qS3 + z * qS4)));
    kin_v4d r = p / q;
    kin_v4d rm = pio2_hi - (x - (pio2_lo - x * r));  /* |x| < 1/2 */
    kin_v4d rn = pi - 2.0 * (s + (r * s - pio2_lo)); /* x <= -1/2 */
    kin_v4d df = (kin_v4d)((kin_v4u)s & 0xffffffff00000000ull); /* x >= 1/2: s's high half */
    kin_v4d c = (z - df * df) / (s + df);
    kin_v4d rp = 2.0 * (df + (r * s + c));
    kin_v4d a = KIN_TRIG_BLEND(mid, rm, KIN_TRIG_BLEND(neg, rn, rp));
    for (int l = 0; l < 4; l++)
        if (!(ax[l] < 1.0)) a[l] = x[l] == 1.0 ? 0.0 : x[l] == -1.0 ? pi + 2.0 * pio2_lo : NAN;
    *out = a;
}

/* acos(x): kin_acos4's bits (trig.c, as kin_sincos). */
double kin_acos(double x);

#endif
