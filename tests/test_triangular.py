"""gflownet/triangular.py: the elementwise forward substitution against LAPACK's triangular solve."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn.gflownet.triangular import solve_lower


def _factor(rng, shape):
    n = shape[-1]
    tril = np.tril(rng.normal(size=shape))
    idx = np.arange(n)
    tril[..., idx, idx] = np.exp(rng.normal(0, 0.3, shape[:-1]))  # positive, away from zero
    return tril


def test_solve_lower_matches_lapack_with_broadcast_batches():
    rng = np.random.default_rng(0)
    factor = _factor(rng, (3, 1, 4, 5, 5))  # [B, 1, d, P, P] as the full family's factor[:, None]
    rhs = rng.normal(size=(3, 2, 4, 5, 1))  # [B, S, d, P, 1]
    ours = solve_lower(jnp.asarray(factor), jnp.asarray(rhs))
    assert ours.shape == (3, 2, 4, 5, 1)
    lapack = jax.scipy.linalg.solve_triangular(jnp.asarray(factor), jnp.asarray(rhs), lower=True)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(lapack), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.einsum("...ij,...jk->...ik", factor, np.asarray(ours)), rhs, atol=1e-5)


@pytest.mark.parametrize(
    "factor_shape, rhs_shape",
    [((2, 4, 4), (2, 4, 3)), ((3, 1, 2, 4, 4), (3, 2, 2, 4, 1)), ((4, 4), (5, 4, 2))],
)
def test_solve_lower_gradients_match_lapack(factor_shape, rhs_shape):
    """Its written-out gradient (one back substitution) against reverse mode through LAPACK's solve, also where
    the batch dimensions broadcast (the full family's factor [B, 1, d, P, P] against theta [B, S, d, P, 1])."""
    rng = np.random.default_rng(1)
    factor = jnp.asarray(_factor(rng, factor_shape))
    rhs = jnp.asarray(rng.normal(size=rhs_shape))
    out_shape = np.broadcast_shapes(factor_shape[:-2], rhs_shape[:-2]) + rhs_shape[-2:]
    weights = jnp.asarray(rng.normal(size=out_shape))

    def loss(solve):
        return lambda f, b: jnp.sum(weights * solve(f, b) ** 2)

    lapack = lambda f, b: jax.scipy.linalg.solve_triangular(f, b, lower=True)  # noqa: E731
    ours = jax.grad(loss(solve_lower), argnums=(0, 1))(factor, rhs)
    theirs = jax.grad(loss(lapack), argnums=(0, 1))(factor, rhs)
    assert ours[0].shape == factor.shape and ours[1].shape == rhs.shape
    for a, b in zip(ours, theirs):
        # only the lower triangle of the factor is read by either solve
        np.testing.assert_allclose(np.tril(np.asarray(a)), np.tril(np.asarray(b)), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.triu(np.asarray(ours[0]), 1), 0)
