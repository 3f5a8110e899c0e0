"""Structure MCMC over (G, theta): MH-MC3 and Metropolis-within-Gibbs MC3 (Madigan & York, 1995).

Structure move: uniform among the acyclic single-edge additions, deletions and
reversals of G, with the Hastings correction |nb(G)| / |nb(G')| for the
neighbourhood sizes (the original DiBS implementation omitted it; set
`hastings_correction=False` to reproduce that). theta lives in a fixed
dimension: parameters that G makes inactive carry their prior as a pseudo-prior,
so the chain's marginal over (G, active theta) is the joint posterior while no
trans-dimensional move is needed. Outputs mask theta by G (0 off the graph).

MH-MC3 proposes (G', theta' = theta + std * eps) jointly; Gibbs-MC3 alternates a
structure move at fixed theta and a Gaussian random-walk move on theta at fixed G.
Chains run vectorised (vmap) inside one jitted lax.scan; (G, theta) pairs are
recorded from the same step, so they stay aligned.
"""

import time

import jax
import jax.numpy as jnp
import jax.scipy.stats as jstats
import numpy as np

from jspgfn.graphs import transitive_closure_jax, valid_actions_jax
from jspgfn.models import get_graph_prior
from jspgfn_baselines.shared.common import check_finite_data, make_samples


def structure_moves(adjacency):
    """Masks [3, d, d] of valid additions, deletions and reversals of a DAG."""
    closure = transitive_closure_jax(adjacency)
    present = adjacency > 0
    add = valid_actions_jax(adjacency, closure)
    # i -> j can be reversed iff no other path i -> k ~> j exists (else j -> i closes a cycle).
    other_path = (adjacency.astype(jnp.float32) @ closure.astype(jnp.float32)) > 0
    reverse = present & ~other_path
    return jnp.stack([add, present, reverse])


def propose_structure(key, adjacency):
    """Uniform neighbour of a DAG. Returns (new adjacency, log |nb(G)|)."""
    d = adjacency.shape[-1]
    moves = structure_moves(adjacency)
    count = jnp.sum(moves)
    index = jax.random.categorical(key, jnp.where(moves.ravel(), 0.0, -jnp.inf))
    kind, i, j = index // (d * d), (index // d) % d, index % d
    new = adjacency.at[i, j].set(jnp.where(kind == 0, 1, 0).astype(adjacency.dtype))
    new = new.at[j, i].set(jnp.where(kind == 2, 1, new[j, i]).astype(adjacency.dtype))
    return new, jnp.log(count)


def log_neighbourhood(adjacency):
    return jnp.log(jnp.sum(structure_moves(adjacency)))


def make_log_target(model, graph_prior, x, interventions):
    """log pi(G, theta) with a prior pseudo-prior on inactive parameters."""

    def log_target(adjacency, theta):
        g = adjacency.astype(x.dtype)
        log_pseudo_prior = jnp.sum(jstats.norm.logpdf(theta, model.prior_mean, jnp.sqrt(model.prior_var)))
        return graph_prior.log_prob(g) + log_pseudo_prior + model.log_likelihood(theta, g, x, interventions)

    return log_target


def make_step(kind, log_target, proposal_std, hastings_correction):
    def accept(key, log_ratio):
        return jnp.log(jax.random.uniform(key)) < log_ratio

    def mh_step(state, key):
        adjacency, theta, logp = state
        k_struct, k_theta, k_acc = jax.random.split(key, 3)
        new_adj, log_nb = propose_structure(k_struct, adjacency)
        new_theta = theta + proposal_std * jax.random.normal(k_theta, theta.shape)
        new_logp = log_target(new_adj, new_theta)
        hastings = jnp.where(hastings_correction, log_nb - log_neighbourhood(new_adj), 0.0)
        ok = accept(k_acc, new_logp - logp + hastings)
        return (jnp.where(ok, new_adj, adjacency), jnp.where(ok, new_theta, theta), jnp.where(ok, new_logp, logp))

    def gibbs_step(state, key):
        adjacency, theta, logp = state
        k_struct, k_acc1, k_theta, k_acc2 = jax.random.split(key, 4)
        new_adj, log_nb = propose_structure(k_struct, adjacency)
        new_logp = log_target(new_adj, theta)
        hastings = jnp.where(hastings_correction, log_nb - log_neighbourhood(new_adj), 0.0)
        ok = accept(k_acc1, new_logp - logp + hastings)
        adjacency, logp = jnp.where(ok, new_adj, adjacency), jnp.where(ok, new_logp, logp)
        new_theta = theta + proposal_std * jax.random.normal(k_theta, theta.shape)
        new_logp = log_target(adjacency, new_theta)
        ok = accept(k_acc2, new_logp - logp)
        return (adjacency, jnp.where(ok, new_theta, theta), jnp.where(ok, new_logp, logp))

    return {"mh-mc3": mh_step, "gibbs-mc3": gibbs_step}[kind]


def run_chains(key, step, log_target, init_theta, num_chains, burn_in, thinning, samples_per_chain, d):
    """Vectorised chains. Returns (graphs [C, S, d, d], theta [C, S, ...], acceptance-free logp [C, S])."""

    def run_one(key, theta0):
        adjacency0 = jnp.zeros((d, d), jnp.int32)
        state = (adjacency0, theta0, log_target(adjacency0, theta0))

        def advance(state, key, num_steps):
            keys = jax.random.split(key, num_steps)
            state, _ = jax.lax.scan(lambda s, k: (step(s, k), None), state, keys)
            return state

        key_burn, key_draw = jax.random.split(key)
        state = advance(state, key_burn, burn_in) if burn_in > 0 else state

        def draw(state, key):
            state = advance(state, key, thinning)
            return state, state

        _, (graphs, thetas, logps) = jax.lax.scan(draw, state, jax.random.split(key_draw, samples_per_chain))
        return graphs, thetas, logps

    keys = jax.random.split(key, num_chains)
    return jax.jit(jax.vmap(run_one))(keys, init_theta)


def run_mc3(
    kind,
    dataset,
    model,
    seed,
    *,
    num_chains,
    burn_in,
    thinning,
    num_samples,
    proposal_std,
    graph_prior,
    hastings_correction,
):
    """Run MC3 chains and return PosteriorSamples (num_samples pairs, chain after chain).

    Args:
      kind: "mh-mc3" or "gibbs-mc3".
      model: a jspgfn.models likelihood model (linear or MLP).
      num_chains: chains run in parallel, each from the empty graph and theta from the prior.
      burn_in: steps discarded per chain; thinning: steps between recorded states.
      num_samples: total recorded pairs (ceil(num_samples / num_chains) per chain).
    """
    x = check_finite_data(dataset)
    d = dataset.num_variables
    prior = get_graph_prior(graph_prior, d)
    interventions = None if dataset.train_interventions is None else jnp.asarray(dataset.train_interventions)
    log_target = make_log_target(model, prior, jnp.asarray(x, jnp.float32), interventions)
    step = make_step(kind, log_target, float(proposal_std), bool(hastings_correction))
    per_chain = -(-int(num_samples) // int(num_chains))
    rng = np.random.default_rng(seed)
    init_theta = model.prior_mean + np.sqrt(model.prior_var) * rng.standard_normal((num_chains,) + model.theta_shape(d))
    start = time.perf_counter()
    graphs, thetas, _ = run_chains(
        jax.random.PRNGKey(seed),
        step,
        log_target,
        jnp.asarray(init_theta, jnp.float32),
        int(num_chains),
        int(burn_in),
        int(thinning),
        per_chain,
        d,
    )
    graphs = np.asarray(graphs).reshape((-1, d, d))[:num_samples]
    thetas = np.asarray(thetas).reshape((-1,) + model.theta_shape(d))[:num_samples]
    thetas = thetas * np.asarray(model.parameter_mask(graphs.astype(np.float32)))
    return make_samples(
        kind, model, seed, graphs, thetas, time.perf_counter() - start, dataset, graph_prior=graph_prior
    )
