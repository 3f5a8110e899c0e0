"""BCD Nets (Cundy, Grover & Ermon, 2021): variational inference over linear SEMs W = (P L P^T)^T.

The variational family q(L, P) = q(L) q(P | L):
  q(L)      mean-field Normal over the d(d-1)/2 entries of a strictly lower-triangular matrix L;
  q(P | L)  Gumbel-Sinkhorn over permutation matrices: logits = 10 tanh(MLP(L) / 10) (two hidden layers), Gumbel
            noise, `sinkhorn_iterations` row/column normalisations in log space at `temperature`, made
            hard by the Hungarian algorithm (scipy, through jax.pure_callback) with a straight-through
            gradient (hard + soft - stop_gradient(soft)).
W = (P L P^T)^T is a permuted strictly triangular matrix, so every sample is a DAG. W[i, j] is the
weight of the edge i -> j, as theta in jspgfn.models.LinearGaussian: X = X W + eps.

The noise variance is fixed to the model's obs_var (BCD Nets also learns log noise scales). ELBO per
Monte-Carlo sample: log P(D | W) + log p(L) + log p(P) - log q(P | L), plus the analytic entropy of
q(L). p(P) is uniform over the d! permutations. log q(P | L) = <P, logits> - log perm(exp(logits)) as
in BCD Nets, whose log-permanent is a Bethe approximation; here it is exact for d <= 6 (enumerating
the d! permutations) and above that the Bethe free energy evaluated at exp(logits) balanced to
convergence (a lower bound on the Bethe log-permanent, hence on log perm, so the ELBO stays a bound).
p(L): a Horseshoe-like prior (Bhadra et al., 2019: p(x) = log(1 + s^2 / x^2) / (2 pi s), the
Horseshoe's log spike at 0 and 1/x^2 tails, in closed form) or N(prior_mean, prior_var).

Samples: L ~ q(L), P ~ q(P | L) (hard), W = (P L P^T)^T; edge i -> j where |W[i, j]| > threshold
(BCD Nets' evaluation threshold, 0.3 by default); theta = W masked to that graph.
"""

import itertools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy.optimize import linear_sum_assignment
from tqdm.auto import tqdm

from jspgfn_baselines.shared.common import check_finite_data, make_samples, require_observational

CHUNK = 500  # optimisation steps per jitted lax.scan
INIT_STD = 0.3  # initial sd of q(L); its means start at 0 and the permutation logits at 0 (q(P) uniform)


# --- permutations ---------------------------------------------------------------------------------


def _hungarian_numpy(soft):
    """Permutation matrices maximising sum(P * soft), for any leading batch dimensions."""
    soft = np.asarray(soft)
    d = soft.shape[-1]
    flat = soft.reshape(-1, d, d)
    out = np.zeros_like(flat)
    for k, matrix in enumerate(flat):
        rows, cols = linear_sum_assignment(-matrix)
        out[k, rows, cols] = 1
    return out.reshape(soft.shape)


def hungarian(soft):
    """Hard permutation matrix (or batch) nearest to a doubly-stochastic `soft` (no gradient)."""
    soft = jax.lax.stop_gradient(soft)
    return jax.pure_callback(
        _hungarian_numpy, jax.ShapeDtypeStruct(soft.shape, soft.dtype), soft, vmap_method="broadcast_all"
    )


def _sinkhorn_step(x):
    """One row then column normalisation of exp(x), in log space."""
    x = x - jax.scipy.special.logsumexp(x, axis=-1, keepdims=True)
    return x - jax.scipy.special.logsumexp(x, axis=-2, keepdims=True)


def log_sinkhorn(log_alpha, iterations):
    """`iterations` row then column normalisations of exp(log_alpha), in log space."""
    log_alpha, _ = jax.lax.scan(lambda x, _: (_sinkhorn_step(x), None), log_alpha, None, length=iterations)
    return log_alpha


def sample_permutation(key, logits, temperature, iterations):
    """Gumbel-Sinkhorn sample made hard by the Hungarian algorithm, straight-through gradient."""
    gumbel = jax.random.gumbel(key, logits.shape, logits.dtype)
    soft = jnp.exp(log_sinkhorn((logits + gumbel) / temperature, iterations))
    hard = hungarian(soft)
    return hard + (soft - jax.lax.stop_gradient(soft))  # exactly `hard` in the forward pass


SINKHORN_TOLERANCE = 1e-4  # max |log row sum| at which balancing stops (its columns sum to 1 exactly)
SINKHORN_MAX_ITERATIONS = 100  # then `doubly_stochastic` repairs what is left, so the bound never depends on it


def balance(logits, tolerance=SINKHORN_TOLERANCE, max_iterations=SINKHORN_MAX_ITERATIONS):
    """Sinkhorn in log space until the row sums are within `tolerance` (no gradient): [d, d] -> [d, d]."""

    def row_error(x):
        return jnp.max(jnp.abs(jax.scipy.special.logsumexp(x, axis=-1)))

    def body(state):
        x, step = state
        return _sinkhorn_step(x), step + 1

    def keep_going(state):
        x, step = state
        return (row_error(x) > tolerance) & (step < max_iterations)

    start = jax.lax.stop_gradient(logits)
    start = start - jax.scipy.special.logsumexp(start, axis=-2, keepdims=True)
    balanced, _ = jax.lax.while_loop(keep_going, body, (start, 0))
    return balanced


def doubly_stochastic(gamma):
    """An exactly doubly-stochastic matrix near `gamma` [d, d], whose columns sum to 1 and rows to r.

    gamma + (1 - r) 1^T / d has every row and column summing to 1 (sum r = d) but may dip below 0 by
    about the row error; mixing in a little of the uniform matrix J / d lifts it back to >= 0. No entry
    moves by more than 2 max|1 - r|.
    """
    d = gamma.shape[-1]
    rows = jnp.sum(gamma, axis=-1, keepdims=True)
    fixed = gamma + (1.0 - rows) / d
    deficit = jnp.maximum(0.0, -jnp.min(fixed))
    mix = deficit / (deficit + 1.0 / d)
    return jnp.clip((1.0 - mix) * fixed + mix / d, 0.0, 1.0)  # the clip only removes float rounding


def log_permanent_bethe(logits):
    """Bethe free energy of exp(logits) at its Sinkhorn-balanced matrix gamma: a lower bound on log perm.

    For any doubly-stochastic gamma, F(gamma) = <gamma, logits> + sum[-gamma log gamma + (1 - gamma)
    log(1 - gamma)] <= max over the polytope (the Bethe log-permanent, Vontobel 2013) <= log perm (Gurvits
    2011). A fixed number of Sinkhorn iterations leaves the rows of peaked logits far from 1, and F of
    such a matrix is no bound at all (it reached +4e8 nats at d=20), so gamma is balanced (`balance`),
    made exactly doubly stochastic (`doubly_stochastic`) and held fixed: the gradient in the logits is
    gamma, and the ELBO ascends a bound that holds for every logits.
    """
    gamma = doubly_stochastic(jnp.exp(balance(logits)))
    entropy = -jnp.sum(jax.scipy.special.xlogy(gamma, gamma)) + jnp.sum(jax.scipy.special.xlog1py(1 - gamma, -gamma))
    return jnp.sum(logits * gamma) + entropy


EXACT_PERMANENT_MAX_D = 6  # up to d! = 720 permutations: enumerate them


def log_permanent_exact(logits):
    """log perm(exp(logits)) by enumerating the d! permutations (small d only)."""
    d = logits.shape[-1]
    perms = np.array(list(itertools.permutations(range(d))))  # [d!, d]
    return jax.scipy.special.logsumexp(jnp.sum(logits[np.arange(d), perms], axis=-1))


def log_permanent(logits):
    if logits.shape[-1] <= EXACT_PERMANENT_MAX_D:
        return log_permanent_exact(logits)
    return log_permanent_bethe(logits)


def log_q_permutation(permutation, logits):
    """log q(P) ~ <P, logits> - log perm(exp(logits)) (Gumbel-matching, as BCD Nets)."""
    return jnp.sum(permutation * logits) - log_permanent(logits)


def weights_from(permutation, lower):
    """W = (P L P^T)^T: W[i, j] is the weight of the edge i -> j."""
    return jnp.swapaxes(permutation @ lower @ jnp.swapaxes(permutation, -1, -2), -1, -2)


# --- variational parameters -----------------------------------------------------------------------


def lower_matrix(values, d):
    """Strictly lower-triangular [..., d, d] matrix from its d(d-1)/2 entries [..., m]."""
    rows, cols = np.tril_indices(d, -1)
    out = jnp.zeros(values.shape[:-1] + (d, d), values.dtype)
    return out.at[..., rows, cols].set(values)


def init_params(key, d, hidden):
    m = d * (d - 1) // 2
    k_layers = jax.random.split(key, 3)
    sizes = [max(m, 1), hidden, hidden, d * d]
    layers = []
    for i, (k, (n_in, n_out)) in enumerate(zip(k_layers, zip(sizes[:-1], sizes[1:]))):
        scale = 1.0 / np.sqrt(n_in) if i < 2 else 0.0  # zero logits: q(P) starts uniform
        layers.append((scale * jax.random.normal(k, (n_in, n_out)), jnp.zeros(n_out)))
    return {"mean": jnp.zeros(m), "log_std": jnp.full((m,), jnp.log(INIT_STD)), "mlp": layers}


LOGIT_BOUND = 10.0  # |permutation logit| < 10: a swap can still cost 40 nats, so q(P) can be all but certain


def mlp_logits(layers, values, d):
    """Permutation logits [d, d] from the sampled L entries (q(P | L)), squashed into (-LOGIT_BOUND, LOGIT_BOUND).

    The bound keeps the Sinkhorn balancing exact in float32: at |logits| ~ 100 its row sums stall near
    1e-4 and the Bethe value overshot log perm by up to 0.8 nats, so the ELBO would no longer be a bound.
    """
    h = values if values.shape[-1] > 0 else jnp.zeros(values.shape[:-1] + (1,), values.dtype)
    for w, b in layers[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = layers[-1]
    raw = (h @ w + b).reshape(values.shape[:-1] + (d, d))
    return LOGIT_BOUND * jnp.tanh(raw / LOGIT_BOUND)


def log_prior_lower(values, prior, horseshoe_scale, prior_mean, prior_var):
    if prior == "normal":
        return jnp.sum(jax.scipy.stats.norm.logpdf(values, prior_mean, jnp.sqrt(prior_var)), axis=-1)
    # log(1 + s^2 / x^2) as log(x^2 + s^2) - log(x^2) with x^2 >= 1e-20: s^2 / (x^2 + 1e-30) had a gradient
    # with (x^2 + 1e-30)^2 in its denominator, which underflows to 0 in float32 for |x| < 1e-15 (NaN at d=20).
    s2 = horseshoe_scale**2
    x2 = jnp.maximum(values**2, 1e-20)
    density = jnp.log(jnp.log(x2 + s2) - jnp.log(x2))
    return jnp.sum(density - jnp.log(2 * jnp.pi * horseshoe_scale), axis=-1)


def draw(params, key, d, num, temperature, iterations):
    """num samples (values [num, m], P [num, d, d], W [num, d, d], logits) from q."""
    k_l, k_p = jax.random.split(key)
    eps = jax.random.normal(k_l, (num,) + params["mean"].shape)
    values = params["mean"] + jnp.exp(params["log_std"]) * eps
    logits = mlp_logits(params["mlp"], values, d)
    perm = sample_permutation(k_p, logits, temperature, iterations)
    return values, perm, weights_from(perm, lower_matrix(values, d)), logits


def make_loss(stats, num_rows, d, obs_var, num_mc, temperature, iterations, prior, horseshoe_scale, pm, pv):
    """-ELBO; `stats` = X^T X (the linear Gaussian likelihood depends on the data only through it)."""
    m = d * (d - 1) // 2
    log_p_perm = -math.lgamma(d + 1)

    def log_likelihood(w):
        r = jnp.eye(d) - w  # residuals X (I - W)
        sq = jnp.trace(r.T @ stats @ r)
        return -0.5 * sq / obs_var - 0.5 * num_rows * d * jnp.log(2 * jnp.pi * obs_var)

    def loss(params, key):
        values, perm, w, logits = draw(params, key, d, num_mc, temperature, iterations)
        log_lik = jax.vmap(log_likelihood)(w)
        log_q_p = jax.vmap(log_q_permutation)(perm, logits)
        log_p_l = log_prior_lower(values, prior, horseshoe_scale, pm, pv)
        entropy_l = jnp.sum(params["log_std"]) + 0.5 * m * jnp.log(2 * jnp.pi * jnp.e)
        elbo = jnp.mean(log_lik + log_p_l + log_p_perm - log_q_p) + entropy_l
        return -elbo

    return loss


def run_bcd(
    method,
    dataset,
    model,
    seed,
    *,
    steps,
    num_mc_samples,
    learning_rate,
    temperature,
    sinkhorn_iterations,
    threshold,
    num_samples,
    mlp_hidden,
    l_prior,
    horseshoe_scale,
    progress=True,
):
    """Train q(L, P) with AdaBelief on the -ELBO, then draw `num_samples` (G, theta) pairs from it."""
    require_observational(method, dataset)
    x = check_finite_data(dataset)
    start = time.perf_counter()
    d = dataset.num_variables
    stats = jnp.asarray(x.T @ x, jnp.float32)
    key = jax.random.PRNGKey(seed)
    k_init, k_train, k_draw = jax.random.split(key, 3)
    params = init_params(k_init, d, mlp_hidden)
    loss = make_loss(
        stats,
        x.shape[0],
        d,
        float(model.obs_var),
        num_mc_samples,
        temperature,
        sinkhorn_iterations,
        l_prior,
        horseshoe_scale,
        float(model.prior_mean),
        float(model.prior_var),
    )
    optimiser = optax.adabelief(learning_rate)
    opt_state = optimiser.init(params)

    def update(carry, key):
        params, opt_state = carry
        value, grads = jax.value_and_grad(loss)(params, key)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), value

    @jax.jit
    def run_chunk(carry, keys):
        return jax.lax.scan(update, carry, keys)

    keys = jax.random.split(k_train, max(steps, 1))[:steps]
    carry, losses = (params, opt_state), []
    chunks = range(0, steps, CHUNK)
    for begin in tqdm(chunks, desc=method, unit="chunk", disable=None if progress else True):
        carry, values = run_chunk(carry, keys[begin : begin + CHUNK])
        losses.append(np.asarray(values))
    params = carry[0]
    losses = np.concatenate(losses) if losses else np.zeros(0)

    _, _, w, _ = jax.jit(lambda p, k: draw(p, k, d, num_samples, temperature, sinkhorn_iterations))(params, k_draw)
    w = np.asarray(w, dtype=np.float64)
    graphs = (np.abs(w) > threshold).astype(np.uint8)
    theta = np.where(graphs == 1, w, 0.0)
    final = float(np.mean(losses[-min(len(losses), 100) :])) if len(losses) else float("nan")
    return make_samples(
        method,
        model,
        seed,
        graphs,
        theta,
        time.perf_counter() - start,
        dataset,
        extra_metadata={"final_neg_elbo": final},
    )
