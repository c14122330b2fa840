/* Private interface between the ring balancer's files (not installed):
 * ringlb_plan.c      pure planning, the geometry of the balanced circulation (no MPI);
 * ringlb.c           the balancer object: plan agreement, routing and MPI transport;
 * ringlb_env.c       the environments that travel: wire format, shared-neighbour graphs,
 *                    results and their application at the owner;
 * ringlb_evaluate.c  one balanced evaluation: the steps above in order, the model called
 *                    back, statistics. */
#ifndef AISCI_RINGLB_INTERNAL_H
#define AISCI_RINGLB_INTERNAL_H

#include "aisci/ringlb.h"
#include "aisci_testing/ringlb.h"

typedef struct {
  int n;
  double *prefix; /* n + 1 */
  double mean, shift;
  int balanced;
} ring_geom;

/* Geometry from every rank's total cost (same on every rank); g->prefix is malloc'ed. */
aisci_status aisci_ringlb_geom_build(ring_geom *g, int n, const double *rank_cost, double tol);
/* Destination and signed hops of rank o's items. */
void aisci_ringlb_geom_assign(const ring_geom *g, int o, int n_items, const double *cost, int *dest,
                              int *hops);
/* Bounds on the longest forward and backward route of any rank's item. */
void aisci_ringlb_geom_rounds(const ring_geom *g, int rounds[2]);
/* The most neighbour entries a payload of @p payload_units doubles can hold (ringlb_env.c,
 * the owner of the wire format): the length of aisci_ringlb_env_pack's `first`, less 1. */
int64_t aisci_ringlb_env_max_entries(int64_t payload_units);

/* Costs finite and >= 0; their sum. */
aisci_status aisci_ringlb_check_costs(int n_items, const double *cost, double *sum);

/* State of aisci_ringlb_evaluate inside the balancer: every buffer grows and is reused
 * (capacities in elements, aisci_grow). */
typedef struct {
  int planned;           /* the plan was made by evaluate for planned_build */
  int64_t planned_build;
  aisci_graph *kept;     /* graph of the kept items */
  int64_t *estart;       /* n_items + 1: edge range per item */
  double *cost;          /* n_items */
  int64_t *poff, *roff;  /* n_items + 1: payload and result layout of the own items */
  double *payload;       /* packed environments of the sent items */
  int *first;            /* first-reference flags of the sent items' neighbour entries */
  double *own_results;   /* results of the sent items, own layout */
  double *f_results;     /* results of the foreign items */
  int *f_group;          /* n_foreign: owner rank */
  int64_t *f_order;      /* n_foreign: owner's index */
  int64_t *s_types, *s_index, *s_trip; /* graph of the foreign items */
  double *s_vec, *s_energy, *s_forces, *s_virial;
  double *e_scratch;     /* per-atom energies when the caller wants none */
  int64_t cap_estart, cap_cost, cap_poff, cap_roff, cap_payload, cap_first, cap_own, cap_fres,
      cap_group, cap_order, cap_stypes, cap_sindex, cap_strip, cap_svec, cap_senergy,
      cap_sforces, cap_svirial, cap_escratch;
  int64_t steps;         /* successful evaluations */
  double model_cpu, model_wall, exchange_wall;
} ringlb_eval;

/* Header of a moving item in the planning pass (24 bytes on the wire). */
typedef struct {
  int32_t origin_rank, origin_index, dest, pad;
  double cost;
} ring_head;

struct aisci_ringlb {
  MPI_Comm comm; /* duplicate of the caller's communicator */
  int rank, size, prev, next;
  double tolerance;
  size_t unit;
  int state;

  /* plan */
  int n_items;
  int *dest, *hops;       /* n_items */
  int *kept, n_kept;      /* own items computed here, ascending */
  int rounds[2], nrounds; /* hop rounds per direction, max of both */
  int balanced;
  double mean, max_before, cost_before, cost_after;
  double max_after;                      /* largest rank cost after balancing */
  int64_t n_sent_all, n_forwarded_all;   /* summed over the ranks */
  int64_t n_plans;                       /* successful plans since create */
  /* per (round t, direction d), index q = 2 t + d: */
  int *send_off, *send_src; /* send_src[send_off[q]..send_off[q+1]): own item (t = 0) or slot */
  int *recv_off;            /* slots recv_off[q]..recv_off[q+1]) arrived in (t, d) */
  int n_slots, n_forwarded;
  int *slot_foreign;    /* n_slots: foreign index, or -1 if passed on */
  int32_t *slot_origin; /* n_slots x 2: owner rank and index */
  int *slot_dest;       /* n_slots: destination rank */
  double *slot_cost;    /* n_slots: cost estimate */
  int n_foreign;
  int *foreign_slot; /* n_foreign */

  /* exchange */
  int64_t *own_roff;  /* n_items + 1: owner's result layout (copy) */
  int64_t *slot_poff; /* n_slots + 1 payload offsets (units) into slot_payload */
  int64_t *slot_rlen; /* n_slots result lengths (doubles) */
  int64_t *slot_roff; /* n_slots + 1 offsets into slot_results */
  unsigned char *slot_payload;
  int64_t slot_payload_cap;
  double *slot_results;
  int64_t slot_results_cap;
  int64_t *foreign_poff, *foreign_roff; /* n_foreign + 1 */
  unsigned char *foreign_payload;
  int64_t foreign_payload_cap;
  int64_t bytes_sent;

  /* message buffers: send per direction, receive per direction */
  unsigned char *sbuf[2], *rbuf[2];
  int64_t scap[2], rcap[2];

  /* the last agreement: 1 if it failed (on every rank), this rank's status going in */
  int agree_failed;
  aisci_status agree_own;

  ringlb_eval eval; /* aisci_ringlb_evaluate's plan identifier, scratch and timers */
};


/* The collective calls with a status that this rank brings in (a failure before the
 * call, e.g. of the model): it joins the call's agreement, so every rank fails together.
 * With pending = AISCI_OK they are the exported calls. A failed agreement sets
 * lb->agree_failed; return_results then also drops the pending exchange. */
aisci_status aisci_ringlb_plan_pending(aisci_ringlb *lb, aisci_status pending, int n_items,
                                       const double *cost);
aisci_status aisci_ringlb_send_work_pending(aisci_ringlb *lb, aisci_status pending,
                                            const int64_t *payload_offset, const void *payload,
                                            const int64_t *result_offset);
aisci_status aisci_ringlb_return_results_pending(aisci_ringlb *lb, aisci_status pending,
                                                 const double *foreign_results,
                                                 double *own_results);
/* Free evaluate's buffers (destroy). */
void aisci_ringlb_eval_free(ringlb_eval *ev);

#endif
