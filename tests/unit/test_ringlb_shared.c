/* Environments with shared neighbour atoms (aisci_ringlb_shared_assign / _graph /
 * _results): two owners ("groups") with random atoms in a box; items = some of their atoms,
 * each with its neighbours within RC keyed by the owner's atom index. A toy graph model
 * with pair and three-body terms (energy of a centre from its own edges and triplets,
 * neighbour types included) run on the shared graph gives, through shared_results, the
 * per-item energy, centre force and virial and the per-neighbour force and per-atom
 * virial that direct per-item evaluation gives; neighbours are merged per group (atom
 * count = centres + distinct keys); the layout does not depend on the order in which the
 * items are passed; shared_assign marks one first reference per (group, key), in the
 * item with the smallest order. Argument errors with their status. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisci_testing/ringlb.h"
#include "aisci_test.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double) ((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

#define RC 3.0
#define RC3 2.0
#define NATOM 120
#define BOX 9.0
static const double w_pair[2][2] = {{0.7, 0.3}, {0.3, 0.2}};
static const double lambda3 = 0.05;

/* the toy model on a graph, with the model C API's conventions (per-atom virial: half of
 * each edge's -r (x) g to each of its atoms) */
static void graph_model(int64_t n_atoms, const int64_t *types, int64_t ne, const int64_t *ei,
                        const double *ev, int64_t nt, const int64_t *tr, double *pae, double *f,
                        double *pav)
{
  double *g = calloc((size_t) (3 * ne + 1), sizeof(double));
  for (int64_t i = 0; i < n_atoms; i++) pae[i] = 0.0;
  for (int64_t e = 0; e < ne; e++) {
    const double *v = ev + 3 * e;
    const double r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    const double w = w_pair[types[ei[e]]][types[ei[ne + e]]] * exp(-r2);
    pae[ei[e]] += w;
    for (int k = 0; k < 3; k++) g[3 * e + k] += -2.0 * w * v[k];
  }
  for (int64_t t = 0; t < nt; t++) {
    const int64_t a = tr[2 * t], b = tr[2 * t + 1];
    const double *va = ev + 3 * a, *vb = ev + 3 * b;
    pae[ei[a]] += lambda3 * (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2]);
    for (int k = 0; k < 3; k++) {
      g[3 * a + k] += lambda3 * vb[k];
      g[3 * b + k] += lambda3 * va[k];
    }
  }
  for (int64_t i = 0; i < 3 * n_atoms; i++) f[i] = 0.0;
  for (int64_t i = 0; i < 9 * n_atoms; i++) pav[i] = 0.0;
  for (int64_t e = 0; e < ne; e++)
    for (int a = 0; a < 3; a++) {
      f[3 * ei[e] + a] += g[3 * e + a];
      f[3 * ei[ne + e] + a] -= g[3 * e + a];
      for (int b = 0; b < 3; b++) {
        const double half = -0.5 * ev[3 * e + a] * g[3 * e + b];
        pav[9 * ei[e] + 3 * a + b] += half;
        pav[9 * ei[ne + e] + 3 * a + b] += half;
      }
    }
  free(g);
}

typedef struct {
  int n_env;
  int64_t *off, *order;
  int *group;
  double *env;
} items;

/* two owners of NATOM atoms each; items = atoms picked with probability 1/2 */
static items make_items(double x[2][NATOM][3], int type[2][NATOM])
{
  items it;
  it.off = malloc(sizeof(int64_t) * (2 * NATOM + 1));
  it.order = malloc(sizeof(int64_t) * 2 * NATOM);
  it.group = malloc(sizeof(int) * 2 * NATOM);
  it.env = malloc(sizeof(double) * (size_t) 2 * NATOM * (2 + 5 * NATOM));
  it.n_env = 0;
  it.off[0] = 0;
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < NATOM; i++) {
      if (uniform() < 0.5) continue;
      double *e = it.env + it.off[it.n_env];
      e[0] = type[o][i];
      int n = 0;
      for (int j = 0; j < NATOM; j++) {
        double d[3], r2 = 0.0;
        for (int k = 0; k < 3; k++) {
          d[k] = x[o][j][k] - x[o][i][k];
          d[k] -= BOX * round(d[k] / BOX);
          r2 += d[k] * d[k];
        }
        if (j == i || r2 >= RC * RC) continue;
        double *v = e + 2 + 5 * n++;
        v[0] = j;
        v[1] = type[o][j];
        v[2] = d[0], v[3] = d[1], v[4] = d[2];
      }
      e[1] = n;
      it.group[it.n_env] = 7 * o + 3; /* any integers */
      it.order[it.n_env] = i;
      it.off[it.n_env + 1] = it.off[it.n_env] + 2 + 5 * n;
      it.n_env++;
    }
  return it;
}

/* expected results of every item, direct per-item evaluation (layout of ringlb.h) */
static void expected(const items *it, const int *first, int virial, const int64_t *roff,
                     double *res)
{
  /* per (group, key): force and per-atom virial summed over all items of the group */
  double (*fj)[NATOM][3] = calloc(2, sizeof *fj);
  double (*vj)[NATOM][9] = calloc(2, sizeof *vj);
  double *out = calloc((size_t) (roff[it->n_env] + 1), sizeof(double));
  for (int c = 0; c < it->n_env; c++) {
    const double *en = it->env + it->off[c];
    const int ti = (int) en[0], n = (int) en[1], o = it->group[c] == 3 ? 0 : 1;
    double *r = out + roff[c];
    double *g = calloc((size_t) (3 * n + 1), sizeof(double));
    for (int j = 0; j < n; j++) {
      const double *v = en + 2 + 5 * j;
      const double r2 = v[2] * v[2] + v[3] * v[3] + v[4] * v[4], w = w_pair[ti][(int) v[1]] * exp(-r2);
      r[0] += w;
      for (int k = 0; k < 3; k++) g[3 * j + k] += -2.0 * w * v[2 + k];
    }
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) {
        const double *va = en + 2 + 5 * a + 2, *vb = en + 2 + 5 * b + 2;
        if (a == b || va[0] * va[0] + va[1] * va[1] + va[2] * va[2] >= RC3 * RC3 ||
            vb[0] * vb[0] + vb[1] * vb[1] + vb[2] * vb[2] >= RC3 * RC3)
          continue;
        r[0] += lambda3 * (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2]);
        for (int k = 0; k < 3; k++) {
          g[3 * a + k] += lambda3 * vb[k];
          g[3 * b + k] += lambda3 * va[k];
        }
      }
    for (int j = 0; j < n; j++) {
      const double *v = en + 2 + 5 * j;
      const int key = (int) v[0];
      for (int a = 0; a < 3; a++) {
        r[1 + a] += g[3 * j + a];
        fj[o][key][a] -= g[3 * j + a];
        for (int b = 0; b < 3; b++) {
          if (virial >= 1) r[4 + 3 * a + b] -= v[2 + a] * g[3 * j + b];
          vj[o][key][3 * a + b] -= 0.5 * v[2 + a] * g[3 * j + b];
        }
      }
    }
    free(g);
  }
  int64_t e = 0;
  for (int c = 0; c < it->n_env; c++) {
    const double *en = it->env + it->off[c];
    const int n = (int) en[1], o = it->group[c] == 3 ? 0 : 1;
    double *r = out + roff[c] + 4 + (virial >= 1 ? 9 : 0);
    for (int j = 0; j < n; j++, e++) {
      if (!first[e]) continue;
      const int key = (int) en[2 + 5 * j];
      for (int k = 0; k < 3; k++) *r++ = fj[o][key][k];
      if (virial >= 2)
        for (int k = 0; k < 9; k++) *r++ = vj[o][key][k];
    }
  }
  memcpy(res, out, sizeof(double) * (size_t) roff[it->n_env]);
  free(fj), free(vj), free(out);
}

static void test_model(int virial)
{
  double x[2][NATOM][3];
  int type[2][NATOM];
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < NATOM; i++) {
      for (int k = 0; k < 3; k++) x[o][i][k] = BOX * uniform();
      type[o][i] = uniform() < 0.4;
    }
  items it = make_items(x, type);
  int64_t ne_all = 0;
  for (int c = 0; c < it.n_env; c++) ne_all += (int64_t) it.env[it.off[c] + 1];
  int *first = malloc(sizeof(int) * (size_t) (ne_all + 1));
  CHECK(aisci_ringlb_shared_assign(it.n_env, it.off, it.env, it.group, it.order, first) == AISCI_OK,
        "assign: %s", aisci_last_error());
  /* one first reference per (group, key), in the item of smallest order */
  int seen[2][NATOM] = {{0}};
  int64_t best[2][NATOM];
  for (int o = 0; o < 2; o++)
    for (int i = 0; i < NATOM; i++) best[o][i] = NATOM;
  int64_t e = 0, distinct = 0;
  for (int c = 0; c < it.n_env; c++)
    for (int j = 0; j < (int) it.env[it.off[c] + 1]; j++, e++) {
      const int o = it.group[c] == 3 ? 0 : 1, key = (int) it.env[it.off[c] + 2 + 5 * j];
      if (it.order[c] < best[o][key]) best[o][key] = it.order[c];
    }
  long bad = 0;
  e = 0;
  for (int c = 0; c < it.n_env; c++)
    for (int j = 0; j < (int) it.env[it.off[c] + 1]; j++, e++) {
      const int o = it.group[c] == 3 ? 0 : 1, key = (int) it.env[it.off[c] + 2 + 5 * j];
      if (first[e]) {
        bad += seen[o][key]++ > 0 || it.order[c] != best[o][key];
        distinct++;
      }
    }
  CHECK(bad == 0, "virial %d: %ld wrong first references", virial, bad);

  int64_t na = -1, ne = -1, nt = -1;
  CHECK(aisci_ringlb_shared_graph(it.n_env, it.off, it.env, it.group, RC3, &na, &ne, &nt, NULL, NULL,
                                  NULL, NULL) == AISCI_OK,
        "sizes: %s", aisci_last_error());
  CHECK(na == it.n_env + distinct && ne == ne_all, "atoms %lld (want %lld), edges %lld (want %lld)",
        (long long) na, (long long) (it.n_env + distinct), (long long) ne, (long long) ne_all);
  int64_t *types = malloc(sizeof(int64_t) * (na + 1)), *ei = malloc(sizeof(int64_t) * (2 * ne + 1));
  int64_t *tr = malloc(sizeof(int64_t) * (2 * nt + 1));
  double *ev = malloc(sizeof(double) * (3 * ne + 1)), *pae = malloc(sizeof(double) * (na + 1));
  double *f = malloc(sizeof(double) * (3 * na + 1)), *pav = malloc(sizeof(double) * (9 * na + 1));
  CHECK(aisci_ringlb_shared_graph(it.n_env, it.off, it.env, it.group, RC3, NULL, NULL, NULL, types, ei,
                                  ev, tr) == AISCI_OK,
        "fill: %s", aisci_last_error());
  graph_model(na, types, ne, ei, ev, nt, tr, pae, f, pav);

  int64_t *roff = malloc(sizeof(int64_t) * (it.n_env + 1));
  roff[0] = 0;
  e = 0;
  for (int c = 0; c < it.n_env; c++) {
    int64_t nf = 0;
    for (int j = 0; j < (int) it.env[it.off[c] + 1]; j++, e++) nf += first[e];
    roff[c + 1] = roff[c] + aisci_ringlb_shared_result_length(nf, virial);
  }
  double *res = malloc(sizeof(double) * (roff[it.n_env] + 1)), *ref = malloc(sizeof(double) * (roff[it.n_env] + 1));
  CHECK(aisci_ringlb_shared_results(it.n_env, it.off, it.env, it.group, it.order, pae, f, pav, virial,
                                    roff, res) == AISCI_OK,
        "results: %s", aisci_last_error());
  expected(&it, first, virial, roff, ref);
  double maxdiff = 0.0;
  for (int64_t k = 0; k < roff[it.n_env]; k++) {
    const double d = fabs(res[k] - ref[k]) / (1.0 + fabs(ref[k]));
    if (d > maxdiff) maxdiff = d;
  }
  CHECK(maxdiff <= 1e-13, "virial %d: shared graph vs direct evaluation differ by %g", virial, maxdiff);

  /* the same items passed in reverse order: same per-item results */
  items rv = it;
  rv.off = malloc(sizeof(int64_t) * (it.n_env + 1));
  rv.order = malloc(sizeof(int64_t) * it.n_env);
  rv.group = malloc(sizeof(int) * it.n_env);
  rv.env = malloc(sizeof(double) * (it.off[it.n_env] + 1));
  rv.off[0] = 0;
  for (int c = 0; c < it.n_env; c++) {
    const int s = it.n_env - 1 - c;
    const int64_t len = it.off[s + 1] - it.off[s];
    memcpy(rv.env + rv.off[c], it.env + it.off[s], sizeof(double) * (size_t) len);
    rv.off[c + 1] = rv.off[c] + len;
    rv.order[c] = it.order[s];
    rv.group[c] = it.group[s];
  }
  int64_t *rroff = malloc(sizeof(int64_t) * (it.n_env + 1));
  rroff[0] = 0;
  for (int c = 0; c < it.n_env; c++) {
    const int s = it.n_env - 1 - c;
    rroff[c + 1] = rroff[c] + roff[s + 1] - roff[s];
  }
  CHECK(aisci_ringlb_shared_graph(rv.n_env, rv.off, rv.env, rv.group, RC3, NULL, NULL, NULL, types, ei,
                                  ev, tr) == AISCI_OK,
        "fill reversed: %s", aisci_last_error());
  graph_model(na, types, ne, ei, ev, nt, tr, pae, f, pav);
  double *rres = malloc(sizeof(double) * (roff[it.n_env] + 1));
  CHECK(aisci_ringlb_shared_results(rv.n_env, rv.off, rv.env, rv.group, rv.order, pae, f, pav, virial,
                                    rroff, rres) == AISCI_OK,
        "results reversed (layout from the forward order): %s", aisci_last_error());
  maxdiff = 0.0;
  for (int c = 0; c < it.n_env; c++) {
    const int s = it.n_env - 1 - c;
    for (int64_t k = 0; k < roff[s + 1] - roff[s]; k++) {
      const double d = fabs(rres[rroff[c] + k] - res[roff[s] + k]) / (1.0 + fabs(res[roff[s] + k]));
      if (d > maxdiff) maxdiff = d;
    }
  }
  CHECK(maxdiff <= 1e-13, "virial %d: reversed item order changes results by %g", virial, maxdiff);
  printf("virial %d: %d items, %lld neighbour entries, %lld graph atoms (star graph: %lld)\n", virial,
         it.n_env, (long long) ne, (long long) na, (long long) (it.n_env + ne));
  free(first), free(types), free(ei), free(tr), free(ev), free(pae), free(f), free(pav), free(roff);
  free(res), free(ref), free(rroff), free(rres);
  free(it.off), free(it.order), free(it.group), free(it.env);
  free(rv.off), free(rv.order), free(rv.group), free(rv.env);
}

static void test_errors(void)
{
  /* one item, two neighbours with keys 4 and 9 */
  double env[2 + 5 * 2] = {0, 2, 4, 1, 0.5, 0, 0, 9, 0, 0, 1.0, 0};
  int64_t off[2] = {0, 12}, order[1] = {0}, na, ne, nt, types[3], ei[4];
  int group[1] = {0}, first[2];
  double ev[6], pae[3] = {1, 2, 3}, f[9] = {0}, pav[27] = {0}, res[64];
  CHECK(aisci_ringlb_shared_graph(1, off, env, group, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_OK &&
            na == 3 && ne == 2 && nt == 0,
        "valid item");
  CHECK(aisci_ringlb_shared_graph(1, off, env, group, 0.0, NULL, NULL, NULL, types, ei, ev, NULL) == AISCI_OK &&
            ei[0] == 0 && ei[1] == 0 && ei[2] == 1 && ei[3] == 2 && types[1] == 1 && types[2] == 0,
        "fill: neighbours in key order");
  CHECK(aisci_ringlb_shared_assign(1, off, env, group, order, first) == AISCI_OK && first[0] && first[1],
        "two distinct keys: two first references");
  CHECK(aisci_ringlb_shared_result_length(2, 0) == 10 && aisci_ringlb_shared_result_length(2, 1) == 19 &&
            aisci_ringlb_shared_result_length(2, 2) == 37,
        "result lengths");
  CHECK(aisci_ringlb_shared_graph(0, NULL, NULL, NULL, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_OK &&
            na == 0 && ne == 0,
        "no items");
  CHECK(aisci_ringlb_shared_graph(1, off, env, NULL, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG,
        "NULL group");
  CHECK(aisci_ringlb_shared_graph(-1, off, env, group, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG,
        "n_env < 0");
  int64_t short_off[2] = {0, 10};
  CHECK(aisci_ringlb_shared_graph(1, short_off, env, group, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) ==
            AISCI_ERR_ARG,
        "length != 2 + 5 n");
  CHECK(strstr(aisci_last_error(), "2 + 5 x 2") != NULL, "message gives the layout: %s", aisci_last_error());
  env[7] = -1;
  CHECK(aisci_ringlb_shared_assign(1, off, env, group, order, first) == AISCI_ERR_ARG, "key -1");
  CHECK(strstr(aisci_last_error(), "neighbour 1") != NULL, "message names the neighbour: %s", aisci_last_error());
  env[7] = 9;
  CHECK(aisci_ringlb_shared_assign(1, off, env, group, NULL, first) == AISCI_ERR_ARG, "NULL order");
  int64_t roff[2] = {0, 19};
  CHECK(aisci_ringlb_shared_results(1, off, env, group, order, pae, f, pav, 3, roff, res) == AISCI_ERR_ARG,
        "virial 3");
  CHECK(aisci_ringlb_shared_results(1, off, env, group, order, pae, f, NULL, 1, roff, res) == AISCI_ERR_ARG,
        "virial without per_atom_virial");
  CHECK(aisci_ringlb_shared_results(1, off, env, group, order, pae, f, pav, 2, roff, res) == AISCI_ERR_ARG,
        "result length 19 with virial 2 (needs 37)");
  CHECK(strstr(aisci_last_error(), "needs 37") != NULL, "message gives the length: %s", aisci_last_error());
  f[0] = 1.0, f[3] = 2.0, pav[9] = 0.25;
  CHECK(aisci_ringlb_shared_results(1, off, env, group, order, pae, f, pav, 1, roff, res) == AISCI_OK &&
            res[0] == 1.0 && res[1] == 1.0 && res[4] == 0.0 && res[13] == 2.0,
        "layout: E, F_c, W_c, then F of the first neighbour");
}

int main(void)
{
  test_model(0);
  test_model(1);
  test_model(2);
  test_errors();
  return aisci_test_summary("test_ringlb_shared");
}
