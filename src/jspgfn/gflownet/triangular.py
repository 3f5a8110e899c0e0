"""Lower triangular solves with elementwise operations, for the full posterior family inside the jitted step.

Not LAPACK: on CPU, JAX's batched triangular solve (a LAPACK custom call) hands its batch to XLA's intra-op thread
pool and blocks its own pool thread until the batch is done. When as many of those calls run at once as the pool
has threads, every thread waits on work none is free to run: a deadlock at 0% CPU. Measured with JAX 0.10.2 on 2
cores: the full family with theta_elbo and the closed-form score hung in 4 of 6 tries, both pool threads
parked in `ParallelBatchMap` under `lapack_strsm_ffi` (gdb; docs/decisions.md, "No LAPACK call inside the jitted
training step"). closed_form.py writes its Cholesky factorisations the same way for the same reason.

Forward and back substitution are loops over the n rows, each reading one row (or column) of the factor; the
gradient is written out (z = L^-1 b: b_bar = L^-T z_bar, L_bar = -tril(b_bar z^T)) so that reverse mode runs one
back substitution instead of differentiating through the loop.
"""

import jax
import jax.numpy as jnp


def _substitute(factor, rhs, transpose):
    """Z with factor Z = rhs (forward substitution), or factor^T Z = rhs (back substitution, transpose=True):
    factor [..., n, n] lower triangular, rhs [..., n, k], batch dimensions broadcast."""
    n = factor.shape[-1]
    shape = jnp.broadcast_shapes(factor.shape[:-2], rhs.shape[:-2]) + rhs.shape[-2:]
    row_axis, col_axis = factor.ndim - 2, factor.ndim - 1

    def step(t, solved):
        i = n - 1 - t if transpose else t
        # row i of factor^T is column i of factor; the unsolved rows of `solved` are still zero
        line = jax.lax.dynamic_index_in_dim(factor, i, axis=col_axis if transpose else row_axis, keepdims=False)
        diagonal = jax.lax.dynamic_index_in_dim(line, i, axis=line.ndim - 1, keepdims=False)
        target = jax.lax.dynamic_index_in_dim(rhs, i, axis=rhs.ndim - 2, keepdims=False)
        entry = (target - jnp.einsum("...m,...mk->...k", line, solved)) / diagonal[..., None]
        return jax.lax.dynamic_update_index_in_dim(solved, entry, i, axis=len(shape) - 2)

    return jax.lax.fori_loop(0, n, step, jnp.zeros(shape, jnp.result_type(factor, rhs)))


def _sum_to(x, shape):
    """x summed over the dimensions that broadcasting added to `shape`."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + a for a, s in enumerate(shape) if s == 1 and x.shape[lead + a] != 1)
    return jnp.sum(x, axis=axes, keepdims=True).reshape(shape) if axes else x


@jax.custom_vjp
def solve_lower(factor, rhs):
    """Z with factor Z = rhs: factor float [..., n, n] lower triangular (non-zero diagonal; its upper triangle is not
    read), rhs [..., n, k]; their batch dimensions broadcast. Returns [broadcast batch..., n, k]. Differentiable in
    both arguments."""
    return _substitute(factor, rhs, transpose=False)


def _solve_lower_forward(factor, rhs):
    solved = _substitute(factor, rhs, transpose=False)
    return solved, (factor, solved, rhs.shape)


def _solve_lower_backward(residuals, cotangent):
    factor, solved, rhs_shape = residuals
    rhs_bar = _substitute(factor, cotangent, transpose=True)  # L^-T z_bar
    factor_bar = -jnp.tril(jnp.einsum("...ik,...jk->...ij", rhs_bar, solved))
    return _sum_to(factor_bar, factor.shape), _sum_to(rhs_bar, rhs_shape)


solve_lower.defvjp(_solve_lower_forward, _solve_lower_backward)
