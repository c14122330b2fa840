/* aisci_ringlb under MPI (run with 1, 2 and 4 ranks).
 * Work items are toy atomic environments: payload = (type, n, n x (type_j, dx, dy, dz)) in
 * doubles, cost = 1 + n; the toy "model" gives per item the energy (a sum of pairwise
 * terms) and its gradient with respect to the n relative positions (1 + 3 n doubles).
 * For several distributions (random, a slab with vacuum: work on half the ranks, all on
 * rank 0, already balanced, one huge item, no items at all, zero items on some ranks):
 * plan, check max/mean after balancing against the guarantee (every rank within c_max of
 * the mean; <= 1 + tolerance with many items), exchange, compute kept and foreign items,
 * return the results and compare them bit for bit with computing every own item locally;
 * check each foreign item's origin; reuse the plan for a second step with new positions
 * and other neighbour counts;
 * byte payloads (unit_bytes = 1). Then the error paths: bad arguments on one rank,
 * calls out of order and ranks making different calls must fail every rank with the same
 * status, without hanging, and the balancer must work again afterwards. */
#include "aisci_testing/ringlb.h"
#include "aisci_test.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static uint64_t mix(uint64_t z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double unit_random(uint64_t key) { return (double) (mix(key) >> 11) / 9007199254740992.0; }

/* ---- the toy model ---- */
static void toy_model(const double *env, double *res)
{
  const int ti = (int) env[0], n = (int) env[1];
  double e = 0.0;
  for (int j = 0; j < n; j++) {
    const double *v = env + 2 + 4 * j;
    const double eps = 0.3 + 0.1 * ti + 0.05 * v[0];
    const double r2 = v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    const double w = eps * exp(-r2) * (1.0 + 0.2 * sqrt(r2));
    e += w;
    /* d/dv of eps exp(-r2)(1 + 0.2 r) = eps exp(-r2) (-2 (1 + 0.2 r) + 0.2 / r) v */
    const double r = sqrt(r2), f = eps * exp(-r2) * (-2.0 * (1.0 + 0.2 * r) + (r > 0 ? 0.2 / r : 0.0));
    for (int c = 0; c < 3; c++) res[1 + 3 * j + c] = f * v[1 + c];
  }
  res[0] = e;
}

/* ---- a distribution of items ---- */
typedef struct {
  int n;
  int64_t *poff, *roff; /* n + 1 */
  double *payload, *cost;
} items;

/* item i of rank r in scenario sc, step st: neighbour count from the scenario, positions
 * from a hash of (sc, r, i, j, st), so any rank can regenerate any item */
static int n_neigh(int sc, int r, int i, int step)
{
  const int drift = step ? i % 3 : 0; /* neighbours enter the cutoff between steps */
  switch (sc) {
  case 4: return drift + ((r == 0 && i == 0) ? 2000 : 5 + (int) (10 * unit_random(1000 * r + i)));
  default: return drift + 5 + (int) (50 * unit_random(((uint64_t) sc << 40) + ((uint64_t) r << 20) + (uint64_t) i));
  }
}

static void make_env(int sc, int r, int i, int step, double *env)
{
  const int n = n_neigh(sc, r, i, step);
  uint64_t key = ((uint64_t) sc << 50) ^ ((uint64_t) r << 36) ^ ((uint64_t) i << 12) ^ (uint64_t) step;
  env[0] = (double) (mix(key) % 3);
  env[1] = (double) n;
  for (int j = 0; j < n; j++) {
    uint64_t kj = mix(key + 7919 * (uint64_t) (j + 1));
    env[2 + 4 * j] = (double) (kj % 3);
    for (int c = 0; c < 3; c++) env[3 + 4 * j + c] = 4.0 * unit_random(kj + (uint64_t) c) - 2.0;
  }
}

static int count_items(int sc, int r)
{
  switch (sc) {
  case 0: return 50 + (int) (400 * unit_random(99 + (uint64_t) r)); /* random */
  case 1: return r < (size + 1) / 2 ? 400 : 0;                     /* slab: half the ranks empty */
  case 2: return r == 0 ? 600 : 0;                                  /* all on rank 0 */
  case 3: return 200;                                               /* balanced (counts) */
  case 4: return r == 0 ? 1 : 100;                                  /* one huge item on rank 0 */
  case 5: return 0;                                                 /* nothing anywhere */
  case 6: return r % 2 ? 0 : 300;                                   /* odd ranks empty */
  default: return 0;
  }
}

static void make_items(int sc, int r, int step, items *it)
{
  it->n = count_items(sc, r);
  it->poff = malloc(sizeof(int64_t) * (size_t) (it->n + 1));
  it->roff = malloc(sizeof(int64_t) * (size_t) (it->n + 1));
  it->cost = malloc(sizeof(double) * (size_t) (it->n + 1));
  it->poff[0] = it->roff[0] = 0;
  for (int i = 0; i < it->n; i++) {
    const int n = n_neigh(sc, r, i, step);
    it->poff[i + 1] = it->poff[i] + 2 + 4 * n;
    it->roff[i + 1] = it->roff[i] + 1 + 3 * n;
    it->cost[i] = sc == 3 ? 1.0 : 1.0 + n;
  }
  it->payload = malloc(sizeof(double) * (size_t) (it->poff[it->n] + 1));
  for (int i = 0; i < it->n; i++) make_env(sc, r, i, step, it->payload + it->poff[i]);
}

static void free_items(items *it)
{
  free(it->poff);
  free(it->roff);
  free(it->payload);
  free(it->cost);
}

static int all_same_status(aisci_status st)
{
  int lo, hi, s = (int) st;
  MPI_Allreduce(&s, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&s, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* One step: send_work, compute, return_results, compare with local evaluation. Returns
 * the number of wrong doubles (or -1 on a failed call). */
static long one_step(aisci_ringlb *lb, int sc, int step, int bytes)
{
  items it;
  make_items(sc, rank, step, &it);
  long bad = 0;
  const int64_t nres = it.roff[it.n];
  double *ref = malloc(sizeof(double) * (size_t) (nres + 1));
  double *got = malloc(sizeof(double) * (size_t) (nres + 1));
  for (int i = 0; i < it.n; i++) toy_model(it.payload + it.poff[i], ref + it.roff[i]);
  for (int64_t k = 0; k < nres; k++) got[k] = NAN;

  aisci_status st;
  if (bytes) { /* the same payloads, counted in bytes */
    int64_t *bo = malloc(sizeof(int64_t) * (size_t) (it.n + 1));
    for (int i = 0; i <= it.n; i++) bo[i] = 8 * it.poff[i];
    st = aisci_ringlb_send_work(lb, bo, it.payload, it.roff);
    free(bo);
  } else {
    st = aisci_ringlb_send_work(lb, it.poff, it.payload, it.roff);
  }
  CHECK(st == AISCI_OK, "scenario %d step %d: send_work: %s", sc, step, aisci_last_error());
  if (st != AISCI_OK) {
    bad = -1;
    goto done;
  }
  int nf = -1;
  const int64_t *fpo = NULL, *fro = NULL;
  const void *fpay = NULL;
  CHECK(aisci_ringlb_foreign(lb, &nf, &fpo, &fpay, &fro) == AISCI_OK, "foreign");
  double *fres = malloc(sizeof(double) * (size_t) (fro[nf] + 1));
  long wrong_origin = 0;
  for (int f = 0; f < nf; f++) {
    const double *env = (const double *) ((const char *) fpay + (bytes ? 1 : 8) * fpo[f]);
    const int64_t plen = (fpo[f + 1] - fpo[f]) / (bytes ? 8 : 1);
    CHECK(plen == 2 + 4 * (int64_t) env[1] && fro[f + 1] - fro[f] == 1 + 3 * (int64_t) env[1],
          "foreign item %d: payload %lld, results %lld for %g neighbours", f, (long long) plen,
          (long long) (fro[f + 1] - fro[f]), env[1]);
    toy_model(env, fres + fro[f]);
    /* the payload is the owner's item, bit for bit */
    int orank = -1, oindex = -1;
    aisci_ringlb_foreign_origin(lb, f, &orank, &oindex);
    double *want = malloc(sizeof(double) * (size_t) plen);
    if (orank >= 0 && orank < size && orank != rank && oindex >= 0 && oindex < count_items(sc, orank)) {
      make_env(sc, orank, oindex, step, want);
      wrong_origin += memcmp(want, env, sizeof(double) * (size_t) plen) != 0;
    } else {
      wrong_origin++;
    }
    free(want);
  }
  CHECK(wrong_origin == 0, "scenario %d: %ld foreign items differ from their owner's item", sc, wrong_origin);
  int nk = -1;
  const int *kept = NULL;
  CHECK(aisci_ringlb_kept(lb, &nk, &kept) == AISCI_OK, "kept");
  for (int k = 0; k < nk; k++) toy_model(it.payload + it.poff[kept[k]], got + it.roff[kept[k]]);
  st = aisci_ringlb_return_results(lb, fres, got);
  CHECK(st == AISCI_OK, "scenario %d step %d: return_results: %s", sc, step, aisci_last_error());
  free(fres);
  if (nres) bad = memcmp(ref, got, sizeof(double) * (size_t) nres) != 0;
  if (bad)
    for (int64_t k = 0; k < nres; k++)
      if (memcmp(ref + k, got + k, sizeof(double))) bad++;
done:
  free(ref);
  free(got);
  free_items(&it);
  return bad;
}

static const char *scenario_name[] = {"random", "slab (half the ranks empty)", "all on rank 0",
                                      "balanced", "one huge item", "no items", "odd ranks empty"};

static void test_scenario(int sc, int bytes)
{
  const double tol = 0.05;
  aisci_ringlb_config cfg = {.tolerance = tol, .unit_bytes = bytes ? 1 : 0};
  aisci_ringlb *lb = NULL;
  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_WORLD, &lb) == AISCI_OK && lb, "create: %s", aisci_last_error());
  if (!lb) return;
  CHECK(aisci_ringlb_get_destinations(lb, 0, NULL) == AISCI_ERR_STATE,
        "get_destinations before a plan");
  items it;
  make_items(sc, rank, 0, &it);
  aisci_status st = aisci_ringlb_plan(lb, it.n, it.cost);
  CHECK(st == AISCI_OK, "scenario %d: plan: %s", sc, aisci_last_error());
  aisci_ringlb_stats s;
  CHECK(aisci_ringlb_get_stats(lb, &s) == AISCI_OK, "stats");
  double cmax = 0.0, gcmax, after[2] = {s.cost_after, -s.cost_after}, red[2];
  for (int i = 0; i < it.n; i++) cmax = it.cost[i] > cmax ? it.cost[i] : cmax;
  MPI_Allreduce(&cmax, &gcmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(after, red, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double max_after = red[0], min_after = -red[1], mean = s.mean_cost;
  int counts[4] = {s.n_sent, s.n_foreign, s.n_forwarded, 0}, tot[4];
  MPI_Allreduce(counts, tot, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(tot[0] == tot[1], "scenario %d: %d items sent, %d received", sc, tot[0], tot[1]);
  CHECK(s.n_kept + s.n_sent == it.n && s.cost_before >= 0, "scenario %d: kept + sent != items", sc);
  if (s.balanced) {
    CHECK(mean == 0.0 || s.max_cost_before <= (1 + tol) * mean * (1 + 1e-12),
          "scenario %d: balanced with max/mean %g", sc, s.max_cost_before / mean);
    CHECK(tot[0] == 0, "scenario %d: balanced but %d items move", sc, tot[0]);
  } else {
    CHECK(max_after - mean <= gcmax * (1 + 1e-12) && mean - min_after <= gcmax * (1 + 1e-12),
          "scenario %d: after %g..%g, mean %g, c_max %g", sc, min_after, max_after, mean, gcmax);
    if (sc != 4) CHECK(max_after <= (1 + tol) * mean, "scenario %d: max/mean %g > 1 + %g", sc, max_after / mean, tol);
  }
  if (size == 1) CHECK(s.balanced && s.n_kept == it.n, "one rank must keep everything");
  if (rank == 0 && !bytes)
    printf("np=%d %-28s max/mean before %.4f after %.4f (c_max/mean %.4f), moved %d items, passed on %d, rounds %d/%d\n",
           size, scenario_name[sc], mean > 0 ? s.max_cost_before / mean : 0.0,
           mean > 0 ? max_after / mean : 0.0, mean > 0 ? gcmax / mean : 0.0, tot[0], tot[2],
           s.rounds_forward, s.rounds_backward);
  /* destinations agree with the kept list */
  int nk;
  const int *kept;
  aisci_ringlb_kept(lb, &nk, &kept);
  int wrong = 0;
  for (int k = 0; k < nk; k++) wrong += aisci_ringlb_destination(lb, kept[k]) != rank;
  CHECK(wrong == 0 && aisci_ringlb_destination(lb, it.n) == -1 && aisci_ringlb_destination(lb, -1) == -1,
        "destination");
  {
    int *all = malloc(sizeof(int) * ((size_t) it.n + 1));
    int same = aisci_ringlb_get_destinations(lb, it.n, all) == AISCI_OK;
    for (int k = 0; k < it.n && same; k++) same = all[k] == aisci_ringlb_destination(lb, k);
    CHECK(same, "get_destinations equals destination()");
    CHECK(aisci_ringlb_get_destinations(lb, it.n + 1, all) == AISCI_ERR_ARG,
          "get_destinations: wrong count");
    CHECK(aisci_ringlb_get_destinations(NULL, it.n, all) == AISCI_ERR_ARG,
          "get_destinations: NULL");
    free(all);
  }
  free_items(&it);

  /* two steps with the same plan: positions change, and so do the neighbour counts (the
   * payload and result lengths travel with the items) */
  for (int step = 0; step < 2; step++) {
    long bad = one_step(lb, sc, step, bytes);
    CHECK(bad == 0, "scenario %d%s step %d: %ld results differ from local evaluation", sc,
          bytes ? " (bytes)" : "", step, bad);
  }
  aisci_ringlb_destroy(lb);
}

/* ---- error paths ---- */
static void test_errors(void)
{
  aisci_ringlb_config cfg = aisci_ringlb_config_default();
  CHECK(cfg.tolerance == 0.05 && cfg.unit_bytes == 0, "config_default");
  aisci_ringlb *lb = NULL;
  aisci_status st;

  /* create */
  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_WORLD, NULL) == AISCI_ERR_ARG, "create with NULL out");
  st = aisci_ringlb_create(NULL, MPI_COMM_WORLD, &lb);
  CHECK(st == AISCI_ERR_ARG && !lb && all_same_status(st), "create with NULL cfg: %d", (int) st);
  aisci_ringlb_config bad = {.tolerance = rank == size - 1 ? -0.1 : 0.05};
  st = aisci_ringlb_create(&bad, MPI_COMM_WORLD, &lb);
  CHECK(st == AISCI_ERR_ARG && !lb && all_same_status(st), "negative tolerance on the last rank: %d", (int) st);
  if (rank == size - 1) CHECK(strstr(aisci_last_error(), "tolerance") != NULL, "message: %s", aisci_last_error());
  else if (size > 1) CHECK(strstr(aisci_last_error(), "another rank") != NULL, "message: %s", aisci_last_error());
  bad.tolerance = NAN;
  CHECK(aisci_ringlb_create(&bad, MPI_COMM_WORLD, &lb) == AISCI_ERR_ARG && !lb, "NaN tolerance");
  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_NULL, &lb) == AISCI_ERR_ARG && !lb, "MPI_COMM_NULL");
  aisci_ringlb_destroy(NULL);

  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_WORLD, &lb) == AISCI_OK, "create");
  items it;
  make_items(0, rank, 0, &it);
  double dummy = 0.0;

  /* calls out of order, on every rank: state errors, no communication needed */
  st = aisci_ringlb_send_work(lb, it.poff, it.payload, it.roff);
  CHECK(st == AISCI_ERR_STATE && all_same_status(st), "send_work before plan: %d", (int) st);
  st = aisci_ringlb_return_results(lb, &dummy, &dummy);
  CHECK(st == AISCI_ERR_STATE && all_same_status(st), "return_results before plan: %d", (int) st);
  int nf;
  CHECK(aisci_ringlb_foreign(lb, &nf, NULL, NULL, NULL) == AISCI_ERR_STATE, "foreign before send_work");
  int nk;
  const int *kept;
  CHECK(aisci_ringlb_kept(lb, &nk, &kept) == AISCI_ERR_STATE, "kept before plan");
  int orank, oindex;
  CHECK(aisci_ringlb_foreign_origin(lb, 0, &orank, &oindex) == AISCI_ERR_STATE, "origin before plan");

  /* plan: bad arguments on one rank fail every rank */
  double saved = it.n ? it.cost[it.n - 1] : 0.0;
  if (rank == size - 1 && it.n) it.cost[it.n - 1] = -1.0;
  st = aisci_ringlb_plan(lb, it.n, it.cost);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "negative cost on the last rank: %d", (int) st);
  if (rank == size - 1) {
    char want[32];
    snprintf(want, sizeof(want), "item %d", it.n - 1);
    CHECK(strstr(aisci_last_error(), want) != NULL, "message names %s: %s", want, aisci_last_error());
  }
  if (rank == size - 1 && it.n) it.cost[it.n - 1] = NAN;
  st = aisci_ringlb_plan(lb, it.n, it.cost);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "NaN cost on the last rank: %d", (int) st);
  if (it.n) it.cost[it.n - 1] = saved;
  st = aisci_ringlb_plan(lb, it.n, rank == 0 ? NULL : it.cost);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "NULL cost on rank 0: %d", (int) st);
  st = aisci_ringlb_plan(lb, rank == 0 ? -3 : it.n, it.cost);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "n_items < 0 on rank 0: %d", (int) st);
  CHECK(aisci_ringlb_plan(NULL, it.n, it.cost) == AISCI_ERR_ARG, "plan(NULL)");
  /* a failed plan leaves no plan */
  st = aisci_ringlb_send_work(lb, it.poff, it.payload, it.roff);
  CHECK(st == AISCI_ERR_STATE && all_same_status(st), "send_work after a failed plan: %d", (int) st);

  /* a good plan; then bad send_work arguments on one rank */
  CHECK(aisci_ringlb_plan(lb, it.n, it.cost) == AISCI_OK, "plan: %s", aisci_last_error());
  st = aisci_ringlb_send_work(lb, it.poff, rank == 0 ? NULL : it.payload, it.roff);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "NULL payload on rank 0: %d", (int) st);
  int64_t keep = it.roff[1];
  if (rank == size - 1) it.roff[1] = -5;
  st = aisci_ringlb_send_work(lb, it.poff, it.payload, it.roff);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "decreasing result offsets on the last rank: %d", (int) st);
  if (rank == size - 1) CHECK(strstr(aisci_last_error(), "decreases") != NULL, "message: %s", aisci_last_error());
  it.roff[1] = keep;
  st = aisci_ringlb_send_work(lb, rank == 0 ? NULL : it.poff, it.payload, it.roff);
  CHECK(st == AISCI_ERR_ARG && all_same_status(st), "NULL payload offsets on rank 0: %d", (int) st);
  st = aisci_ringlb_return_results(lb, &dummy, &dummy);
  CHECK(st == AISCI_ERR_STATE && all_same_status(st), "return_results without send_work: %d", (int) st);

  /* a good exchange; a second send_work is refused and the pending one is kept */
  CHECK(aisci_ringlb_send_work(lb, it.poff, it.payload, it.roff) == AISCI_OK, "send_work");
  st = aisci_ringlb_send_work(lb, it.poff, it.payload, it.roff);
  CHECK(st == AISCI_ERR_STATE && all_same_status(st), "send_work twice: %d", (int) st);
  const int64_t *fpo, *fro;
  const void *fpay;
  CHECK(aisci_ringlb_foreign(lb, &nf, &fpo, &fpay, &fro) == AISCI_OK, "foreign after send_work");
  CHECK(aisci_ringlb_foreign_origin(lb, nf, &orank, &oindex) == AISCI_ERR_ARG, "origin out of range");
  CHECK(aisci_ringlb_foreign_origin(lb, 0, NULL, &oindex) == AISCI_ERR_ARG, "origin NULL output");
  int nf_all;
  MPI_Allreduce(&nf, &nf_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (size > 1) CHECK(nf_all > 0, "the error test's random distribution moves nothing");
  double *fres = malloc(sizeof(double) * (size_t) (fro[nf] + 1));
  for (int f = 0; f < nf; f++) toy_model((const double *) fpay + fpo[f], fres + fro[f]);
  /* NULL foreign results on a rank that has some */
  int has = fro[nf] > 0, first_has = size;
  int cand = has ? rank : size;
  MPI_Allreduce(&cand, &first_has, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  double *own = malloc(sizeof(double) * (size_t) (it.roff[it.n] + 1));
  double *ref = malloc(sizeof(double) * (size_t) (it.roff[it.n] + 1));
  for (int i = 0; i < it.n; i++) toy_model(it.payload + it.poff[i], ref + it.roff[i]);
  memcpy(own, ref, sizeof(double) * (size_t) it.roff[it.n]);
  if (first_has < size) {
    for (int64_t k = 0; k < it.roff[it.n]; k++) own[k] = -1.0;
    st = aisci_ringlb_return_results(lb, rank == first_has ? NULL : fres, own);
    CHECK(st == AISCI_ERR_ARG && all_same_status(st), "NULL foreign results on rank %d: %d", first_has, (int) st);
    memcpy(own, ref, sizeof(double) * (size_t) it.roff[it.n]);
  }
  /* mismatched calls: rank 0 returns results while the others plan */
  if (size > 1) {
    st = rank == 0 ? aisci_ringlb_return_results(lb, fres, own) : aisci_ringlb_plan(lb, it.n, it.cost);
    CHECK(st == AISCI_ERR_STATE && all_same_status(st), "mismatched calls: %d", (int) st);
    CHECK(strstr(aisci_last_error(), "mismatched") != NULL, "message: %s", aisci_last_error());
    /* the ranks that called plan lost their plan; plan again everywhere */
    CHECK(aisci_ringlb_plan(lb, it.n, it.cost) == AISCI_OK, "re-plan after a mismatch");
  } else {
    /* the pending exchange is still there: finish it */
    CHECK(aisci_ringlb_return_results(lb, fres, own) == AISCI_OK, "return after the refused calls");
  }
  free(fres);
  free(own);
  free(ref);
  /* and the balancer works again */
  long badv = one_step(lb, 0, 0, 0);
  CHECK(badv == 0, "exchange after the error paths: %ld wrong", badv);

  aisci_ringlb_stats s;
  CHECK(aisci_ringlb_get_stats(lb, NULL) == AISCI_ERR_ARG, "stats NULL");
  CHECK(aisci_ringlb_get_stats(NULL, &s) == AISCI_ERR_ARG, "stats of NULL");
  CHECK(aisci_ringlb_kept(lb, NULL, &kept) == AISCI_ERR_ARG, "kept NULL");
  CHECK(aisci_ringlb_send_work(NULL, it.poff, it.payload, it.roff) == AISCI_ERR_ARG, "send_work(NULL)");
  CHECK(aisci_ringlb_return_results(NULL, NULL, NULL) == AISCI_ERR_ARG, "return_results(NULL)");
  CHECK(aisci_ringlb_foreign(NULL, &nf, NULL, NULL, NULL) == AISCI_ERR_ARG, "foreign(NULL)");
  free_items(&it);
  aisci_ringlb_destroy(lb);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int sc = 0; sc <= 6; sc++) test_scenario(sc, 0);
  test_scenario(0, 1);
  test_scenario(2, 1);
  test_errors();
  int failed = aisci_test_failed, anyfail;
  MPI_Allreduce(&failed, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0) aisci_test_quiet = 1;
  int rc = aisci_test_summary("test_ringlb");
  MPI_Finalize();
  return anyfail ? 1 : rc;
}
