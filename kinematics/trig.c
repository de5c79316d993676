/* trig.c -- one value through trig.h's four-lane sine, cosine and arc
 * cosine: the same bits as its lane, built with KIN_CLONES so that a
 * processor with AVX takes the four lanes in one register (a unit built
 * for the default target splits them into much slower halves). */
#include "trig.h"

KIN_CLONES void kin_sincos(double x, double *s, double *c)
{
    kin_v4d v = {x, x, x, x}, sv, cv;
    kin_sincos4(&v, &sv, &cv);
    *s = sv[0];
    *c = cv[0];
}

KIN_CLONES double kin_acos(double x)
{
    kin_v4d v = {x, x, x, x}, a;
    kin_acos4(&v, &a);
    return a[0];
}
