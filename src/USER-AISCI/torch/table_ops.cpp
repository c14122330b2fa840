/* DeePMD-kit's tabulated-embedding operators (deepmd::tabulate_fusion_*): our
 * implementation, registered under DeePMD-kit's operator names and schemas.
 *
 * `dp compress` replaces the embedding networks of a descriptor by tables: the input
 * axis of a network (s(r) for se_e2_a/se_e2_r/se_atten, the angular product
 * s_j s_k r_j.r_k for se_e3/se_e3_tebd) is cut into intervals, and on each interval
 * every output channel k is a fifth-order polynomial a0 + a1 t + ... + a5 t^5 of the
 * offset t from the interval's left end. A table is [intervals, 6 x channels] (the six
 * coefficients of channel k at columns 6k..6k+5); table_info = (lower, upper, max,
 * stride0, stride1, check frequency): intervals of stride0 on [lower, upper), of stride1
 * on [upper, max), and for the angular tables (se_t, se_t_tebd) also of stride1 on
 * [-max, lower). Outside the table the value continues linearly with the slope at the
 * table's end (DeePMD-kit 3.2's C1 extrapolation); inputs are never clamped.
 *
 * Each operator fuses the table lookup with what the uncompressed descriptor does with
 * the network's output:
 *   se_a      G[i, m, k] = sum_j em[i, j, m] g_k(em_x[i, j])           (se_e2_a)
 *   se_atten  same with g_k (1 + two_embed[i, j, k])                    (DPA1, DPA2 repinit)
 *   se_t      G[i, k]    = sum_jl em_x[i, j, l] g_k(em_x[i, j, l])      (se_e3)
 *   se_t_tebd G[i, j, l, k] = g_k(em_x[i, j, l])                        (se_e3_tebd)
 *   se_r      G[i, j, k] = g_k(em[i, j])                                (se_e2_r)
 * For se_a/se_atten with sorted neighbours (padding last), the trailing run of padding
 * entries (same input as the last entry, zero direction) is added once with its count,
 * as DeePMD-kit does; the padding entries after the first then get zero gradient.
 *
 * Gradients: every operator is a torch::autograd::Function whose backward gives the
 * derivatives with respect to em_x, em and two_embed (forces and virial of a
 * compressed model); the table and table_info are constants. Second derivatives
 * (autograd.grad with create_graph, i.e. training through a compressed model) are
 * refused by name. CPU tensors only; float32 and float64. Threads: at::parallel_for
 * over the local atoms (pair_style aisci's `threads`).
 *
 * Each operator is defined only if no library of this process (DeePMD-kit's own
 * libdeepmd_op_pt) has defined it already: a second definition would abort the process.
 * A definition that fails (an incompatible libtorch) is left out silently: a model that
 * names the operator is then refused at load with a message naming it (deepmd_model.cpp). */
#include "deepmd_model.h"

#include <ATen/Parallel.h>
#include <torch/library.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/* The intervals of one table, read from table_info. locate() gives the interval of x,
 * the offset t within it and, outside the table, the distance beyond its end (the
 * linear extrapolation's step); the arithmetic follows DeePMD-kit's, so that both pick
 * the same interval at its edges. */
template <typename T> struct Grid {
  T lower, upper, max, min, s0, s1;
  bool angular;    // intervals of stride1 also on [-max, lower)
  int n_below;     // angular: intervals on [-max, lower)
  int first_tail;  // index of the first interval at or above upper
  int last;        // index of the interval that ends at max

  Grid(const Tensor &info, bool angular_, int64_t rows, const char *op) : angular(angular_)
  {
    TORCH_CHECK(info.numel() >= 5, "deepmd::", op, ": table_info has ", info.numel(),
                " values, expected at least 5 (lower, upper, max, stride0, stride1)");
    const Tensor d = info.to(torch::kCPU, torch::kDouble).contiguous();
    const double *p = d.data_ptr<double>();
    lower = static_cast<T>(p[0]);
    upper = static_cast<T>(p[1]);
    max = static_cast<T>(p[2]);
    s0 = static_cast<T>(p[3]);
    s1 = static_cast<T>(p[4]);
    min = angular ? -max : lower;
    TORCH_CHECK(s0 > 0 && s1 > 0 && lower <= upper && upper <= max && min <= lower,
                "deepmd::", op, ": table_info (lower ", p[0], ", upper ", p[1], ", max ", p[2],
                ", stride0 ", p[3], ", stride1 ", p[4], ") does not describe a table");
    n_below = angular ? static_cast<int>((lower - min) / s1) : 0;
    first_tail = n_below + static_cast<int>((upper - lower) / s0);
    last = first_tail + static_cast<int>((std::nextafter(max, min) - upper) / s1);
    TORCH_CHECK(last >= 0 && last < rows, "deepmd::", op, ": table_info describes ", last + 1,
                " intervals but the table has ", rows, " rows");
  }

  void locate(T x, int &idx, T &t, T &beyond) const
  {
    beyond = T(0);
    if (x < min) {
      idx = 0;
      t = T(0);
      beyond = x - min;
    } else if (angular && x < lower) {
      idx = static_cast<int>((x - min) / s1);
      t = x - (idx * s1 + min);
    } else if (x < upper) {
      const int k = static_cast<int>((x - lower) / s0);
      idx = n_below + k;
      t = x - (k * s0 + lower);
    } else if (x < max) {
      const int k = static_cast<int>((x - upper) / s1);
      idx = first_tail + k;
      t = x - (k * s1 + upper);
    } else {    // at or above max (or NaN, which then propagates)
      idx = last;
      t = max - ((last - first_tail) * s1 + upper);
      beyond = x - max;
    }
    idx = std::min(idx, last);
  }
};

/* Value and slope of one channel's polynomial at offset t, continued linearly by beyond. */
template <typename T> inline void channel(const T *c, T t, T beyond, T &value, T &slope)
{
  slope = c[1] + (T(2) * c[2] + (T(3) * c[3] + (T(4) * c[4] + T(5) * c[5] * t) * t) * t) * t;
  value = c[0] + (c[1] + (c[2] + (c[3] + (c[4] + c[5] * t) * t) * t) * t) * t + slope * beyond;
}

/* ---------------------------------------------------------------- checks */

void check_table(const char *op, const Tensor &table, int64_t channels)
{
  TORCH_CHECK(table.device().is_cpu(), "deepmd::", op, ": the table is on ", table.device(),
              "; this build computes compressed DeePMD-kit models on the CPU only");
  TORCH_CHECK(table.scalar_type() == torch::kDouble || table.scalar_type() == torch::kFloat,
              "deepmd::", op, ": the table is ", table.scalar_type(), ", expected float32 or float64");
  TORCH_CHECK(channels > 0, "deepmd::", op, ": last_layer_size ", channels, " must be positive");
  TORCH_CHECK(table.dim() == 2 && table.size(1) == 6 * channels, "deepmd::", op,
              ": the table has shape ", table.sizes(), ", expected [intervals, 6 x ", channels, "]");
}

void check_input(const char *op, const char *name, const Tensor &t, const Tensor &table,
                 int64_t numel)
{
  TORCH_CHECK(t.defined(), "deepmd::", op, ": ", name, " is undefined");
  TORCH_CHECK(t.device() == table.device(), "deepmd::", op, ": ", name, " is on ", t.device(),
              ", the table on ", table.device());
  TORCH_CHECK(t.scalar_type() == table.scalar_type(), "deepmd::", op, ": ", name, " is ",
              t.scalar_type(), ", the table ", table.scalar_type());
  TORCH_CHECK(t.numel() == numel, "deepmd::", op, ": ", name, " has ", t.numel(),
              " values (shape ", t.sizes(), "), expected ", numel);
}

void no_second_order(const char *op)
{
  TORCH_CHECK(!torch::GradMode::is_enabled(), "deepmd::", op,
              ": second derivatives of a compressed model's tabulated embeddings "
              "(autograd.grad with create_graph, e.g. training through a compressed model) "
              "are not provided; forces and virial need only first derivatives");
}

/* f(T()) with T the C++ type of a float32 or float64 tensor (check_table has refused others) */
template <typename F> void dispatch(at::ScalarType type, F f)
{
  if (type == torch::kDouble)
    f(double());
  else
    f(float());
}

int64_t grain(int64_t nloc)
{
  return std::max<int64_t>(1, nloc / (4 * std::max(1, at::get_num_threads())));
}

/* ---------------------------------------------------------------- se_a, se_atten */

template <typename T>
void se_a_forward(T *out, const T *table, const Grid<T> &grid, const T *em_x, const T *em,
                  const T *two, int64_t nloc, int64_t nnei, int64_t width, int64_t n, bool sorted)
{
  std::fill(out, out + nloc * width * n, T(0));
  if (nnei <= 0) return;
  at::parallel_for(0, nloc, grain(nloc), [&](int64_t begin, int64_t end) {
    std::vector<T> g(n);
    for (int64_t i = begin; i < end; ++i) {
      T *o = out + i * width * n;
      const T last_x = em_x[i * nnei + nnei - 1];
      for (int64_t j = 0; j < nnei; ++j) {
        const T *e = em + (i * nnei + j) * width;
        const T x = em_x[i * nnei + j];
        const bool fold = sorted && x == last_x && e[1] == T(0) && e[2] == T(0) && e[3] == T(0);
        int idx;
        T t, beyond;
        grid.locate(x, idx, t, beyond);
        const T *c = table + idx * n * 6;
        const T *tw = two ? two + (i * nnei + j) * n : nullptr;
        const T count = static_cast<T>(nnei - j);
        for (int64_t k = 0; k < n; ++k) {
          T v, s;
          channel(c + 6 * k, t, beyond, v, s);
          if (tw) v = v * tw[k] + v;
          g[k] = fold ? count * v : v;
        }
        for (int64_t m = 0; m < width; ++m) {
          const T em_m = e[m];
          T *om = o + m * n;
          for (int64_t k = 0; k < n; ++k) om[k] += g[k] * em_m;
        }
        if (fold) break;
      }
    }
  });
}

template <typename T>
void se_a_backward(T *d_em_x, T *d_em, T *d_two, const T *table, const Grid<T> &grid,
                   const T *em_x, const T *em, const T *two, const T *dy, int64_t nloc,
                   int64_t nnei, int64_t width, int64_t n, bool sorted)
{
  std::fill(d_em_x, d_em_x + nloc * nnei, T(0));
  std::fill(d_em, d_em + nloc * nnei * width, T(0));
  if (two) std::fill(d_two, d_two + nloc * nnei * n, T(0));
  if (nnei <= 0) return;
  at::parallel_for(0, nloc, grain(nloc), [&](int64_t begin, int64_t end) {
    std::vector<T> r(width);
    for (int64_t i = begin; i < end; ++i) {
      const T *dyi = dy + i * width * n;
      const T last_x = em_x[i * nnei + nnei - 1];
      for (int64_t j = 0; j < nnei; ++j) {
        const int64_t ij = i * nnei + j;
        const T *e = em + ij * width;
        T *de = d_em + ij * width;
        const T x = em_x[ij];
        const bool fold = sorted && x == last_x && e[1] == T(0) && e[2] == T(0) && e[3] == T(0);
        const T count = fold ? static_cast<T>(nnei - j) : T(1);
        int idx;
        T t, beyond;
        grid.locate(x, idx, t, beyond);
        const T *c = table + idx * n * 6;
        const T *tw = two ? two + ij * n : nullptr;
        T *dtw = two ? d_two + ij * n : nullptr;
        T dx = T(0);
        for (int64_t k = 0; k < n; ++k) {
          T v, s;
          channel(c + 6 * k, t, beyond, v, s);
          T dot = T(0);
          for (int64_t m = 0; m < width; ++m) {
            r[m] = dyi[m * n + k];
            dot += e[m] * r[m];
          }
          const T bare = v;
          if (tw) {
            v = v * tw[k] + v;
            s += tw[k] * s;
            dtw[k] += count * bare * dot;
          }
          dx += s * dot * count;
          for (int64_t m = 0; m < width; ++m) de[m] += v * r[m] * count;
        }
        d_em_x[ij] = dx;
        if (fold) break;
      }
    }
  });
}

struct SeShape {
  int64_t nloc, nnei, width;
};

SeShape se_a_shape(const char *op, const Tensor &table, const Tensor &em_x, const Tensor &em,
                   const Tensor &two, int64_t n)
{
  check_table(op, table, n);
  TORCH_CHECK(em.dim() == 3, "deepmd::", op, ": em has shape ", em.sizes(),
              ", expected [atoms, neighbours, 4]");
  const SeShape s{em.size(0), em.size(1), em.size(2)};
  TORCH_CHECK(s.width == 4 || s.width == 9 || s.width == 16 || s.width == 25, "deepmd::", op,
              ": em's last axis is ", s.width, ", expected 4, 9, 16 or 25");
  check_input(op, "em", em, table, em.numel());
  check_input(op, "em_x", em_x, table, s.nloc * s.nnei);
  if (two.defined()) check_input(op, "two_embed", two, table, s.nloc * s.nnei * n);
  return s;
}

struct SeAFunction : torch::autograd::Function<SeAFunction> {
  static variable_list forward(AutogradContext *ctx, const Tensor &table, const Tensor &info,
                               const Tensor &em_x_in, const Tensor &em_in,
                               const Tensor &two_in, int64_t n, bool sorted, bool atten)
  {
    // se_a passes an empty tensor for two_embed (an undefined one cannot go through
    // libtorch 1.13's autograd::Function::apply)
    const char *op = atten ? "tabulate_fusion_se_atten" : "tabulate_fusion_se_a";
    const SeShape s = se_a_shape(op, table, em_x_in, em_in, atten ? two_in : Tensor(), n);
    const Tensor tab = table.contiguous(), em_x = em_x_in.contiguous(), em = em_in.contiguous();
    const Tensor two = atten ? two_in.contiguous() : Tensor();
    Tensor out = torch::empty({s.nloc, s.width, n}, table.options());
    dispatch(table.scalar_type(), [&](auto zero) {
      using scalar_t = decltype(zero);
      const Grid<scalar_t> grid(info, false, tab.size(0), op);
      se_a_forward<scalar_t>(out.data_ptr<scalar_t>(), tab.data_ptr<scalar_t>(), grid,
                             em_x.data_ptr<scalar_t>(), em.data_ptr<scalar_t>(),
                             two.defined() ? two.data_ptr<scalar_t>() : nullptr, s.nloc,
                             s.nnei, s.width, n, sorted);
    });
    ctx->save_for_backward({tab, info, em_x, em, atten ? two : em_x.new_empty({0})});
    ctx->saved_data["n"] = n;
    ctx->saved_data["sorted"] = sorted;
    ctx->saved_data["atten"] = atten;
    return {out};
  }

  static variable_list backward(AutogradContext *ctx, variable_list grad)
  {
    const variable_list saved = ctx->get_saved_variables();
    const Tensor &tab = saved[0], &info = saved[1], &em_x = saved[2], &em = saved[3];
    const bool atten = ctx->saved_data["atten"].toBool();
    const Tensor two = atten ? saved[4] : Tensor();
    const char *op = atten ? "tabulate_fusion_se_atten" : "tabulate_fusion_se_a";
    no_second_order(op);
    const int64_t n = ctx->saved_data["n"].toInt();
    const bool sorted = ctx->saved_data["sorted"].toBool();
    const int64_t nloc = em.size(0), nnei = em.size(1), width = em.size(2);
    Tensor d_em_x = torch::empty_like(em_x), d_em = torch::empty_like(em);
    Tensor d_two = two.defined() ? torch::empty_like(two) : Tensor();
    if (!grad[0].defined())
      return {Tensor(), Tensor(), d_em_x.zero_(), d_em.zero_(),
              two.defined() ? d_two.zero_() : Tensor(), Tensor(), Tensor(), Tensor()};
    const Tensor dy = grad[0].to(tab.scalar_type()).contiguous();
    TORCH_CHECK(dy.numel() == nloc * width * n, "deepmd::", op, ": gradient has shape ",
                dy.sizes());
    dispatch(tab.scalar_type(), [&](auto zero) {
      using scalar_t = decltype(zero);
      const Grid<scalar_t> grid(info, false, tab.size(0), op);
      se_a_backward<scalar_t>(d_em_x.data_ptr<scalar_t>(), d_em.data_ptr<scalar_t>(),
                              two.defined() ? d_two.data_ptr<scalar_t>() : nullptr,
                              tab.data_ptr<scalar_t>(), grid, em_x.data_ptr<scalar_t>(),
                              em.data_ptr<scalar_t>(),
                              two.defined() ? two.data_ptr<scalar_t>() : nullptr,
                              dy.data_ptr<scalar_t>(), nloc, nnei, width, n, sorted);
    });
    return {Tensor(), Tensor(), d_em_x, d_em, d_two, Tensor(), Tensor(), Tensor()};
  }
};

/* ---------------------------------------------------------------- se_t, se_t_tebd, se_r */

/* One table lookup per input value x[p] (p < count): value and slope of every channel
 * handed to `use(p, k, value, slope)`. */
template <typename T, typename F>
void each_lookup(const T *table, const Grid<T> &grid, const T *x, int64_t outer, int64_t inner,
                 int64_t n, F use)
{
  at::parallel_for(0, outer, grain(outer), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t p = i * inner; p < (i + 1) * inner; ++p) {
        int idx;
        T t, beyond;
        grid.locate(x[p], idx, t, beyond);
        const T *c = table + idx * n * 6;
        for (int64_t k = 0; k < n; ++k) {
          T v, s;
          channel(c + 6 * k, t, beyond, v, s);
          use(i, p, k, v, s);
        }
      }
  });
}

enum class Kind { se_t, se_t_tebd, se_r };

const char *kind_name(Kind kind)
{
  return kind == Kind::se_t ? "tabulate_fusion_se_t"
                            : kind == Kind::se_t_tebd ? "tabulate_fusion_se_t_tebd"
                                                      : "tabulate_fusion_se_r";
}

/* se_t: G[i, k] = sum_p x_p g_k(x_p) over the pairs p of atom i (DeePMD-kit multiplies by
 * em_x in the forward pass and treats the factor as em in the backward pass: em and em_x
 * are the same values in its se_e3; the two gradients go to em_x and em);
 * se_t_tebd: G[p, k] = g_k(x_p); se_r: G[p, k] = g_k(em_p). */
struct LookupFunction : torch::autograd::Function<LookupFunction> {
  static variable_list forward(AutogradContext *ctx, const Tensor &table, const Tensor &info,
                               const Tensor &x_in, const Tensor &em_in, int64_t n,
                               int64_t kind_id)
  {
    const Kind kind = static_cast<Kind>(kind_id);
    const char *op = kind_name(kind);
    check_table(op, table, n);
    const Tensor &shape_of = kind == Kind::se_r ? x_in : em_in;
    const int64_t need_dim = kind == Kind::se_r ? 2 : 3;
    TORCH_CHECK(shape_of.dim() == need_dim, "deepmd::", op, ": em has shape ", shape_of.sizes(),
                need_dim == 2 ? ", expected [atoms, neighbours]"
                              : ", expected [atoms, neighbours, neighbours]");
    const int64_t nloc = shape_of.size(0), inner = shape_of.numel() / std::max<int64_t>(1, nloc);
    check_input(op, kind == Kind::se_r ? "em" : "em_x", x_in, table, nloc * inner);
    if (kind != Kind::se_r) check_input(op, "em", em_in, table, nloc * inner);
    const Tensor tab = table.contiguous(), x = x_in.contiguous();
    Tensor out;
    if (kind == Kind::se_t)
      out = torch::zeros({nloc, n}, table.options());
    else {
      std::vector<int64_t> sizes = shape_of.sizes().vec();
      sizes.push_back(n);
      out = torch::empty(sizes, table.options());
    }
    dispatch(table.scalar_type(), [&](auto zero) {
      using scalar_t = decltype(zero);
      const Grid<scalar_t> grid(info, kind != Kind::se_r, tab.size(0), op);
      scalar_t *o = out.data_ptr<scalar_t>();
      const scalar_t *xp = x.data_ptr<scalar_t>();
      if (kind == Kind::se_t)
        each_lookup<scalar_t>(tab.data_ptr<scalar_t>(), grid, xp, nloc, inner, n,
                              [&](int64_t i, int64_t p, int64_t k, scalar_t v, scalar_t) {
                                o[i * n + k] += v * xp[p];
                              });
      else
        each_lookup<scalar_t>(tab.data_ptr<scalar_t>(), grid, xp, nloc, inner, n,
                              [&](int64_t, int64_t p, int64_t k, scalar_t v, scalar_t) {
                                o[p * n + k] = v;
                              });
    });
    ctx->save_for_backward({tab, info, x});
    ctx->saved_data["n"] = n;
    ctx->saved_data["kind"] = kind_id;
    ctx->saved_data["nloc"] = nloc;
    ctx->saved_data["em_sizes"] = em_in.sizes().vec();    // em_x may be flat ([pairs, 1])
    return {out};
  }

  static variable_list backward(AutogradContext *ctx, variable_list grad)
  {
    const variable_list saved = ctx->get_saved_variables();
    const Tensor &tab = saved[0], &info = saved[1], &x = saved[2];
    const int64_t n = ctx->saved_data["n"].toInt();
    const Kind kind = static_cast<Kind>(ctx->saved_data["kind"].toInt());
    const char *op = kind_name(kind);
    no_second_order(op);
    const int64_t nloc = ctx->saved_data["nloc"].toInt();
    const int64_t inner = x.numel() / std::max<int64_t>(1, nloc);
    Tensor dx = torch::zeros_like(x);
    Tensor dem = kind == Kind::se_t ? torch::zeros_like(x) : Tensor();
    if (grad[0].defined()) {
      const Tensor dy = grad[0].to(tab.scalar_type()).contiguous();
      dispatch(tab.scalar_type(), [&](auto zero) {
      using scalar_t = decltype(zero);
        const Grid<scalar_t> grid(info, kind != Kind::se_r, tab.size(0), op);
        const scalar_t *xp = x.data_ptr<scalar_t>(), *d = dy.data_ptr<scalar_t>();
        scalar_t *gx = dx.data_ptr<scalar_t>();
        if (kind == Kind::se_t) {
          scalar_t *ge = dem.data_ptr<scalar_t>();
          each_lookup<scalar_t>(tab.data_ptr<scalar_t>(), grid, xp, nloc, inner, n,
                                [&](int64_t i, int64_t p, int64_t k, scalar_t v, scalar_t s) {
                                  gx[p] += s * xp[p] * d[i * n + k];
                                  ge[p] += v * d[i * n + k];
                                });
        } else
          each_lookup<scalar_t>(tab.data_ptr<scalar_t>(), grid, xp, nloc, inner, n,
                                [&](int64_t, int64_t p, int64_t k, scalar_t, scalar_t s) {
                                  gx[p] += s * d[p * n + k];
                                });
      });
    }
    if (kind != Kind::se_t) return {Tensor(), Tensor(), dx, Tensor(), Tensor(), Tensor()};
    return {Tensor(), Tensor(), dx, dem.view(ctx->saved_data["em_sizes"].toIntVector()),
            Tensor(), Tensor()};
  }
};

/* ---------------------------------------------------------------- the operators */

std::vector<Tensor> se_a(const Tensor &table, const Tensor &info, const Tensor &em_x,
                         const Tensor &em, int64_t n)
{
  // DeePMD-kit's se_e2_a always folds the padding (its forward_lower sorts the list)
  return SeAFunction::apply(table, info, em_x, em, em_x.new_empty({0}), n, true, false);
}
std::vector<Tensor> se_atten(const Tensor &table, const Tensor &info, const Tensor &em_x,
                             const Tensor &em, const Tensor &two, int64_t n, bool sorted)
{
  TORCH_CHECK(two.defined(), "deepmd::tabulate_fusion_se_atten: two_embed is undefined");
  return SeAFunction::apply(table, info, em_x, em, two, n, sorted, true);
}
std::vector<Tensor> se_t(const Tensor &table, const Tensor &info, const Tensor &em_x,
                         const Tensor &em, int64_t n)
{
  return LookupFunction::apply(table, info, em_x, em, n, static_cast<int64_t>(Kind::se_t));
}
std::vector<Tensor> se_t_tebd(const Tensor &table, const Tensor &info, const Tensor &em_x,
                              const Tensor &em, int64_t n)
{
  return LookupFunction::apply(table, info, em_x, em, n, static_cast<int64_t>(Kind::se_t_tebd));
}
std::vector<Tensor> se_r(const Tensor &table, const Tensor &info, const Tensor &em, int64_t n)
{
  return LookupFunction::apply(table, info, em, em, n, static_cast<int64_t>(Kind::se_r));
}

struct RegisterTableOps {
  std::vector<std::unique_ptr<torch::Library>> libs;
  template <typename F> void define(const char *name, const char *schema, F *fn)
  {
    try {
      if (c10::Dispatcher::singleton().findSchema({std::string("deepmd::") + name, ""})) return;
      libs.emplace_back(new torch::Library(torch::Library::FRAGMENT, "deepmd", c10::nullopt,
                                           __FILE__, __LINE__));
      libs.back()->def(schema, fn);
    } catch (...) {
    }
  }
  RegisterTableOps()
  {
    define("tabulate_fusion_se_a",
           "tabulate_fusion_se_a(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_a);
    define("tabulate_fusion_se_t",
           "tabulate_fusion_se_t(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_t);
    define("tabulate_fusion_se_t_tebd",
           "tabulate_fusion_se_t_tebd(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_t_tebd);
    define("tabulate_fusion_se_r",
           "tabulate_fusion_se_r(Tensor table, Tensor table_info, Tensor em, "
           "int last_layer_size) -> Tensor[]",
           &se_r);
    define("tabulate_fusion_se_atten",
           "tabulate_fusion_se_atten(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
           "Tensor two_embed, int last_layer_size, bool is_sorted) -> Tensor[]",
           &se_atten);
  }
};
RegisterTableOps register_table_ops;

}    // namespace
