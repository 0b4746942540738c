// Householder QR, one-sided Jacobi SVD and LU solves (see linalg.h).
#include "array/linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace basin {

void HouseholderQr(const double* a, int64_t m, int64_t n, std::vector<double>& q, std::vector<double>& r) {
  const int64_t k = std::min(m, n);
  std::vector<double> w(a, a + m * n);               // reduced in place to R
  std::vector<double> vs(size_t(k * m), 0.0);        // reflector j: unit v in rows j.. of vs[j*m..]
  std::vector<double> tmp(size_t(std::max(n, k)), 0.0);
  for (int64_t j = 0; j < k; j++) {
    double norm = 0;
    for (int64_t i = j; i < m; i++) norm += w[i * n + j] * w[i * n + j];
    norm = std::sqrt(norm);
    if (norm == 0) continue;  // the column is already zero below the diagonal: H = I
    double* v = &vs[size_t(j * m)];
    const double alpha = w[j * n + j] >= 0 ? -norm : norm;
    for (int64_t i = j; i < m; i++) v[i] = w[i * n + j];
    v[j] -= alpha;
    double vn = 0;
    for (int64_t i = j; i < m; i++) vn += v[i] * v[i];
    vn = std::sqrt(vn);
    for (int64_t i = j; i < m; i++) v[i] /= vn;
    // W[j:, j:] -= 2 v (vᵀ W[j:, j:]), row by row for unit-stride access.
    std::fill(tmp.begin() + j, tmp.begin() + n, 0.0);
    for (int64_t i = j; i < m; i++) {
      const double vi = v[i];
      if (vi == 0) continue;
      const double* row = &w[size_t(i * n)];
      for (int64_t c = j; c < n; c++) tmp[c] += vi * row[c];
    }
    for (int64_t i = j; i < m; i++) {
      const double f = 2 * v[i];
      if (f == 0) continue;
      double* row = &w[size_t(i * n)];
      for (int64_t c = j; c < n; c++) row[c] -= f * tmp[c];
    }
  }
  r.assign(size_t(k * n), 0.0);
  for (int64_t i = 0; i < k; i++)
    for (int64_t c = i; c < n; c++) r[size_t(i * n + c)] = w[size_t(i * n + c)];
  // Q = H_0 … H_{k-1} applied to the first k columns of the identity.
  q.assign(size_t(m * k), 0.0);
  for (int64_t i = 0; i < k; i++) q[size_t(i * k + i)] = 1;
  for (int64_t j = k - 1; j >= 0; j--) {
    const double* v = &vs[size_t(j * m)];
    std::fill(tmp.begin(), tmp.begin() + k, 0.0);
    for (int64_t i = j; i < m; i++) {
      if (v[i] == 0) continue;
      const double* row = &q[size_t(i * k)];
      for (int64_t c = 0; c < k; c++) tmp[c] += v[i] * row[c];
    }
    for (int64_t i = j; i < m; i++) {
      const double f = 2 * v[i];
      if (f == 0) continue;
      double* row = &q[size_t(i * k)];
      for (int64_t c = 0; c < k; c++) row[c] -= f * tmp[c];
    }
  }
}

namespace {

double Dot(const double* x, const double* y, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

}  // namespace

void JacobiSvd(const double* a, int64_t m, int64_t n, std::vector<double>& u, std::vector<double>& s, std::vector<double>& vt) {
  if (m < n) {
    // A = (Aᵀ)ᵀ = (U' S V'ᵀ)ᵀ = V' S U'ᵀ.
    std::vector<double> at(size_t(m * n));
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) at[size_t(j * m + i)] = a[i * n + j];
    std::vector<double> u2, vt2;
    JacobiSvd(at.data(), n, m, u2, s, vt2);  // u2: n×m, vt2: m×m
    u.assign(size_t(m * m), 0.0);
    vt.assign(size_t(m * n), 0.0);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < m; j++) u[size_t(i * m + j)] = vt2[size_t(j * m + i)];
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) vt[size_t(i * n + j)] = u2[size_t(j * m + i)];
    return;
  }
  // Columns of A·V, column-major, rotated pairwise until mutually orthogonal.
  std::vector<double> w(size_t(m * n)), v(size_t(n * n), 0.0);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) w[size_t(j * m + i)] = a[i * n + j];
  for (int64_t j = 0; j < n; j++) v[size_t(j * n + j)] = 1;
  const double eps = std::numeric_limits<double>::epsilon();
  for (int sweep = 0; sweep < 100; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < n - 1; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double* wp = &w[size_t(p * m)];
        double* wq = &w[size_t(q * m)];
        const double alpha = Dot(wp, wp, m), beta = Dot(wq, wq, m), gamma = Dot(wp, wq, m);
        if (gamma == 0 || std::abs(gamma) <= eps * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), sn = c * t;
        for (int64_t i = 0; i < m; i++) {
          const double x = wp[i], y = wq[i];
          wp[i] = c * x - sn * y;
          wq[i] = sn * x + c * y;
        }
        double* vp = &v[size_t(p * n)];
        double* vq = &v[size_t(q * n)];
        for (int64_t i = 0; i < n; i++) {
          const double x = vp[i], y = vq[i];
          vp[i] = c * x - sn * y;
          vq[i] = sn * x + c * y;
        }
      }
    if (!rotated) break;
  }
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; j++) norms[size_t(j)] = std::sqrt(Dot(&w[size_t(j * m)], &w[size_t(j * m)], m));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return norms[size_t(x)] > norms[size_t(y)]; });
  const double smax = n ? norms[size_t(order[0])] : 0;
  s.assign(size_t(n), 0.0);
  u.assign(size_t(m * n), 0.0);
  vt.assign(size_t(n * n), 0.0);
  std::vector<double> col(static_cast<size_t>(m));
  for (int64_t jj = 0; jj < n; jj++) {
    const int64_t j = order[size_t(jj)];
    const double sj = norms[size_t(j)];
    s[size_t(jj)] = sj;
    for (int64_t c = 0; c < n; c++) vt[size_t(jj * n + c)] = v[size_t(j * n + c)];
    if (sj > smax * m * eps && sj > 0) {
      for (int64_t i = 0; i < m; i++) u[size_t(i * n + jj)] = w[size_t(j * m + i)] / sj;
      continue;
    }
    // A (numerically) zero singular value: any unit vector orthogonal to the columns so far.
    for (int64_t e = 0; e < m; e++) {
      std::fill(col.begin(), col.end(), 0.0);
      col[size_t(e)] = 1;
      for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 0; k < jj; k++) {
          double d = 0;
          for (int64_t i = 0; i < m; i++) d += u[size_t(i * n + k)] * col[size_t(i)];
          for (int64_t i = 0; i < m; i++) col[size_t(i)] -= d * u[size_t(i * n + k)];
        }
      const double nc = std::sqrt(Dot(col.data(), col.data(), m));
      if (nc > 0.5) {
        for (int64_t i = 0; i < m; i++) u[size_t(i * n + jj)] = col[size_t(i)] / nc;
        break;
      }
    }
  }
}

bool LuSolve(const double* a, int64_t n, const double* b, int64_t k, std::vector<double>& x, int64_t& column) {
  std::vector<double> lu(a, a + n * n);
  x.assign(b, b + n * k);
  double scale = 0;
  for (double e : lu) scale = std::max(scale, std::abs(e));
  const double tol = double(n) * std::numeric_limits<double>::epsilon() * scale;
  for (int64_t j = 0; j < n; j++) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; i++)
      if (std::abs(lu[size_t(i * n + j)]) > std::abs(lu[size_t(p * n + j)])) p = i;
    const double piv = lu[size_t(p * n + j)];
    if (!(std::abs(piv) > tol)) {  // also catches NaN
      column = j;
      return false;
    }
    if (p != j) {
      std::swap_ranges(lu.begin() + j * n, lu.begin() + (j + 1) * n, lu.begin() + p * n);
      std::swap_ranges(x.begin() + j * k, x.begin() + (j + 1) * k, x.begin() + p * k);
    }
    for (int64_t i = j + 1; i < n; i++) {
      const double f = lu[size_t(i * n + j)] / piv;
      if (f == 0) continue;
      for (int64_t c = j; c < n; c++) lu[size_t(i * n + c)] -= f * lu[size_t(j * n + c)];
      for (int64_t c = 0; c < k; c++) x[size_t(i * k + c)] -= f * x[size_t(j * k + c)];
    }
  }
  for (int64_t j = n - 1; j >= 0; j--) {
    const double piv = lu[size_t(j * n + j)];
    for (int64_t c = 0; c < k; c++) {
      double acc = x[size_t(j * k + c)];
      for (int64_t t = j + 1; t < n; t++) acc -= lu[size_t(j * n + t)] * x[size_t(t * k + c)];
      x[size_t(j * k + c)] = acc / piv;
    }
  }
  return true;
}

}  // namespace basin
