/* jobs.h -- the job routes (server/jobs.c): submission, listing, one job,
 * cancellation and results. */
#ifndef RT_SRV_JOBS_H
#define RT_SRV_JOBS_H

#include <microhttpd.h>

struct srv;
struct srv_req;

/* POST and GET /v1/jobs, GET and DELETE /v1/jobs/ID, GET .../result and
 * .../result.csv. Queues the reply and returns MHD's result. A submission
 * is validated completely (srv_job_build) before its row is written. */
enum MHD_Result srv_route_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                               const char *method);

#endif
