/* The wire format of balance ring, both ends in the core: the owner packs the
 * environments of its sent items (aisci_ringlb_env_pack), the computing ranks evaluate
 * them on the shared-neighbour graph (aisci_ringlb_shared_graph / _results), the owner
 * evaluates its kept items on its own subgraph (aisci_graph_keep_centres) and applies
 * the results (aisci_ringlb_env_apply). With a toy one-cutoff model the round trip must
 * reproduce the model on the whole graph: energies, forces, global and per-atom virial.
 * No MPI: the "ranks" are loops. Also the exact payload layout and the error paths. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisci/graph.h"
#include "aisci_testing/ringlb.h"
#include "aisci_test.h"

/* Toy one-cutoff model: E_c = sum over c's edges of phi(v) = a |v|^2 + b v_x + c v_x v_y
 * (types scale a), g = dphi / dv; F_c += g, F_j -= g; per-atom virial -r (x) g / 2 on
 * both ends of each edge. Centres 0..n_energy-1 get energies. */
static void toy(int64_t n_atoms, const int64_t *types, int64_t ne, const int64_t *ei,
                const double *ev, int64_t n_energy, double *e_atom, double *f, double *w,
                double *wa)
{
  memset(f, 0, sizeof(double) * 3 * (size_t) n_atoms);
  memset(e_atom, 0, sizeof(double) * (size_t) n_energy);
  if (wa) memset(wa, 0, sizeof(double) * 9 * (size_t) n_atoms);
  if (w) memset(w, 0, sizeof(double) * 9);
  for (int64_t e = 0; e < ne; e++) {
    const int64_t i = ei[e], j = ei[ne + e];
    const double *v = ev + 3 * e;
    const double a = 0.3 + 0.1 * (double) types[j], b = -0.2, c = 0.05;
    const double phi = a * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + b * v[0] + c * v[0] * v[1];
    const double g[3] = {2 * a * v[0] + b + c * v[1], 2 * a * v[1] + c * v[0], 2 * a * v[2]};
    if (i < n_energy) e_atom[i] += phi;
    for (int d = 0; d < 3; d++) {
      f[3 * i + d] += g[d];
      f[3 * j + d] -= g[d];
    }
    for (int p = 0; p < 3; p++)
      for (int q = 0; q < 3; q++) {
        const double x = -v[p] * g[q];
        if (w) w[3 * p + q] += x;
        if (wa) {
          wa[9 * i + 3 * p + q] += 0.5 * x;
          wa[9 * j + 3 * p + q] += 0.5 * x;
        }
      }
  }
}

static void round_trip(int virial)
{
  aisci_test_rng_state = 0xa11ce + (uint64_t) virial;
  enum { N = 90, NL = 40, RANK = 0, NRANK = 3 };
  const double rc = 2.2, rc3 = 1.7;
  double x[3 * N];
  int64_t types[N];
  for (int i = 0; i < N; i++) {
    for (int d = 0; d < 3; d++) x[3 * i + d] = 7.0 * aisci_test_urand();
    types[i] = i % 3;
  }
  aisci_graph *g = NULL, *kept = NULL;
  CHECK(aisci_graph_create(&g) == AISCI_OK && aisci_graph_create(&kept) == AISCI_OK, "create");
  CHECK(aisci_graph_build(g, N, x, NL, rc, rc3) == AISCI_OK, "build");
  const int64_t ne = aisci_graph_num_edges(g);
  const int64_t *ei = aisci_graph_edge_index(g);
  const double *ev = aisci_graph_edge_vec(g);
  int dest[NL];
  for (int k = 0; k < NL; k++) dest[k] = (int) (aisci_test_rand64() % NRANK);
  int64_t estart[NL + 1], tstart[NL + 1];
  CHECK(aisci_graph_centre_ranges(g, NL, estart, tstart) == AISCI_OK, "ranges");

  /* reference: the toy model on the whole graph */
  double e_ref[NL], f_ref[3 * N], w_ref[9], wa_ref[9 * N];
  toy(N, types, ne, ei, ev, NL, e_ref, f_ref, w_ref, wa_ref);

  /* owner: pack */
  int64_t poff[NL + 1], roff[NL + 1];
  CHECK(aisci_ringlb_env_pack(NL, dest, RANK, types, estart, ne, ei, ev, virial, poff, NULL, NULL,
                              NULL) == AISCI_OK,
        "pack sizes: %s", aisci_last_error());
  double *payload = malloc(sizeof(double) * ((size_t) poff[NL] + 1));
  int *first = malloc(sizeof(int) * ((size_t) poff[NL] / 5 + 1));
  CHECK(aisci_ringlb_env_pack(NL, dest, RANK, types, estart, ne, ei, ev, virial, poff, payload,
                              first, roff) == AISCI_OK,
        "pack: %s", aisci_last_error());
  /* the layout: type_k, m, m x (key, type_j, x_j - x_i), bit for bit */
  int64_t layout_bad = 0;
  for (int k = 0; k < NL; k++) {
    const int64_t m = estart[k + 1] - estart[k];
    if (dest[k] == RANK) {
      layout_bad += poff[k + 1] != poff[k] || roff[k + 1] != roff[k];
      continue;
    }
    const double *p = payload + poff[k];
    layout_bad += poff[k + 1] - poff[k] != 2 + 5 * m || p[0] != (double) types[k] || p[1] != m;
    for (int64_t e = estart[k]; e < estart[k + 1]; e++) {
      const double *q = p + 2 + 5 * (e - estart[k]);
      layout_bad += q[0] != (double) ei[ne + e] || q[1] != (double) types[ei[ne + e]] ||
          memcmp(q + 2, ev + 3 * e, 3 * sizeof(double)) != 0;
    }
  }
  CHECK(layout_bad == 0, "payload layout (%lld mismatches)", (long long) layout_bad);

  /* owner: kept items on its own subgraph */
  CHECK(aisci_graph_keep_centres(kept, g, NL, dest, RANK) == AISCI_OK, "keep: %s",
        aisci_last_error());
  int64_t want_e = 0, want_t = 0;
  for (int k = 0; k < NL; k++)
    if (dest[k] == RANK) {
      want_e += estart[k + 1] - estart[k];
      want_t += tstart[k + 1] - tstart[k];
    }
  const int64_t kne = aisci_graph_num_edges(kept), knt = aisci_graph_num_triplets(kept);
  const int64_t *kei = aisci_graph_edge_index(kept), *ktr = aisci_graph_triplets(kept);
  int64_t trip_bad = 0;
  for (int64_t t = 0; t < knt; t++)
    trip_bad += kei[ktr[2 * t]] != kei[ktr[2 * t + 1]] || dest[kei[ktr[2 * t]]] != RANK;
  CHECK(kne == want_e && knt == want_t && want_t > 0 && trip_bad == 0,
        "kept subgraph: %lld edges (%lld), %lld triplets (%lld), %lld bad", (long long) kne,
        (long long) want_e, (long long) knt, (long long) want_t, (long long) trip_bad);
  double e_at[NL], f[3 * N], w[9], wa[9 * N];
  toy(N, types, kne, kei, aisci_graph_edge_vec(kept), NL, e_at, f, w, wa);

  /* computing ranks: their foreign items (group = origin = RANK, order = item index) */
  double *own_results = calloc((size_t) roff[NL] + 1, sizeof(double));
  for (int d = 0; d < NRANK; d++) {
    if (d == RANK) continue;
    int nf = 0;
    int64_t foff[NL + 1], froff[NL + 1], order[NL];
    int group[NL];
    double *fpay = malloc(sizeof(double) * ((size_t) poff[NL] + 1));
    foff[0] = froff[0] = 0;
    for (int k = 0; k < NL; k++) {
      if (dest[k] != d) continue;
      memcpy(fpay + foff[nf], payload + poff[k], sizeof(double) * (size_t) (poff[k + 1] - poff[k]));
      foff[nf + 1] = foff[nf] + poff[k + 1] - poff[k];
      froff[nf + 1] = froff[nf] + roff[k + 1] - roff[k];
      order[nf] = k;
      group[nf++] = RANK;
    }
    int64_t sa = 0, se = 0, st3 = 0;
    CHECK(aisci_ringlb_shared_graph(nf, foff, fpay, group, rc3, &sa, &se, &st3, NULL, NULL, NULL,
                                    NULL) == AISCI_OK,
          "shared sizes");
    int64_t *stypes = malloc(sizeof(int64_t) * ((size_t) sa + 1));
    int64_t *sidx = malloc(sizeof(int64_t) * (2 * (size_t) se + 1));
    double *svec = malloc(sizeof(double) * (3 * (size_t) se + 1));
    int64_t *strip = malloc(sizeof(int64_t) * (2 * (size_t) st3 + 1));
    CHECK(aisci_ringlb_shared_graph(nf, foff, fpay, group, rc3, NULL, NULL, NULL, stypes, sidx,
                                    svec, strip) == AISCI_OK,
          "shared graph");
    double *se_at = malloc(sizeof(double) * ((size_t) sa + 1));
    double *sf = malloc(sizeof(double) * (3 * (size_t) sa + 1));
    double *swa = malloc(sizeof(double) * (9 * (size_t) sa + 1));
    toy(sa, stypes, se, sidx, svec, nf, se_at, sf, NULL, swa);
    double *fres = malloc(sizeof(double) * ((size_t) froff[nf] + 1));
    CHECK(aisci_ringlb_shared_results(nf, foff, fpay, group, order, se_at, sf, swa, virial, froff,
                                      fres) == AISCI_OK,
          "shared results: %s", aisci_last_error());
    for (int c = 0; c < nf; c++)
      memcpy(own_results + roff[order[c]], fres + froff[c],
             sizeof(double) * (size_t) (froff[c + 1] - froff[c]));
    free(fpay), free(stypes), free(sidx), free(svec), free(strip), free(se_at), free(sf);
    free(swa), free(fres);
  }

  /* owner: apply, then compare with the whole-graph model */
  CHECK(aisci_ringlb_env_apply(NL, dest, RANK, estart, ne, ei, first, roff, own_results, e_at, f,
                               virial >= 1 ? w : NULL, virial == 2 ? wa : NULL) == AISCI_OK,
        "apply: %s", aisci_last_error());
  double de = 0, df = 0, dw = 0, dwa = 0;
  for (int k = 0; k < NL; k++) de = fmax(de, fabs(e_at[k] - e_ref[k]));
  for (int k = 0; k < 3 * N; k++) df = fmax(df, fabs(f[k] - f_ref[k]));
  for (int k = 0; k < 9; k++) dw = fmax(dw, fabs(w[k] - w_ref[k]));
  for (int k = 0; k < 9 * N; k++) dwa = fmax(dwa, fabs(wa[k] - wa_ref[k]));
  CHECK(de < 1e-12 && df < 1e-12, "virial %d: energies (%g) and forces (%g) as the whole graph",
        virial, de, df);
  if (virial >= 1)
    CHECK(dw < 1e-11, "virial %d: global virial as the whole graph (%g)", virial, dw);
  if (virial == 2) CHECK(dwa < 1e-12, "per-atom virial as the whole graph (%g)", dwa);

  /* error paths */
  CHECK(aisci_ringlb_env_pack(NL, dest, RANK, types, estart, ne, ei, ev, 3, poff, NULL, NULL,
                              NULL) == AISCI_ERR_ARG,
        "pack: virial 3");
  CHECK(aisci_ringlb_env_pack(NL, dest, RANK, types, estart, ne, ei, ev, virial, NULL, NULL, NULL,
                              NULL) == AISCI_ERR_ARG,
        "pack: NULL payload_offset");
  CHECK(aisci_ringlb_env_pack(NL, dest, RANK, NULL, estart, ne, ei, ev, virial, poff, payload,
                              first, roff) == AISCI_ERR_ARG,
        "pack: NULL types");
  CHECK(aisci_ringlb_env_pack(NL, dest, RANK, types, estart, estart[NL] - 1, ei, ev, virial, poff,
                              NULL, NULL, NULL) == AISCI_ERR_ARG,
        "pack: edge range beyond n_edges");
  const int other = virial == 2 ? 1 : 2;
  CHECK(aisci_ringlb_env_apply(NL, dest, RANK, estart, ne, ei, first, roff, own_results, e_at, f, w,
                               other == 2 ? wa : NULL) == AISCI_ERR_ARG,
        "apply: virial level %d on a layout for %d", other, virial);
  CHECK(aisci_ringlb_env_apply(NL, dest, RANK, estart, ne, ei, first, roff, own_results, NULL, f,
                               NULL, NULL) == AISCI_ERR_ARG,
        "apply: NULL energy");
  CHECK(aisci_graph_keep_centres(g, g, NL, dest, RANK) == AISCI_ERR_ARG, "keep: out == g");
  CHECK(aisci_graph_keep_centres(kept, g, NL - 5, dest, RANK) == AISCI_ERR_ARG &&
            aisci_graph_num_edges(kept) == 0,
        "keep: centre outside n_centres");
  CHECK(aisci_graph_centre_ranges(g, NL - 5, estart, NULL) == AISCI_ERR_ARG,
        "ranges: centre outside n_centres");
  free(payload), free(first), free(own_results);
  aisci_graph_destroy(g);
  aisci_graph_destroy(kept);
}

int main(void)
{
  round_trip(0);
  round_trip(1);
  round_trip(2);
  return aisci_test_summary("test_ringlb_env");
}
