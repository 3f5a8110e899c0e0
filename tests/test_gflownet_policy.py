"""Policy distributions and the loss: normalisation, exact zeros off the graph, finiteness."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy
from jspgfn.gflownet.loss import LossConfig, subtb_loss
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.graphs import transitive_closure
from jspgfn.models import get_graph_prior, get_model

SMALL = dict(embed_dim=16, mlp_hidden=16, theta_hidden=16, num_heads=2, key_size=8)


def _graphs(d, seed=0):
    rng = np.random.default_rng(seed)
    out = [np.zeros((d, d), np.uint8)]  # the empty graph
    for _ in range(5):
        order = rng.permutation(d)
        g = np.zeros((d, d), np.uint8)
        for a in range(d):
            for b in range(a + 1, d):
                if rng.random() < 0.5:
                    g[order[a], order[b]] = 1
        out.append(g)
    out.append(np.triu(np.ones((d, d), np.uint8), 1))  # complete
    return np.stack(out)


def _net(model_name, d, family=None):
    model = get_model(model_name)
    fam = family or ("full" if model_name == "lingauss-full" else "diag")
    net = make_network(NetConfig(**SMALL, family=fam), model.theta_shape(d)[-1])
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((1, d, d), jnp.uint8))
    return model, net, params


def test_action_log_probs_normalise():
    d = 4
    graphs = jnp.asarray(_graphs(d))
    model, net, params = _net("lingauss-diag", d)
    out = net.apply(params, graphs)
    state = envlib.EnvState(graphs, jnp.asarray(transitive_closure(np.asarray(graphs))))
    logp = policy.action_log_probs(out["stop_logit"], out["edge_logits"], envlib.edge_mask(state))
    np.testing.assert_allclose(np.exp(np.asarray(logp, np.float64)).sum(axis=1), 1.0, atol=1e-5)


def test_exploration_keeps_the_policy_stop_and_spreads_the_rest_uniformly():
    """explore_policy_stop (beyond the paper): P(stop | G) is the policy's, each valid edge gets
    (1 - P(stop | G)) / #valid edges, invalid actions 0, and at the complete DAG only the stop."""
    d = 4
    graphs = jnp.asarray(_graphs(d, seed=5))
    _, net, params = _net("lingauss-diag", d)
    params = jax.tree_util.tree_map(lambda p: p + 0.3 * jax.random.normal(jax.random.PRNGKey(7), p.shape), params)
    out = net.apply(params, graphs)
    state = envlib.EnvState(graphs, jnp.asarray(transitive_closure(np.asarray(graphs))))
    emask = envlib.edge_mask(state)
    logp = policy.action_log_probs(out["stop_logit"], out["edge_logits"], emask)
    amask = np.asarray(envlib.action_mask(state))
    explore = np.exp(np.asarray(policy.exploration_log_probs(logp, jnp.asarray(amask)), np.float64))
    p_stop = np.exp(np.asarray(logp, np.float64))[:, -1]
    np.testing.assert_allclose(explore.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(explore[:, -1], p_stop, rtol=1e-5)
    assert np.all(explore[:, :-1][~amask[:, :-1]] == 0.0)
    for row, valid in zip(explore[:, :-1], amask[:, :-1]):
        if valid.any():
            np.testing.assert_allclose(row[valid], row[valid][0], rtol=1e-5)
    assert 0.05 < p_stop[0] < 0.95 and amask[0, :-1].sum() == d * (d - 1)  # the empty graph: a real mixture
    np.testing.assert_allclose(explore[-1, -1], 1.0)  # the complete DAG: the forced stop


@pytest.mark.parametrize("model_name", ["lingauss-diag", "lingauss-full", "mlp-gauss"])
def test_theta_exactly_zero_off_graph(model_name):
    d = 4
    graphs = jnp.asarray(_graphs(d))
    model, net, params = _net(model_name, d)
    out = net.apply(params, graphs)
    mask = policy.node_mask_of(model, graphs)
    theta = policy.sample_theta(jax.random.PRNGKey(1), out, mask, 3)
    assert np.all(np.asarray(theta)[np.broadcast_to(np.asarray(mask)[:, None] == 0, theta.shape)] == 0.0)
    full = jax.vmap(jax.vmap(model.from_node_params))(theta)
    pmask = jax.vmap(model.parameter_mask)(graphs)
    assert np.all(np.asarray(full)[np.broadcast_to(np.asarray(pmask)[:, None] == 0, full.shape)] == 0.0)
    logq = policy.theta_log_prob(out, theta, mask)
    assert np.all(np.isfinite(np.asarray(logq)))


def test_full_covariance_density_matches_marginal_gaussian():
    """log q over the active parameters = multivariate normal with covariance L_aa L_aa^T (the factor's
    active block), the law sample_theta draws from."""
    from scipy.stats import multivariate_normal

    d = 4
    graphs = jnp.asarray(_graphs(d, seed=3))
    model, net, params = _net("lingauss-full", d)
    params = jax.tree_util.tree_map(
        lambda p: p + 0.05 * jax.random.normal(jax.random.PRNGKey(2), p.shape), params
    )  # non-zero off-diagonal factor
    out = net.apply(params, graphs)
    mask = policy.node_mask_of(model, graphs)
    theta = policy.sample_theta(jax.random.PRNGKey(4), out, mask, 2)
    logq = np.asarray(policy.theta_log_prob(out, theta, mask))
    tril, loc, m = np.asarray(out["tril"], np.float64), np.asarray(out["loc"]), np.asarray(mask) > 0
    for b in range(graphs.shape[0]):
        for s in range(2):
            ref = 0.0
            for j in range(d):
                a = m[b, j]
                if a.any():
                    block = tril[b, j][np.ix_(a, a)]
                    ref += multivariate_normal(loc[b, j][a], block @ block.T).logpdf(np.asarray(theta)[b, s, j][a])
            np.testing.assert_allclose(logq[b, s], ref, rtol=1e-4, atol=1e-3)


def test_full_family_draws_and_scores_an_ill_conditioned_factor():
    """A triangular factor with small diagonal and large off-diagonal entries (its covariance numerically
    singular, as a d=10 training of the quick preset reached): the density stays finite where re-factorising
    L L^T in float32 gives NaN, and the draws have the covariance L_aa L_aa^T."""
    p = 6
    rng = np.random.default_rng(0)
    tril = np.tril(rng.uniform(0.3, 0.6, (p, p)), -1) + np.diag(np.full(p, 0.003))
    mask = np.ones((1, 1, p), np.float32)
    mask[..., 2] = 0  # one inactive parameter
    block32 = jnp.asarray(tril[np.ix_(mask[0, 0] > 0, mask[0, 0] > 0)], jnp.float32)
    assert not np.all(np.isfinite(np.asarray(jnp.linalg.cholesky(block32 @ block32.T))))  # the old way fails
    out = {"loc": jnp.zeros((1, 1, p)), "tril": jnp.asarray(tril[None, None], jnp.float32)}
    theta = policy.sample_theta(jax.random.PRNGKey(0), out, jnp.asarray(mask), 20000)
    assert np.all(np.isfinite(np.asarray(policy.theta_log_prob(out, theta, jnp.asarray(mask)))))
    active = mask[0, 0] > 0
    block = tril[np.ix_(active, active)]
    draws = np.asarray(theta)[0, :, 0][:, active].astype(np.float64)
    np.testing.assert_allclose(np.cov(draws.T), block @ block.T, atol=0.02)
    assert np.all(np.asarray(theta)[0, :, 0, 2] == 0)


def test_full_factor_rows_are_scaled_by_the_node_scales():
    """The full family's factor is L = diag(scale) (I + N), N strictly lower triangular: its diagonal is the
    scale and each row's off-diagonal entries shrink with that row's scale (a trained network's N is not 0)."""
    d = 4
    model, net, params = _net("lingauss-full", d)
    params = jax.tree_util.tree_map(lambda x: x + 0.1 * jnp.ones_like(x), params)  # N != 0
    out = net.apply(params, jnp.asarray(_graphs(d)))
    tril, scale = np.asarray(out["tril"]), np.asarray(out["scale"])
    assert np.all(np.triu(tril, 1) == 0)
    np.testing.assert_allclose(np.diagonal(tril, axis1=-2, axis2=-1), scale, rtol=1e-6)
    unit = tril / scale[..., :, None]
    assert np.abs(np.tril(unit, -1)).max() > 0.01
    smaller = dict(params)
    smaller["policy/theta_scale"] = dict(params["policy/theta_scale"])
    smaller["policy/theta_scale"]["b"] = params["policy/theta_scale"]["b"] - 5.0  # smaller scales, same N
    tril2 = np.asarray(net.apply(smaller, jnp.asarray(_graphs(d)))["tril"])
    scale2 = np.diagonal(tril2, axis1=-2, axis2=-1)
    assert np.all(scale2 < scale)
    np.testing.assert_allclose(tril2 / scale2[..., :, None], unit, rtol=1e-4, atol=1e-6)


def test_diag_density_matches_normal():
    from scipy.stats import norm

    d = 4
    graphs = jnp.asarray(_graphs(d, seed=5))
    model, net, params = _net("lingauss-diag", d)
    out = net.apply(params, graphs)
    mask = policy.node_mask_of(model, graphs)
    theta = policy.sample_theta(jax.random.PRNGKey(4), out, mask, 2)
    logq = np.asarray(policy.theta_log_prob(out, theta, mask))
    ref = norm(np.asarray(out["loc"])[:, None], np.asarray(out["scale"])[:, None]).logpdf(np.asarray(theta))
    ref = (ref * np.asarray(mask)[:, None]).sum(axis=(-2, -1))
    np.testing.assert_allclose(logq, ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("model_name", ["lingauss-diag", "lingauss-full", "mlp-gauss"])
@pytest.mark.parametrize("penalty, theta_elbo", [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)])
def test_loss_and_grads_finite_with_empty_graph(model_name, penalty, theta_elbo):
    """The released code's 0/0 on the empty graph made Adam's state NaN forever."""
    d = 4
    model, net, params = _net(model_name, d)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((20, d)), jnp.float32)
    graphs = jnp.zeros((3, d, d), jnp.uint8)  # only empty graphs: G' has one edge
    actions = jnp.array([1, 2, 1 * d + 3], jnp.int32)
    cfg = LossConfig(num_theta_samples=3, penalty=penalty, theta_elbo=theta_elbo)
    prior = get_graph_prior("uniform", d)
    (loss, metrics), grads = jax.value_and_grad(subtb_loss, has_aux=True)(
        params, net.apply, model, prior, graphs, actions, jax.random.PRNGKey(0), x, 20, cfg
    )
    assert np.isfinite(float(loss))
    assert all(np.all(np.isfinite(np.asarray(g))) for g in jax.tree_util.tree_leaves(grads))
    if penalty:
        assert np.isfinite(float(metrics["penalty"]))
    if theta_elbo:
        assert np.isfinite(float(metrics["neg_elbo"]))
        assert float(loss) == pytest.approx(float(metrics["subtb_loss"]) + float(metrics["neg_elbo"]), rel=1e-5)


def test_stop_target_changes_the_gradient_not_the_loss():
    """stop_target_tau (beyond the paper): the child's log P(stop | G') comes from the target network without
    gradient. With the target equal to the online network the residuals, hence the loss, are the paper's;
    the gradient differs where G' can stop, and is the paper's where every G' is complete (stop forced)."""
    d = 4
    model, net, params = _net("lingauss-diag", d)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((20, d)), jnp.float32)
    prior = get_graph_prior("uniform", d)
    cfg = LossConfig(num_theta_samples=3)

    def value_and_grads(graphs, actions, target):
        (loss, _), grads = jax.value_and_grad(subtb_loss, has_aux=True)(
            params, net.apply, model, prior, graphs, actions, jax.random.PRNGKey(0), x, 20, cfg, None, target
        )
        return float(loss), jax.tree_util.tree_leaves(grads)

    def same(a, b):
        return all(np.allclose(u, v, rtol=1e-5, atol=1e-7) for u, v in zip(a, b))

    sparse = jnp.zeros((2, d, d), jnp.uint8)  # G' has one edge and may stop
    actions = jnp.array([1, 2 * d + 3], jnp.int32)
    paper, target = value_and_grads(sparse, actions, None), value_and_grads(sparse, actions, params)
    assert paper[0] == pytest.approx(target[0], rel=1e-6)
    assert not same(paper[1], target[1])

    complete = np.triu(np.ones((d, d), np.uint8), 1)
    almost = np.stack([complete, complete])
    almost[0, 0, 1] = almost[1, 2, 3] = 0  # G' = the complete DAG: its stop is forced
    paper, target = (
        value_and_grads(jnp.asarray(almost), actions, params),
        value_and_grads(jnp.asarray(almost), actions, None),
    )
    assert paper[0] == pytest.approx(target[0], rel=1e-6)
    assert same(paper[1], target[1])


def test_stop_target_switched_off_is_the_papers_loss():
    """use_target False (stop_target_after, before the switch): a target network far from the online one
    changes nothing, loss and gradient are the paper's; switched on, that target changes the loss."""
    d = 4
    model, net, params = _net("lingauss-diag", d)
    other = net.init(jax.random.PRNGKey(5), jnp.zeros((1, d, d), jnp.uint8))
    x = jnp.asarray(np.random.default_rng(0).standard_normal((20, d)), jnp.float32)
    prior = get_graph_prior("uniform", d)
    cfg = LossConfig(num_theta_samples=3)
    graphs, actions = jnp.zeros((2, d, d), jnp.uint8), jnp.array([1, 2 * d + 3], jnp.int32)

    def value_and_grads(target, use_target):
        (loss, _), grads = jax.value_and_grad(subtb_loss, has_aux=True)(
            params,
            net.apply,
            model,
            prior,
            graphs,
            actions,
            jax.random.PRNGKey(0),
            x,
            20,
            cfg,
            None,
            target,
            use_target,
        )
        return float(loss), jax.tree_util.tree_leaves(grads)

    paper, off, on = value_and_grads(None, True), value_and_grads(other, jnp.bool_(False)), value_and_grads(other, True)
    assert off[0] == pytest.approx(paper[0], rel=1e-6)
    assert all(np.allclose(u, v, rtol=1e-5, atol=1e-7) for u, v in zip(paper[1], off[1]))
    assert on[0] != pytest.approx(paper[0], rel=1e-3)


def test_shared_theta_noise_pairs_theta_with_theta_prime():
    """shared_theta_noise (beyond the paper): theta'_s of G' is drawn with theta_s's standard normal noise,
    so where the two halves' q are equal their draws are equal on the common parameters (and theta' alone
    has the added edge's weight); each half's draws are still standard normal around its own loc."""
    d, s = 4, 3
    rng = np.random.default_rng(0)
    loc = jnp.asarray(np.tile(rng.standard_normal((3, d, d)), (2, 1, 1)), jnp.float32)
    scale = jnp.asarray(np.tile(rng.uniform(0.5, 2, (3, d, d)), (2, 1, 1)), jnp.float32)
    graphs = np.zeros((3, d, d), np.uint8)
    graphs[:, 0, 1] = 1
    both = np.concatenate([graphs, graphs])
    both[3:, 2, 1] = 1  # G' = G + (2 -> 1)
    model = get_model("lingauss-diag")
    mask = policy.node_mask_of(model, jnp.asarray(both))
    for pool in (0, 4):
        theta = np.asarray(
            policy.sample_theta(jax.random.PRNGKey(1), {"loc": loc, "scale": scale}, mask, s, pool, 2, True)
        )
        common = np.asarray(mask[:3]) > 0
        np.testing.assert_array_equal(
            theta[:3][np.broadcast_to(common[:, None], theta[:3].shape)],
            theta[3:][np.broadcast_to(common[:, None], theta[3:].shape)],
        )
        assert np.all(theta[3:, :, 1, 2] != 0) and np.all(theta[:3, :, 1, 2] == 0)
    many = policy.sample_theta(
        jax.random.PRNGKey(2), {"loc": loc, "scale": scale}, jnp.ones((6, d, d)), 4000, 0, 2, True
    )
    z = (np.asarray(many) - np.asarray(loc)[:, None]) / np.asarray(scale)[:, None]
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02


def test_shared_theta_noise_keeps_the_mean_residual():
    """With shared noise the residuals keep their mean over theta (theta and theta' each keep their law, and
    the mean is linear), and in the pairs (s, s) that share it their variance is smaller where G -> G' leaves
    nodes with parameters unchanged. One transition, S = 64."""
    d, s = 4, 64
    model, net, params = _net("lingauss-diag", d)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((20, d)), jnp.float32)
    prior = get_graph_prior("uniform", d)
    graph = np.zeros((1, d, d), np.uint8)
    graph[:, 0, 2] = graph[:, 1, 2] = graph[:, 0, 3] = 1
    action = jnp.array([1 * d + 3], jnp.int32)  # 1 -> 3: node 2 keeps its two parents
    means, errors = {}, {}
    for shared in (False, True):
        cfg = LossConfig(num_theta_samples=s, shared_theta_noise=shared)
        runs = [
            subtb_loss(params, net.apply, model, prior, jnp.asarray(graph), action, jax.random.PRNGKey(k), x, 20, cfg)
            for k in range(16)
        ]
        values = np.array([float(metrics["mean_delta"]) for _, metrics in runs])
        means[shared], errors[shared] = values.mean(), values.std(ddof=1) / np.sqrt(len(values))
    metrics = runs[0][1]
    assert abs(means[True] - means[False]) < 4 * np.hypot(errors[True], errors[False])
    spread_all, spread_shared = (float(metrics[k]) for k in ("abs_delta", "abs_delta_shared"))
    assert spread_all > 1.0 and spread_shared < 0.5 * spread_all


def test_shared_theta_noise_needs_two_theta_samples():
    from jspgfn.errors import JspgfnError
    from jspgfn.gflownet.presets import get_preset

    assert get_preset("quick", shared_theta_noise=True).num_theta_samples == 4
    with pytest.raises(JspgfnError, match="num_theta_samples >= 2"):
        get_preset("quick", shared_theta_noise=True, num_theta_samples=1)


def _reward_inputs(model, seed, rows, d=4):
    """Graphs [B, d, d], theta on them [B, 2, d, d] (node layout), data [rows, d], a random 0/1 mask."""
    graphs = jnp.asarray(_graphs(d, seed=seed))
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((rows, d)), jnp.float32)
    interventions = jnp.asarray(rng.random((rows, d)) < 0.3, jnp.float32)
    theta_nodes = jnp.asarray(rng.standard_normal((graphs.shape[0], 2, d, d)), jnp.float32)
    return graphs, theta_nodes * jax.vmap(model.to_node_params)(graphs)[:, None], x, interventions


def test_linear_fast_log_reward_matches_model():
    from jspgfn.gflownet.loss import log_rewards
    from jspgfn.models.base import log_reward

    model, prior = get_model("lingauss-diag"), get_graph_prior("erdos_renyi", 4)
    graphs, theta_nodes, x, _ = _reward_inputs(model, seed=7, rows=30)
    fast = np.asarray(log_rewards(model, prior, theta_nodes, graphs, x[:10], 30))
    for b in range(graphs.shape[0]):
        for s in range(2):
            ref = log_reward(
                model,
                prior,
                model.from_node_params(theta_nodes[b, s]),
                graphs[b].astype(jnp.float32),
                x[:10],
                num_total=30,
            )
            np.testing.assert_allclose(fast[b, s], float(ref), rtol=1e-4)


def test_mlp_fast_log_reward_matches_model():
    """The batched MLP likelihood (one matmul for all node MLPs) gives models.log_reward's values and
    gradients in theta, on graphs from empty to complete, with nonzero inactive weights (masked)."""
    from jspgfn.gflownet.rewards import log_rewards
    from jspgfn.models.base import log_reward

    d = 4
    model, prior = get_model("mlp-gauss"), get_graph_prior("erdos_renyi", d)
    graphs = jnp.asarray(_graphs(d, seed=5))
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.standard_normal((30, d)), jnp.float32)
    theta_nodes = jnp.asarray(rng.standard_normal((graphs.shape[0], 2, d, model.params_per_node(d))), jnp.float32)

    def reference(theta, graph):
        return log_reward(model, prior, model.from_node_params(theta), graph.astype(jnp.float32), x[:10], num_total=30)

    ref_fn = jax.vmap(lambda th, gr: jax.vmap(lambda t: reference(t, gr))(th))
    fast = np.asarray(log_rewards(model, prior, theta_nodes, graphs, x[:10], 30))
    np.testing.assert_allclose(fast, np.asarray(ref_fn(theta_nodes, graphs)), rtol=1e-5)
    assert np.ptp(fast) > 100  # the cases differ: a check that could fail

    fast_grad = jax.grad(lambda t: jnp.sum(log_rewards(model, prior, t, graphs, x[:10], 30)))(theta_nodes)
    ref_grad = jax.grad(lambda t: jnp.sum(ref_fn(t, graphs)))(theta_nodes)
    np.testing.assert_allclose(np.asarray(fast_grad), np.asarray(ref_grad), rtol=1e-4, atol=1e-3)
    # inactive first-layer weights (non-parents) get exactly the prior's gradient: none from the likelihood
    inactive = np.asarray(policy.node_mask_of(model, graphs))[:, None] == 0
    np.testing.assert_array_equal(np.asarray(fast_grad)[np.broadcast_to(inactive, fast_grad.shape)], 0.0)


@pytest.mark.parametrize("pool_factor", [0, 4])
def test_noise_is_standard_normal(pool_factor):
    eps = np.asarray(policy.standard_normal(jax.random.PRNGKey(0), (200, 8, 3, 40), pool_factor, groups=2))
    assert abs(eps.mean()) < 0.02 and abs(eps.std() - 1) < 0.02
    # within one element, the S draws are distinct (independent pool entries)
    assert np.all(np.abs(np.diff(np.abs(eps[0, :, 0, 0]))) > 0)
    # different elements are uncorrelated
    assert abs(np.corrcoef(eps[0].reshape(-1), eps[1].reshape(-1))[0, 1]) < 0.2
    # the two blocks (G and G') never share a draw: their noise is independent
    first, second = np.abs(eps[:100, :, 0, 0]).ravel(), np.abs(eps[100:, :, 0, 0]).ravel()
    assert not np.intersect1d(first, second).size


def test_log_reward_leaves_out_intervened_entries():
    """With interventions, every intervened entry drops out of the reward, as in models.log_reward."""
    from jspgfn.gflownet.loss import log_rewards
    from jspgfn.models.base import log_reward

    model, prior = get_model("lingauss-diag"), get_graph_prior("uniform", 4)
    graphs, theta_nodes, x, interventions = _reward_inputs(model, seed=3, rows=12)
    with_int = np.asarray(log_rewards(model, prior, theta_nodes, graphs, x, 12, interventions))
    without = np.asarray(log_rewards(model, prior, theta_nodes, graphs, x, 12))
    for b in range(graphs.shape[0]):
        ref = log_reward(
            model, prior, model.from_node_params(theta_nodes[b, 0]), graphs[b].astype(jnp.float32), x, interventions
        )
        np.testing.assert_allclose(with_int[b, 0], float(ref), rtol=1e-4)
    assert np.all(with_int != without)


def test_logit_scale_multiplies_the_structure_logits_only():
    """logit_scale (the released code multiplies its logits by N) scales the stop and edge logits and
    leaves the theta head alone; the parameters are the same for every scale."""
    d = 4
    model = get_model("lingauss-diag")
    graphs = jnp.asarray(_graphs(d))
    one = make_network(NetConfig(**SMALL), model.theta_shape(d)[-1])
    hundred = make_network(NetConfig(**SMALL, logit_scale=100.0), model.theta_shape(d)[-1])
    params = one.init(jax.random.PRNGKey(0), jnp.zeros((1, d, d), jnp.uint8))
    a, b = one.apply(params, graphs), hundred.apply(params, graphs)
    np.testing.assert_allclose(b["stop_logit"], 100.0 * a["stop_logit"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b["edge_logits"], 100.0 * a["edge_logits"], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(b["loc"], a["loc"])
    np.testing.assert_array_equal(b["scale"], a["scale"])


def test_stop_bias_shifts_the_stop_logit_only():
    """stop_bias (beyond the paper) adds a constant to the stop logit, before logit_scale, with the same
    parameters: where P(stop | G) starts; the edge logits and the theta head are unchanged."""
    from jspgfn.errors import JspgfnError
    from jspgfn.gflownet.presets import get_preset

    d = 4
    model = get_model("lingauss-diag")
    graphs = jnp.asarray(_graphs(d))
    plain = make_network(NetConfig(**SMALL), model.theta_shape(d)[-1])
    biased = make_network(NetConfig(**SMALL, stop_bias=10.0, logit_scale=2.0), model.theta_shape(d)[-1])
    scaled = make_network(NetConfig(**SMALL, logit_scale=2.0), model.theta_shape(d)[-1])
    params = plain.init(jax.random.PRNGKey(0), jnp.zeros((1, d, d), jnp.uint8))
    a, b = scaled.apply(params, graphs), biased.apply(params, graphs)
    np.testing.assert_allclose(b["stop_logit"], a["stop_logit"] + 20.0, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(b["edge_logits"], a["edge_logits"])
    np.testing.assert_array_equal(b["loc"], a["loc"])
    assert jax.tree_util.tree_structure(biased.init(jax.random.PRNGKey(0), graphs[:1])) == jax.tree_util.tree_structure(
        params
    )
    assert get_preset("smoke", stop_bias=-3.0).stop_bias == -3.0
    with pytest.raises(JspgfnError, match="stop_bias"):
        get_preset("smoke", stop_bias=float("inf"))


def test_stop_count_scale_adds_one_learned_level_per_edge_count():
    """stop_count_scale (beyond the paper) adds scale * level[number of edges] to the stop logit, before
    logit_scale; the levels start at 0 (the network's output unchanged), and a gradient reaches only the
    levels of edge counts present in the batch."""
    from jspgfn.errors import JspgfnError
    from jspgfn.gflownet.presets import get_preset

    d = 4
    model = get_model("lingauss-diag")
    graphs = jnp.asarray(_graphs(d))
    counts = np.asarray(graphs).sum(axis=(1, 2))
    plain = make_network(NetConfig(**SMALL, logit_scale=2.0), model.theta_shape(d)[-1])
    counted = make_network(NetConfig(**SMALL, logit_scale=2.0, stop_count_scale=10.0), model.theta_shape(d)[-1])
    params = counted.init(jax.random.PRNGKey(0), jnp.zeros((1, d, d), jnp.uint8))
    levels = params["policy"]["stop_by_edge_count"]
    assert levels.shape == (d * (d - 1) // 2 + 1,) and np.all(levels == 0)
    shared = {k: v for k, v in params.items() if k != "policy"}
    base = plain.apply(shared, graphs)
    np.testing.assert_array_equal(counted.apply(params, graphs)["stop_logit"], base["stop_logit"])

    moved = jnp.arange(levels.shape[0], dtype=jnp.float32) * 0.5 - 1.0
    out = counted.apply({**params, "policy": {"stop_by_edge_count": moved}}, graphs)
    np.testing.assert_allclose(out["stop_logit"], base["stop_logit"] + 2.0 * 10.0 * moved[counts], rtol=1e-6, atol=1e-4)
    np.testing.assert_array_equal(out["edge_logits"], base["edge_logits"])
    np.testing.assert_array_equal(out["loc"], base["loc"])

    some = graphs[:3]
    grad = jax.grad(lambda p: counted.apply(p, some)["stop_logit"].sum())(params)["policy"]["stop_by_edge_count"]
    present = np.zeros(levels.shape[0], bool)
    present[counts[:3]] = True
    assert present.sum() >= 2 and np.all((np.asarray(grad) != 0) == present)
    assert get_preset("smoke", stop_count_scale=100.0).stop_count_scale == 100.0
    with pytest.raises(JspgfnError, match="stop_count_scale"):
        get_preset("smoke", stop_count_scale=-1.0)


def _elbo_problem():
    """A linear Gaussian problem on 3 nodes where X_2's two weights are correlated a posteriori: (graph uint8
    [3, 3], x float64 [40, 3], model, its exact (means, covs), and objective(q_of) -> f(params, key), the ELBO
    term of q = q_of(params) with 16 reparameterised samples, as in the loss)."""
    from jspgfn.conjugate import posterior_theta
    from jspgfn.gflownet.loss import elbo_term, log_rewards, reparameterised

    d, n = 3, 40
    rng = np.random.default_rng(1)
    graph = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], np.uint8)
    w = graph * np.array([[0, 1.0, -0.5], [0, 0, 0.8], [0, 0, 0]])
    x = np.zeros((n, d))
    for j in range(d):
        x[:, j] = x @ w[:, j] + rng.normal(0.0, 0.3, n)
    model = get_model("lingauss", obs_var=0.09)
    prior = get_graph_prior("uniform", d)
    graphs = jnp.asarray(graph[None])
    node_mask = policy.node_mask_of(model, graphs)  # [1, d, d]
    xj = jnp.asarray(x, jnp.float32)

    def objective(q_of):
        def f(params, key):
            out = q_of(params)
            theta = jax.lax.stop_gradient(policy.sample_theta(key, out, node_mask, 16))
            log_r = log_rewards(model, prior, reparameterised(out, theta, node_mask), graphs, xj, n)
            return elbo_term(out, log_r, node_mask, n)

        return f

    return graph, x, model, node_mask, posterior_theta(model, x, graph), objective


def _minimise(objective, params, steps=4000):
    """Adam with a decaying step on objective(params, key), a fresh key per step -> params."""
    import optax

    opt = optax.adam(optax.exponential_decay(0.02, 2000, 0.05))
    state = opt.init(params)

    @jax.jit
    def step(params, state, key):
        grads = jax.grad(objective)(params, key)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state

    for i in range(steps):
        params, state = step(params, state, jax.random.PRNGKey(i))
    return params


def test_elbo_term_recovers_the_exact_diagonal_optimum():
    """Optimising the auxiliary ELBO term alone (reparameterised samples, as in the loss) must reach the
    reverse-KL optimum of a diagonal Gaussian against the closed-form linear Gaussian posterior:
    mean = posterior mean, variance = 1 / diag(posterior precision)."""
    graph, x, model, node_mask, (means, covs), objective = _elbo_problem()
    d = graph.shape[0]

    def q_of(params):
        return {"loc": params["loc"], "scale": jax.nn.softplus(params["raw"])}

    params = _minimise(objective(q_of), {"loc": jnp.zeros((1, d, d)), "raw": jnp.full((1, d, d), -2.0)})
    active = np.asarray(node_mask[0]) > 0  # node layout [j, i]
    loc = np.asarray(params["loc"][0])[active]
    scale = np.asarray(jax.nn.softplus(params["raw"][0]))[active]
    expect_loc = means[active]
    variances = []  # 1 / diag(precision) per node, parents in ascending order (the mask's order)
    for j in range(d):
        parents = graph[:, j] > 0
        if parents.any():
            precision = np.linalg.inv(covs[j][np.ix_(parents, parents)])
            variances.extend(1.0 / precision.diagonal())
    expect_scale = np.sqrt(variances)
    np.testing.assert_allclose(loc, expect_loc, atol=0.01)
    np.testing.assert_allclose(scale, expect_scale, rtol=0.05)
    # X_2's two weights are correlated a posteriori, so this optimum is not the marginal sd.
    assert not np.allclose(scale[-2:], np.sqrt(covs[2].diagonal()[:2]), rtol=0.05)


def test_elbo_term_recovers_the_exact_posterior_with_the_full_family():
    """With the full family (a Cholesky factor per node), the ELBO term's optimum is the linear Gaussian
    posterior itself: mean and full covariance of each node's weights (the diagonal family cannot reach the
    correlation of X_2's two weights, the test above)."""
    from jspgfn.gflownet.loss import reparameterised

    graph, x, model, node_mask, (means, covs), objective = _elbo_problem()
    d = graph.shape[0]

    def q_of(params):
        lower = jnp.tril(params["raw"], -1)
        diag = jax.nn.softplus(jnp.diagonal(params["raw"], axis1=-2, axis2=-1))
        tril = lower + diag[..., None] * jnp.eye(d)
        return {"loc": params["loc"], "scale": jnp.ones((1, d, d)), "tril": tril}

    params = {"loc": jnp.zeros((1, d, d)), "raw": jnp.broadcast_to(jnp.eye(d) * -2.0, (1, d, d, d))}
    out0 = q_of(params)
    theta0 = policy.sample_theta(jax.random.PRNGKey(0), out0, node_mask, 4)
    np.testing.assert_allclose(reparameterised(out0, theta0, node_mask), theta0, atol=1e-6)  # the same values
    params = _minimise(objective(q_of), params)
    active = np.asarray(node_mask[0]) > 0  # node layout [j, i]
    np.testing.assert_allclose(np.asarray(params["loc"][0])[active], means[active], atol=0.01)
    factor = np.asarray(policy.active_factor(q_of(params)["tril"], node_mask)[0])  # [d, P, P]
    for j in range(d):
        parents = graph[:, j] > 0
        if parents.any():
            block = factor[j][np.ix_(parents, parents)]
            np.testing.assert_allclose(block @ block.T, covs[j][np.ix_(parents, parents)], rtol=0.08, atol=1e-6)
    # X_2's two weights are correlated a posteriori, and the fitted covariance has that correlation
    block = factor[2][:2, :2] @ factor[2][:2, :2].T
    corr = block[0, 1] / np.sqrt(block[0, 0] * block[1, 1])
    expect = covs[2][0, 1] / np.sqrt(covs[2][0, 0] * covs[2][1, 1])
    assert abs(expect) > 0.2 and abs(corr - expect) < 0.05


def test_network_and_loss_configs_take_every_training_option():
    """NetConfig and LossConfig are read off TrainConfig by field name: every one of their fields is a
    training option (family aside), and a changed option reaches them."""
    import dataclasses

    from jspgfn.gflownet.core import loss_config, net_config
    from jspgfn.gflownet.presets import TrainConfig, get_preset

    options = {field.name for field in dataclasses.fields(TrainConfig)}
    assert {field.name for field in dataclasses.fields(NetConfig)} - {"family"} <= options
    assert {field.name for field in dataclasses.fields(LossConfig)} <= options
    cfg = get_preset("smoke", logit_scale=3.0, theta_layers=1, huber_delta=7.0, theta_elbo=0.5, noise_pool=0)
    net, loss = net_config(cfg, "full"), loss_config(cfg)
    assert (net.logit_scale, net.theta_layers, net.family) == (3.0, 1, "full")
    assert (loss.huber_delta, loss.theta_elbo, loss.noise_pool) == (7.0, 0.5, 0)
    assert loss.num_theta_samples == cfg.num_theta_samples and net.embed_dim == cfg.embed_dim


def test_stop_node_sum_adds_a_head_summed_over_the_nodes():
    """stop_node_sum (beyond the paper) adds sum_j MLP(x_j) to the stop logit, before logit_scale: with the rest of
    the parameters those of the plain network, the edge logits are the same, the stop logits differ by a term that
    vanishes when the head's output layer is zeroed and doubles when that layer is doubled (a linear output)."""
    from jspgfn.gflownet.presets import get_preset

    d = 4
    model = get_model("lingauss-diag")
    graphs = jnp.asarray(_graphs(d))
    plain = make_network(NetConfig(**SMALL, logit_scale=2.0), model.theta_shape(d)[-1])
    summed = make_network(NetConfig(**SMALL, logit_scale=2.0, stop_node_sum=True), model.theta_shape(d)[-1])
    params = summed.init(jax.random.PRNGKey(0), jnp.zeros((1, d, d), jnp.uint8))
    head = {k: v for k, v in params.items() if k.startswith("policy/stop_node_mlp")}
    assert len(head) == 2
    shared = {k: v for k, v in params.items() if k not in head}
    base = plain.apply(shared, graphs)
    out = summed.apply(params, graphs)
    np.testing.assert_array_equal(out["edge_logits"], base["edge_logits"])
    difference = np.asarray(out["stop_logit"] - base["stop_logit"]) / 2.0
    assert np.std(difference) > 1e-3  # the head depends on the graph

    # The same head with its output layer zeroed adds nothing; doubling that layer doubles the difference.
    last = sorted(head)[-1]
    zero = {**params, last: jax.tree_util.tree_map(jnp.zeros_like, params[last])}
    np.testing.assert_allclose(summed.apply(zero, graphs)["stop_logit"], base["stop_logit"], rtol=1e-6, atol=1e-5)
    double = {**params, last: jax.tree_util.tree_map(lambda v: 2 * v, params[last])}
    np.testing.assert_allclose(
        np.asarray(summed.apply(double, graphs)["stop_logit"] - base["stop_logit"]) / 2.0,
        2 * difference,
        rtol=1e-4,
        atol=1e-4,
    )
    assert get_preset("smoke", stop_node_sum=True).stop_node_sum is True
