/* Ring load balancing of per-atom work: a circulation on the ring computed from every
 * rank's total cost (ringlb_plan.c), realised with indivisible items, routed hop by hop:
 * this file holds the balancer object and its MPI transport. The environments that
 * travel are ringlb_env.c's; ringlb_evaluate.c runs the whole evaluation. */
#include "aisci_testing/ringlb.h"

#include "internal.h"
#include "ringlb_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { DIR_FWD = 0, DIR_BWD = 1 };
enum { CALL_CREATE = 1, CALL_PLAN = 2, CALL_SEND = 3, CALL_RETURN = 4 };
enum { ST_NONE = 0, ST_PLANNED = 1, ST_SENT = 2 };
/* message tags on the private communicator: plan headers, payloads, results, by direction */
enum { TAG_HEAD = 10, TAG_WORK = 20, TAG_RESULT = 30 };

static const char *call_name(int call)
{
  switch (call) {
    case CALL_CREATE:
      return "create";
    case CALL_PLAN:
      return "plan";
    case CALL_SEND:
      return "send_work";
    case CALL_RETURN:
      return "return_results";
    default:
      return "?";
  }
}

/* ---------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------- */

/* Grow *p to hold n elements of size sz (internal.h); 0 on success. */
static int grow(void **p, size_t n, size_t sz, int64_t *cap)
{
  return aisci_grow(p, cap, (int64_t) n, sz, "ringlb", "buffer") != AISCI_OK;
}

aisci_ringlb_config aisci_ringlb_config_default(void)
{
  aisci_ringlb_config cfg = {0.05, 0};
  return cfg;
}

static aisci_status mpi_fail(int rc, const char *what)
{
  return aisci_mpi_fail(rc, "ringlb", what);
}

/* Every collective call starts here: the ranks agree on the worst status and on the call
 * they are making, so that one rank's error or a mismatched call fails every rank. */
static aisci_status agree(MPI_Comm comm, int call, aisci_status st)
{
  int mine[3] = {(int) st, call, -call}, red[3];
  int rc = MPI_Allreduce(mine, red, 3, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "Allreduce of the call status");
  if (red[1] != -red[2])
    return aisci_set_error(AISCI_ERR_STATE,
                           "ringlb: mismatched calls: this rank called %s while another rank "
                           "called %s",
                           call_name(call), call_name(red[1] == call ? -red[2] : red[1]));
  if (red[0] != AISCI_OK && st == AISCI_OK)
    return aisci_set_error((aisci_status) red[0], "ringlb: %s failed on another rank",
                           call_name(call));
  return (aisci_status) red[0];
}

/* agree() on the balancer's communicator, recording the outcome for evaluate. */
static aisci_status agree_lb(aisci_ringlb *lb, int call, aisci_status st)
{
  lb->agree_own = st;
  const aisci_status red = agree(lb->comm, call, st);
  lb->agree_failed = red != AISCI_OK;
  return red;
}

static void free_plan(aisci_ringlb *lb)
{
  free(lb->dest);
  free(lb->hops);
  free(lb->kept);
  free(lb->send_off);
  free(lb->send_src);
  free(lb->recv_off);
  free(lb->slot_foreign);
  free(lb->slot_origin);
  free(lb->slot_dest);
  free(lb->slot_cost);
  free(lb->foreign_slot);
  free(lb->own_roff);
  free(lb->slot_poff);
  free(lb->slot_rlen);
  free(lb->slot_roff);
  free(lb->foreign_poff);
  free(lb->foreign_roff);
  lb->dest = lb->hops = lb->kept = lb->send_off = lb->send_src = lb->recv_off = NULL;
  lb->slot_foreign = lb->foreign_slot = lb->slot_dest = NULL;
  lb->slot_origin = NULL;
  lb->slot_cost = NULL;
  lb->own_roff = lb->slot_poff = lb->slot_rlen = lb->slot_roff = NULL;
  lb->foreign_poff = lb->foreign_roff = NULL;
  lb->n_items = lb->n_kept = lb->n_slots = lb->n_foreign = lb->n_forwarded = 0;
  lb->nrounds = lb->rounds[0] = lb->rounds[1] = 0;
  lb->state = ST_NONE;
}

/* One round of neighbour exchange: send sbuf[d] (ns[d] bytes) in direction d when
 * sact[d] (forward: to next, tagged tag + 0; backward: to prev, tag + 1) and, when
 * ract[d], receive the matching message of unknown size into rbuf[d] (nr[d] bytes). */
static aisci_status exchange_probe(aisci_ringlb *lb, int tag, const int sact[2], const size_t ns[2],
                                   const int ract[2], size_t nr[2])
{
  MPI_Request req[2];
  int nreq = 0, rc;
  const int to[2] = {lb->next, lb->prev}, from[2] = {lb->prev, lb->next};
  for (int d = 0; d < 2; d++) {
    nr[d] = 0;
    if (!sact[d]) continue;
    if (ns[d] > (size_t) INT32_MAX)
      return aisci_set_error(AISCI_ERR_ARG, "ringlb: a hop message of %zu bytes exceeds 2 GiB",
                             ns[d]);
    rc = MPI_Isend(lb->sbuf[d], (int) ns[d], MPI_BYTE, to[d], tag + d, lb->comm, &req[nreq++]);
    if (rc) return mpi_fail(rc, "Isend");
    lb->bytes_sent += (int64_t) ns[d];
  }
  for (int d = 0; d < 2; d++) {
    if (!ract[d]) continue;
    MPI_Status status;
    int count = 0;
    rc = MPI_Probe(from[d], tag + d, lb->comm, &status);
    if (!rc) rc = MPI_Get_count(&status, MPI_BYTE, &count);
    if (rc) return mpi_fail(rc, "Probe");
    if (grow((void **) &lb->rbuf[d], (size_t) count + 1, 1, &lb->rcap[d]))
      return aisci_set_error(AISCI_ERR_ALLOC, "ringlb: out of memory for a %d-byte message", count);
    rc = MPI_Recv(lb->rbuf[d], count, MPI_BYTE, from[d], tag + d, lb->comm, MPI_STATUS_IGNORE);
    if (rc) return mpi_fail(rc, "Recv");
    nr[d] = (size_t) count;
  }
  return mpi_fail(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "Waitall");
}

/* ---------------------------------------------------------------------------------------
 * Create / destroy
 * ------------------------------------------------------------------------------------- */

aisci_status aisci_ringlb_create(const aisci_ringlb_config *cfg, MPI_Comm comm, aisci_ringlb **out)
{
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "ringlb_create: out is NULL");
  *out = NULL;
  if (comm == MPI_COMM_NULL)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_create: comm is MPI_COMM_NULL");
  aisci_status st = AISCI_OK;
  if (!cfg)
    st = aisci_set_error(AISCI_ERR_ARG, "ringlb_create: cfg is NULL");
  else if (!(cfg->tolerance >= 0.0) || !isfinite(cfg->tolerance))
    st = aisci_set_error(AISCI_ERR_ARG, "ringlb_create: tolerance must be finite and >= 0, got %g",
                         cfg->tolerance);
  aisci_ringlb *lb = NULL;
  if (st == AISCI_OK) {
    lb = calloc(1, sizeof(*lb));
    if (!lb) st = aisci_set_error(AISCI_ERR_ALLOC, "ringlb_create: out of memory");
  }
  st = agree(comm, CALL_CREATE, st);
  if (st != AISCI_OK) {
    free(lb);
    return st;
  }
  int rc = MPI_Comm_dup(comm, &lb->comm);
  if (rc) {
    free(lb);
    return mpi_fail(rc, "Comm_dup");
  }
  MPI_Comm_rank(lb->comm, &lb->rank);
  MPI_Comm_size(lb->comm, &lb->size);
  lb->next = (lb->rank + 1) % lb->size;
  lb->prev = (lb->rank + lb->size - 1) % lb->size;
  lb->tolerance = cfg->tolerance;
  lb->unit = cfg->unit_bytes ? cfg->unit_bytes : sizeof(double);
  lb->state = ST_NONE;
  *out = lb;
  return AISCI_OK;
}

void aisci_ringlb_destroy(aisci_ringlb *lb)
{
  if (!lb) return;
  free_plan(lb);
  aisci_ringlb_eval_free(&lb->eval);
  free(lb->slot_payload);
  free(lb->slot_results);
  free(lb->foreign_payload);
  for (int d = 0; d < 2; d++) {
    free(lb->sbuf[d]);
    free(lb->rbuf[d]);
  }
  if (lb->comm != MPI_COMM_NULL) MPI_Comm_free(&lb->comm);
  free(lb);
}

/* ---------------------------------------------------------------------------------------
 * Plan: geometry from the gathered totals, then a routing pass of item headers so that
 * every rank knows, for every round and direction, what it sends, receives and keeps.
 * Round t, direction d is index q = 2 t + d of send_off / recv_off.
 * ------------------------------------------------------------------------------------- */

static aisci_status push_int(int **a, int n, int v, int64_t *cap)
{
  if (grow((void **) a, (size_t) n + 1, sizeof(int), cap))
    return aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory");
  (*a)[n] = v;
  return AISCI_OK;
}

static aisci_status plan_routes(aisci_ringlb *lb, const double *cost)
{
  const int R = lb->nrounds, nq = 2 * R;
  lb->send_off = calloc((size_t) nq + 1, sizeof(int));
  lb->recv_off = calloc((size_t) nq + 1, sizeof(int));
  if (!lb->send_off || !lb->recv_off)
    return aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory");
  int64_t src_cap = 0, slot_cap[4] = {0, 0, 0, 0}; /* capacities of the slot arrays */
  int nsrc = 0;
  aisci_status st;
  for (int t = 0; t < R; t++) {
    /* 1. what leaves in round t: own items (t = 0) or round t-1's arrivals passed on */
    for (int d = 0; d < 2; d++) {
      const int q = 2 * t + d;
      lb->send_off[q] = nsrc;
      if (t >= lb->rounds[d]) continue;
      if (t == 0) {
        for (int i = 0; i < lb->n_items; i++)
          if ((d == DIR_FWD && lb->hops[i] > 0) || (d == DIR_BWD && lb->hops[i] < 0))
            if ((st = push_int(&lb->send_src, nsrc++, i, &src_cap))) return st;
      } else {
        const int qp = q - 2;
        for (int s = lb->recv_off[qp]; s < lb->recv_off[qp + 1]; s++)
          if (lb->slot_foreign[s] < 0)
            if ((st = push_int(&lb->send_src, nsrc++, s, &src_cap))) return st;
      }
    }
    lb->send_off[2 * t + 2] = nsrc;

    /* 2. their headers go one hop */
    int act[2];
    size_t ns[2], nr[2];
    for (int d = 0; d < 2; d++) {
      const int q = 2 * t + d, first = lb->send_off[q], last = lb->send_off[q + 1];
      act[d] = t < lb->rounds[d];
      ns[d] = sizeof(ring_head) * (size_t) (last - first);
      if (grow((void **) &lb->sbuf[d], ns[d] + 1, 1, &lb->scap[d]))
        return aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory");
      ring_head *h = (ring_head *) lb->sbuf[d];
      for (int e = first; e < last; e++, h++) {
        memset(h, 0, sizeof(*h));
        const int k = lb->send_src[e];
        if (t == 0) {
          h->origin_rank = lb->rank;
          h->origin_index = k;
          h->dest = lb->dest[k];
          h->cost = cost[k];
        } else {
          h->origin_rank = lb->slot_origin[2 * k];
          h->origin_index = lb->slot_origin[2 * k + 1];
          h->dest = lb->slot_dest[k];
          h->cost = lb->slot_cost[k];
        }
      }
    }
    if ((st = exchange_probe(lb, TAG_HEAD, act, ns, act, nr))) return st;

    /* 3. arrivals become slots: foreign items if addressed here, else passed on */
    for (int d = 0; d < 2; d++) {
      const int q = 2 * t + d;
      lb->recv_off[q] = lb->n_slots;
      if (nr[d] % sizeof(ring_head))
        return aisci_set_error(AISCI_ERR_INTERNAL, "ringlb_plan: header message of %zu bytes",
                               nr[d]);
      const int cnt = (int) (nr[d] / sizeof(ring_head));
      const int n1 = lb->n_slots + cnt;
      if (grow((void **) &lb->slot_origin, 2 * (size_t) n1 + 2, sizeof(int32_t), &slot_cap[0]) ||
          grow((void **) &lb->slot_dest, (size_t) n1 + 1, sizeof(int), &slot_cap[1]) ||
          grow((void **) &lb->slot_cost, (size_t) n1 + 1, sizeof(double), &slot_cap[2]) ||
          grow((void **) &lb->slot_foreign, (size_t) n1 + 1, sizeof(int), &slot_cap[3]))
        return aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory for %d slots", n1);
      const ring_head *h = (const ring_head *) lb->rbuf[d];
      for (int e = 0; e < cnt; e++, h++) {
        const int s = lb->n_slots++;
        lb->slot_origin[2 * s] = h->origin_rank;
        lb->slot_origin[2 * s + 1] = h->origin_index;
        lb->slot_dest[s] = h->dest;
        lb->slot_cost[s] = h->cost;
        if (h->dest == lb->rank) {
          lb->slot_foreign[s] = lb->n_foreign++;
        } else {
          if (t + 1 >= lb->rounds[d])
            return aisci_set_error(
                AISCI_ERR_INTERNAL,
                "ringlb_plan: item %d of rank %d for rank %d would stop at rank %d",
                h->origin_index, h->origin_rank, h->dest, lb->rank);
          lb->slot_foreign[s] = -1;
          lb->n_forwarded++;
        }
      }
    }
    lb->recv_off[2 * t + 2] = lb->n_slots;
  }

  lb->foreign_slot = malloc(sizeof(int) * ((size_t) lb->n_foreign + 1));
  lb->slot_poff = calloc((size_t) lb->n_slots + 1, sizeof(int64_t));
  lb->slot_roff = calloc((size_t) lb->n_slots + 1, sizeof(int64_t));
  lb->slot_rlen = calloc((size_t) lb->n_slots + 1, sizeof(int64_t));
  lb->foreign_poff = calloc((size_t) lb->n_foreign + 1, sizeof(int64_t));
  lb->foreign_roff = calloc((size_t) lb->n_foreign + 1, sizeof(int64_t));
  lb->own_roff = calloc((size_t) lb->n_items + 1, sizeof(int64_t));
  if (!lb->foreign_slot || !lb->slot_poff || !lb->slot_roff || !lb->slot_rlen ||
      !lb->foreign_poff || !lb->foreign_roff || !lb->own_roff)
    return aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory");
  double after = 0.0;
  for (int s = 0; s < lb->n_slots; s++)
    if (lb->slot_foreign[s] >= 0) {
      lb->foreign_slot[lb->slot_foreign[s]] = s;
      after += lb->slot_cost[s];
    }
  for (int i = 0; i < lb->n_items; i++)
    if (lb->hops[i] == 0) after += cost[i];
  lb->cost_after = after;
  return AISCI_OK;
}

aisci_status aisci_ringlb_plan(aisci_ringlb *lb, int n_items, const double *cost)
{
  return aisci_ringlb_plan_pending(lb, AISCI_OK, n_items, cost);
}

aisci_status aisci_ringlb_plan_pending(aisci_ringlb *lb, aisci_status pending, int n_items,
                                       const double *cost)
{
  if (!lb) return aisci_set_error(AISCI_ERR_ARG, "ringlb_plan: lb is NULL");
  double local = 0.0;
  aisci_status st = pending != AISCI_OK ? pending : aisci_ringlb_check_costs(n_items, cost, &local);
  free_plan(lb);
  if (st == AISCI_OK) {
    lb->dest = malloc(sizeof(int) * ((size_t) n_items + 1));
    lb->hops = malloc(sizeof(int) * ((size_t) n_items + 1));
    lb->kept = malloc(sizeof(int) * ((size_t) n_items + 1));
    if (!lb->dest || !lb->hops || !lb->kept)
      st = aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory for %d items", n_items);
  }
  double *totals = NULL;
  if (st == AISCI_OK && !(totals = malloc(sizeof(double) * (size_t) lb->size)))
    st = aisci_set_error(AISCI_ERR_ALLOC, "ringlb_plan: out of memory for %d totals", lb->size);
  st = agree_lb(lb, CALL_PLAN, st);
  if (st != AISCI_OK) {
    free(totals);
    free_plan(lb);
    return st;
  }
  lb->n_items = n_items;

  /* the one global exchange of data: every rank's total */
  int rc = MPI_Allgather(&local, 1, MPI_DOUBLE, totals, 1, MPI_DOUBLE, lb->comm);
  if (rc) {
    free(totals);
    free_plan(lb);
    return mpi_fail(rc, "Allgather of the rank costs");
  }
  ring_geom g;
  st = aisci_ringlb_geom_build(&g, lb->size, totals, lb->tolerance); /* same result on every rank */
  if (st == AISCI_OK) {
    aisci_ringlb_geom_assign(&g, lb->rank, n_items, cost, lb->dest, lb->hops);
    aisci_ringlb_geom_rounds(&g, lb->rounds);
    lb->balanced = g.balanced;
    lb->mean = g.mean;
    lb->max_before = 0.0;
    for (int r = 0; r < lb->size; r++)
      if (totals[r] > lb->max_before) lb->max_before = totals[r];
    lb->cost_before = local;
    free(g.prefix);
  }
  free(totals);
  if (st != AISCI_OK) {
    free_plan(lb);
    return st;
  }
  lb->nrounds = lb->rounds[0] > lb->rounds[1] ? lb->rounds[0] : lb->rounds[1];
  lb->n_kept = 0;
  for (int i = 0; i < n_items; i++)
    if (lb->hops[i] == 0) lb->kept[lb->n_kept++] = i;
  st = plan_routes(lb, cost);
  if (st != AISCI_OK) {
    free_plan(lb);
    return st;
  }
  /* what every rank reports about the plan: the busiest rank after balancing, the items
   * that move and those passed on */
  int64_t counts[2] = {lb->n_items - lb->n_kept, lb->n_forwarded}, counts_all[2];
  rc = MPI_Allreduce(&lb->cost_after, &lb->max_after, 1, MPI_DOUBLE, MPI_MAX, lb->comm);
  if (!rc) rc = MPI_Allreduce(counts, counts_all, 2, MPI_INT64_T, MPI_SUM, lb->comm);
  if (rc) {
    free_plan(lb);
    return mpi_fail(rc, "Allreduce of the plan statistics");
  }
  lb->n_sent_all = counts_all[0];
  lb->n_forwarded_all = counts_all[1];
  lb->n_plans++;
  lb->state = ST_PLANNED;
  return AISCI_OK;
}

aisci_status aisci_ringlb_kept(const aisci_ringlb *lb, int *n_kept, const int **index)
{
  if (!lb || !n_kept || !index) return aisci_set_error(AISCI_ERR_ARG, "ringlb_kept: NULL argument");
  if (lb->state == ST_NONE) return aisci_set_error(AISCI_ERR_STATE, "ringlb_kept: no plan");
  *n_kept = lb->n_kept;
  *index = lb->kept;
  return AISCI_OK;
}

int aisci_ringlb_destination(const aisci_ringlb *lb, int item)
{
  if (!lb || lb->state == ST_NONE || item < 0 || item >= lb->n_items) return -1;
  return lb->dest[item];
}

aisci_status aisci_ringlb_get_destinations(const aisci_ringlb *lb, int n_items, int *dest)
{
  static const char fn[] = "aisci_ringlb_get_destinations";
  if (!lb || (n_items > 0 && !dest))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL balancer or dest", fn);
  if (lb->state == ST_NONE)
    return aisci_set_error(AISCI_ERR_STATE, "%s: no plan yet (call aisci_ringlb_plan)", fn);
  if (n_items != lb->n_items)
    return aisci_set_error(AISCI_ERR_ARG, "%s: the plan has %d items, asked for %d", fn,
                           lb->n_items, n_items);
  if (n_items > 0) memcpy(dest, lb->dest, sizeof(int) * (size_t) n_items);
  return AISCI_OK;
}

/* ---------------------------------------------------------------------------------------
 * Exchange: payloads along the planned routes, results back along the reversed routes.
 * ------------------------------------------------------------------------------------- */

static aisci_status check_offsets(const char *what, int n, const int64_t *off)
{
  if (n == 0 && !off) return AISCI_OK;
  if (!off)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_send_work: %s is NULL with %d items", what, n);
  if (off[0] < 0)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_send_work: %s[0] = %lld < 0", what,
                           (long long) off[0]);
  for (int i = 0; i < n; i++)
    if (off[i + 1] < off[i])
      return aisci_set_error(AISCI_ERR_ARG,
                             "ringlb_send_work: %s decreases at item %d (%lld < %lld)", what, i,
                             (long long) off[i + 1], (long long) off[i]);
  return AISCI_OK;
}

aisci_status aisci_ringlb_send_work(aisci_ringlb *lb, const int64_t *payload_offset,
                                    const void *payload, const int64_t *result_offset)
{
  return aisci_ringlb_send_work_pending(lb, AISCI_OK, payload_offset, payload, result_offset);
}

aisci_status aisci_ringlb_send_work_pending(aisci_ringlb *lb, aisci_status pending,
                                            const int64_t *payload_offset, const void *payload,
                                            const int64_t *result_offset)
{
  if (!lb) return aisci_set_error(AISCI_ERR_ARG, "ringlb_send_work: lb is NULL");
  aisci_status st = pending;
  const int n = lb->n_items;
  if (st != AISCI_OK) {
    /* this rank failed before the exchange: it only joins the agreement */
  } else if (lb->state == ST_NONE)
    st = aisci_set_error(AISCI_ERR_STATE,
                         "ringlb_send_work: no plan (call aisci_ringlb_plan first)");
  else if (lb->state == ST_SENT)
    st = aisci_set_error(
        AISCI_ERR_STATE,
        "ringlb_send_work: the previous exchange is pending (call return_results first)");
  else if ((st = check_offsets("payload_offset", n, payload_offset)) == AISCI_OK &&
           (st = check_offsets("result_offset", n, result_offset)) == AISCI_OK && n > 0 &&
           payload_offset[n] > payload_offset[0] && !payload)
    st = aisci_set_error(AISCI_ERR_ARG, "ringlb_send_work: payload is NULL with %lld units",
                         (long long) (payload_offset[n] - payload_offset[0]));
  st = agree_lb(lb, CALL_SEND, st);
  if (st != AISCI_OK) return st;

  const size_t unit = lb->unit;
  const unsigned char *pay = payload;
  for (int i = 0; i <= n; i++) lb->own_roff[i] = result_offset ? result_offset[i] : 0;
  lb->bytes_sent = 0;
  lb->slot_poff[0] = 0;
  for (int t = 0; t < lb->nrounds && st == AISCI_OK; t++) {
    int sact[2], ract[2];
    size_t ns[2], nr[2];
    for (int d = 0; d < 2 && st == AISCI_OK; d++) {
      /* message: for each item (payload units, result doubles) as int64, then payloads */
      const int q = 2 * t + d, first = lb->send_off[q], last = lb->send_off[q + 1];
      size_t bytes = 16 * (size_t) (last - first);
      for (int e = first; e < last; e++) {
        const int k = lb->send_src[e];
        bytes += unit *
            (size_t) (t == 0 ? payload_offset[k + 1] - payload_offset[k]
                             : lb->slot_poff[k + 1] - lb->slot_poff[k]);
      }
      sact[d] = last > first;
      ract[d] = lb->recv_off[q + 1] > lb->recv_off[q];
      ns[d] = bytes;
      if (grow((void **) &lb->sbuf[d], bytes + 1, 1, &lb->scap[d])) {
        st = aisci_set_error(AISCI_ERR_ALLOC, "ringlb_send_work: out of memory for %zu bytes",
                             bytes);
        break;
      }
      int64_t *len = (int64_t *) lb->sbuf[d];
      unsigned char *data = lb->sbuf[d] + 16 * (size_t) (last - first);
      for (int e = first; e < last; e++) {
        const int k = lb->send_src[e];
        int64_t pl, rl;
        const unsigned char *src;
        if (t == 0) {
          pl = payload_offset[k + 1] - payload_offset[k];
          rl = lb->own_roff[k + 1] - lb->own_roff[k];
          src = pl ? pay + unit * (size_t) payload_offset[k] : NULL;
        } else {
          pl = lb->slot_poff[k + 1] - lb->slot_poff[k];
          rl = lb->slot_rlen[k];
          src = pl ? lb->slot_payload + unit * (size_t) lb->slot_poff[k] : NULL;
        }
        len[2 * (e - first)] = pl;
        len[2 * (e - first) + 1] = rl;
        if (pl) memcpy(data, src, unit * (size_t) pl);
        data += unit * (size_t) pl;
      }
    }
    if (st == AISCI_OK) st = exchange_probe(lb, TAG_WORK, sact, ns, ract, nr);
    for (int d = 0; d < 2 && st == AISCI_OK; d++) {
      const int q = 2 * t + d, s0 = lb->recv_off[q], cnt = lb->recv_off[q + 1] - s0;
      if (!cnt) continue;
      const int64_t *len = (const int64_t *) lb->rbuf[d];
      size_t need = 16 * (size_t) cnt;
      if (nr[d] >= need)
        for (int e = 0; e < cnt; e++) need += unit * (size_t) len[2 * e];
      if (nr[d] != need) {
        st = aisci_set_error(AISCI_ERR_INTERNAL,
                             "ringlb_send_work: message of %zu bytes, expected %zu", nr[d], need);
        break;
      }
      const int64_t total = lb->slot_poff[s0] + (int64_t) ((need - 16 * (size_t) cnt) / unit);
      if (grow((void **) &lb->slot_payload, unit * (size_t) total + 1, 1, &lb->slot_payload_cap)) {
        st = aisci_set_error(AISCI_ERR_ALLOC,
                             "ringlb_send_work: out of memory for received payloads");
        break;
      }
      const unsigned char *data = lb->rbuf[d] + 16 * (size_t) cnt;
      for (int e = 0; e < cnt; e++) {
        const int s = s0 + e;
        lb->slot_rlen[s] = len[2 * e + 1];
        lb->slot_poff[s + 1] = lb->slot_poff[s] + len[2 * e];
        if (len[2 * e])
          memcpy(lb->slot_payload + unit * (size_t) lb->slot_poff[s], data,
                 unit * (size_t) len[2 * e]);
        data += unit * (size_t) len[2 * e];
      }
    }
  }
  if (st != AISCI_OK) return st; /* the plan stays; this exchange is lost */

  /* foreign items, contiguous; result layouts */
  for (int s = 0; s < lb->n_slots; s++) lb->slot_roff[s + 1] = lb->slot_roff[s] + lb->slot_rlen[s];
  for (int f = 0; f < lb->n_foreign; f++) {
    const int s = lb->foreign_slot[f];
    lb->foreign_poff[f + 1] = lb->foreign_poff[f] + (lb->slot_poff[s + 1] - lb->slot_poff[s]);
    lb->foreign_roff[f + 1] = lb->foreign_roff[f] + lb->slot_rlen[s];
  }
  const size_t fbytes = unit * (size_t) lb->foreign_poff[lb->n_foreign];
  if (grow((void **) &lb->foreign_payload, fbytes + 1, 1, &lb->foreign_payload_cap) ||
      grow((void **) &lb->slot_results, (size_t) lb->slot_roff[lb->n_slots] + 1, sizeof(double),
           &lb->slot_results_cap))
    return aisci_set_error(AISCI_ERR_ALLOC, "ringlb_send_work: out of memory for foreign items");
  for (int f = 0; f < lb->n_foreign; f++) {
    const int s = lb->foreign_slot[f];
    memcpy(lb->foreign_payload + unit * (size_t) lb->foreign_poff[f],
           lb->slot_payload + unit * (size_t) lb->slot_poff[s],
           unit * (size_t) (lb->slot_poff[s + 1] - lb->slot_poff[s]));
  }
  lb->state = ST_SENT;
  return AISCI_OK;
}

aisci_status aisci_ringlb_foreign(const aisci_ringlb *lb, int *n_foreign,
                                  const int64_t **payload_offset, const void **payload,
                                  const int64_t **result_offset)
{
  if (!lb) return aisci_set_error(AISCI_ERR_ARG, "ringlb_foreign: lb is NULL");
  if (lb->state != ST_SENT)
    return aisci_set_error(AISCI_ERR_STATE,
                           "ringlb_foreign: no payloads received (call send_work first)");
  if (n_foreign) *n_foreign = lb->n_foreign;
  if (payload_offset) *payload_offset = lb->foreign_poff;
  if (payload) *payload = lb->foreign_payload;
  if (result_offset) *result_offset = lb->foreign_roff;
  return AISCI_OK;
}

aisci_status aisci_ringlb_foreign_origin(const aisci_ringlb *lb, int f, int *rank, int *index)
{
  if (!lb || !rank || !index)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_foreign_origin: NULL argument");
  if (lb->state == ST_NONE)
    return aisci_set_error(AISCI_ERR_STATE, "ringlb_foreign_origin: no plan");
  if (f < 0 || f >= lb->n_foreign)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_foreign_origin: item %d outside 0..%d", f,
                           lb->n_foreign - 1);
  const int s = lb->foreign_slot[f];
  *rank = lb->slot_origin[2 * s];
  *index = lb->slot_origin[2 * s + 1];
  return AISCI_OK;
}

aisci_status aisci_ringlb_return_results(aisci_ringlb *lb, const double *foreign_results,
                                         double *own_results)
{
  return aisci_ringlb_return_results_pending(lb, AISCI_OK, foreign_results, own_results);
}

aisci_status aisci_ringlb_return_results_pending(aisci_ringlb *lb, aisci_status pending,
                                                 const double *foreign_results,
                                                 double *own_results)
{
  if (!lb) return aisci_set_error(AISCI_ERR_ARG, "ringlb_return_results: lb is NULL");
  aisci_status st = pending;
  if (st != AISCI_OK) {
    /* this rank failed since send_work: it only joins the agreement */
  } else if (lb->state != ST_SENT) {
    st = aisci_set_error(AISCI_ERR_STATE,
                         "ringlb_return_results: no exchange pending (call send_work first)");
  } else if (!foreign_results && lb->foreign_roff[lb->n_foreign] > 0) {
    st = aisci_set_error(AISCI_ERR_ARG,
                         "ringlb_return_results: foreign_results is NULL for %lld doubles",
                         (long long) lb->foreign_roff[lb->n_foreign]);
  } else if (!own_results) {
    for (int i = 0; i < lb->n_items; i++)
      if (lb->hops[i] != 0 && lb->own_roff[i + 1] > lb->own_roff[i]) {
        st = aisci_set_error(AISCI_ERR_ARG,
                             "ringlb_return_results: own_results is NULL but item %d has results "
                             "coming back",
                             i);
        break;
      }
  }
  st = agree_lb(lb, CALL_RETURN, st);
  if (st != AISCI_OK) {
    if (pending != AISCI_OK) lb->state = ST_PLANNED; /* evaluate drops the exchange */
    return st;
  }

  const int to[2] = {lb->next, lb->prev}, from[2] = {lb->prev, lb->next};
  for (int t = lb->nrounds - 1; t >= 0 && st == AISCI_OK; t--) {
    MPI_Request req[4];
    int nreq = 0, rc = MPI_SUCCESS;
    for (int d = 0; d < 2 && st == AISCI_OK; d++) {
      const int q = 2 * t + d;
      /* back to where round t's arrivals came from */
      size_t ns = 0;
      for (int s = lb->recv_off[q]; s < lb->recv_off[q + 1]; s++) ns += (size_t) lb->slot_rlen[s];
      size_t nr = 0;
      for (int e = lb->send_off[q]; e < lb->send_off[q + 1]; e++) {
        const int k = lb->send_src[e];
        nr += (size_t) (t == 0 ? lb->own_roff[k + 1] - lb->own_roff[k] : lb->slot_rlen[k]);
      }
      if (ns > (size_t) INT32_MAX / sizeof(double) || nr > (size_t) INT32_MAX / sizeof(double) ||
          grow((void **) &lb->sbuf[d], sizeof(double) * ns + 1, 1, &lb->scap[d]) ||
          grow((void **) &lb->rbuf[d], sizeof(double) * nr + 1, 1, &lb->rcap[d])) {
        st = aisci_set_error(AISCI_ERR_ALLOC,
                             "ringlb_return_results: no buffer for %zu + %zu doubles", ns, nr);
        break;
      }
      double *out = (double *) lb->sbuf[d];
      for (int s = lb->recv_off[q]; s < lb->recv_off[q + 1]; s++) {
        const int f = lb->slot_foreign[s];
        if (!lb->slot_rlen[s]) continue;
        const double *src = f >= 0 ? foreign_results + lb->foreign_roff[f]
                                   : lb->slot_results + lb->slot_roff[s];
        memcpy(out, src, sizeof(double) * (size_t) lb->slot_rlen[s]);
        out += lb->slot_rlen[s];
      }
      if (lb->send_off[q + 1] > lb->send_off[q] && rc == MPI_SUCCESS)
        rc = MPI_Irecv(lb->rbuf[d], (int) nr, MPI_DOUBLE, to[d], TAG_RESULT + d, lb->comm,
                       &req[nreq++]);
      if (lb->recv_off[q + 1] > lb->recv_off[q] && rc == MPI_SUCCESS) {
        rc = MPI_Isend(lb->sbuf[d], (int) ns, MPI_DOUBLE, from[d], TAG_RESULT + d, lb->comm,
                       &req[nreq++]);
        lb->bytes_sent += (int64_t) (sizeof(double) * ns);
      }
    }
    if (st != AISCI_OK) break;
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      st = mpi_fail(rc, "result exchange");
      break;
    }
    /* results of what left in round t: into the owner's array or the passing slot */
    for (int d = 0; d < 2; d++) {
      const int q = 2 * t + d;
      const double *in = (const double *) lb->rbuf[d];
      for (int e = lb->send_off[q]; e < lb->send_off[q + 1]; e++) {
        const int k = lb->send_src[e];
        const int64_t len = t == 0 ? lb->own_roff[k + 1] - lb->own_roff[k] : lb->slot_rlen[k];
        if (!len) continue;
        double *dst = t == 0 ? own_results + lb->own_roff[k] : lb->slot_results + lb->slot_roff[k];
        memcpy(dst, in, sizeof(double) * (size_t) len);
        in += len;
      }
    }
  }
  lb->state = ST_PLANNED;
  return st;
}

aisci_status aisci_ringlb_get_stats(const aisci_ringlb *lb, aisci_ringlb_stats *out)
{
  if (!lb || !out) return aisci_set_error(AISCI_ERR_ARG, "ringlb_get_stats: NULL argument");
  memset(out, 0, sizeof(*out));
  out->nranks = lb->size;
  out->n_plans = lb->n_plans;
  out->n_evaluations = lb->eval.steps;
  out->model_cpu = lb->eval.model_cpu;
  out->model_wall = lb->eval.model_wall;
  out->exchange_wall = lb->eval.exchange_wall;
  if (lb->state == ST_NONE) return AISCI_OK;
  out->balanced = lb->balanced;
  out->rounds_forward = lb->rounds[0];
  out->rounds_backward = lb->rounds[1];
  out->n_items = lb->n_items;
  out->n_kept = lb->n_kept;
  out->n_sent = lb->n_items - lb->n_kept;
  out->n_foreign = lb->n_foreign;
  out->n_forwarded = lb->n_forwarded;
  out->mean_cost = lb->mean;
  out->max_cost_before = lb->max_before;
  out->cost_before = lb->cost_before;
  out->cost_after = lb->cost_after;
  out->bytes_sent = lb->bytes_sent;
  out->max_cost_after = lb->max_after;
  out->n_sent_all = lb->n_sent_all;
  out->n_forwarded_all = lb->n_forwarded_all;
  return AISCI_OK;
}
