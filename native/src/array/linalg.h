// Small dense linear algebra on row-major float64 matrices: the per-block kernels
// of the array namespace's linalg (TSQR, SVD of the small R, LU solves). Sizes are
// those of one chunk or of a stack of R factors, so plain loops suffice; no BLAS.
#pragma once
#include <cstdint>
#include <vector>

namespace basin {

// Economy QR of an m×n matrix by Householder reflections: Q is m×k, R is k×n
// (upper triangular), k = min(m, n). R's diagonal has LAPACK's signs.
void HouseholderQr(const double* a, int64_t m, int64_t n, std::vector<double>& q, std::vector<double>& r);

// Economy SVD of an m×n matrix by one-sided Jacobi rotations: U is m×k with
// orthonormal columns, s (k) descending and non-negative, Vt is k×n, k = min(m, n).
void JacobiSvd(const double* a, int64_t m, int64_t n, std::vector<double>& u, std::vector<double>& s, std::vector<double>& vt);

// X (n×k) with A X = B for a square A (n×n) by LU with partial pivoting. Returns
// false when A is singular to working precision; `column` is then the pivot column.
bool LuSolve(const double* a, int64_t n, const double* b, int64_t k, std::vector<double>& x, int64_t& column);

}  // namespace basin
