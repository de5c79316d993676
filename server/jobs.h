/* jobs.h -- the job routes (server/jobs.c): submission, listing, one job,
 * cancellation and results. */
#ifndef RT_SRV_JOBS_H
#define RT_SRV_JOBS_H

#include <microhttpd.h>

struct srv;
struct srv_req;
struct srv_resp;

/* POST /v1/jobs without its connection: reads the submission from r (the
 * body, r->query, r->idem, r->owner), validates and plans it (holding the
 * names it uses, assets.h), stores the job and queues it in the
 * scheduler; the reply (201 or 200 with the job, or the error) goes into
 * *out. Makes no MHD call on the connection, so it runs on a validation
 * thread (http.c) while the connection is suspended. */
void srv_jobs_submit(struct srv *s, struct srv_req *r, struct srv_resp *out);

/* GET /v1/jobs/ID/result, .../result.csv, .../result.npz (srv_jobs_is_result()
 * of the route): the reply into `out` from the request's copied query and
 * the store, so that it may run off the connection's thread. */
int srv_jobs_is_result(int route);
void srv_jobs_result(struct srv *s, struct srv_req *r, struct srv_resp *out);

/* POST and GET /v1/jobs, GET and DELETE /v1/jobs/ID, GET .../result and
 * .../result.csv. Queues the reply and returns MHD's result. A POST runs
 * srv_jobs_submit() on the calling thread. */
enum MHD_Result srv_route_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                               const char *method);

#endif
