"""Lower triangular solves with elementwise operations, for the full posterior family inside the jitted step.

Not LAPACK: on CPU, JAX's batched triangular solve (a LAPACK custom call) hands its batch to XLA's intra-op thread
pool and blocks its own pool thread until the batch is done. When as many of those calls run at once as the pool
has threads, every thread waits on work none is free to run: a deadlock at 0% CPU. Measured with JAX 0.10.2 on 2
cores: the full family with theta_elbo and the closed-form score hung in about half of the runs, both pool threads
parked in `ParallelBatchMap` under `lapack_strsm_ffi` (gdb, docs/jspgfn-beyond-d5.md, thirty-sixth session).
closed_form.py writes its Cholesky factorisations the same way for the same reason.
"""

import jax
import jax.numpy as jnp


def solve_lower(factor, rhs):
    """Z with factor Z = rhs, by forward substitution: factor float [..., n, n] lower triangular (non-zero
    diagonal), rhs [..., n, k]; their batch dimensions broadcast. Returns [broadcast batch..., n, k].
    Differentiable in both arguments (a loop of n steps, each a row of elementwise products)."""
    n = factor.shape[-1]
    shape = jnp.broadcast_shapes(factor.shape[:-2], rhs.shape[:-2]) + rhs.shape[-2:]
    eye = jnp.eye(n, dtype=factor.dtype)

    def row(i, solved):
        pick = eye[i]  # [n], one-hot of row i
        factor_row = jnp.einsum("...ik,i->...k", factor, pick)  # row i of the factor [..., n]
        diagonal = jnp.einsum("...k,k->...", factor_row, pick)
        # rows >= i of `solved` are still zero, so the full product sums over the rows already solved
        entry = jnp.einsum("...ik,i->...k", rhs, pick) - jnp.einsum("...m,...mk->...k", factor_row, solved)
        return solved + pick[:, None] * (entry / diagonal[..., None])[..., None, :]

    return jax.lax.fori_loop(0, n, row, jnp.zeros(shape, jnp.result_type(factor, rhs)))
