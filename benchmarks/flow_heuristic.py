"""A policy built on a heuristic log-flow: the relaxed best completion of each graph (oracle, linear Gaussian).

The eighteenth session found that on the d=10 datasets whose log-reward spans thousands of nats the network's
stop logits must equal -log P(stop | G) = log F(G) - log R(G), thousands of nats at sparse graphs, and its edge
logits must separate children whose flows differ by hundreds: a regression over a range of thousands with
errors of tens of nats, which drown the few nats that separate a needed edge from a needless one. This module
hands the policy an estimate of log F(G) so the network has to learn only the rest:

  Phi_w(G) = log R(G) + w h(G),   h(G) = sum_j [ M_j(Pa_j(G), ND_j(G)) - s_j(Pa_j(G)) ] >= 0,

with s_j(S) the local score log P(x_j | x_S) (exact_dp.local_scores), M_j(P, B) = max over S with P subset of S
subset of B of s_j(S) (the best parent set that keeps j's parents and adds only candidates) and ND_j(G) the nodes
that are not descendants of j in G (j excluded). With w = 1, Phi_1(G) = sum_j M_j(Pa_j, ND_j) is an upper bound of
log R over every DAG that contains G, equal to log R(G) where no edge can be added (each node takes its best
parents among its current non-descendants, acyclicity between the nodes relaxed). The policy at G is a softmax
over the valid edges and the stop with the logits

  add i -> j:  Phi_w(G + ij) - Phi_w(G) + log P_B(G | G + ij) + u_ij(G),     stop:  -w h(G) + v(G),

u and v the network's edge and stop logits. Were Phi_w = log F, u = v = 0 would be the optimal policy; the
network learns only log F - Phi_w. Adding i -> j makes the descendants of j (and j) descendants of every
ancestor of i (and of i), so Phi_1 falls by the gains those ancestors could have had from them: what the edge
blocks. An oracle, like marginal_reward_oracle.py: it uses the closed-form local scores JSP-GFN exists to avoid.

  .venv/bin/python benchmarks/flow_heuristic.py DATA=EXACT ... [--weight W] [--stop-only]

samples the heuristic policy alone (the network's logits at zero) against `jspgfn exact`'s marginals;
`marginal_reward_oracle.py DATA=EXACT --flow-heuristic W [--heuristic-stop-only]` trains the network on top of it.
Lab notes, nineteenth session.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet.loss import uniform_log_pb
from jspgfn.graphs import valid_actions_jax


def ternary_codes(sets):
    """sum_k [k in set] 3^k: bool [..., d] -> int32 [...]. A parent set P within a candidate set B (P subset of B)
    is the entry ternary_codes(B) + ternary_codes(P) of best_superset_table (digit k: 0 out, 1 free, 2 in P)."""
    d = sets.shape[-1]
    return jnp.sum(jnp.where(sets, (3 ** jnp.arange(d)).astype(jnp.int32), 0), axis=-1)


def best_superset_table(local):
    """M[j, t] = max over S with P subset of S subset of B of local[j, S], t = ternary code of (P, B).

    local float [d, 2^d] (parent codes, bit i: i -> j; invalid entries very negative) -> float [d, 3^d]. Digit k
    of t: 0 = k not in B, 1 = k in B but not in P (free), 2 = k in P. Starting with every free node included,
    the free digits are resolved one position at a time (the subset-max transform over ternary codes).
    """
    d = local.shape[0]
    t = np.arange(3**d)
    digits = (t[:, None] // 3 ** np.arange(d)) % 3  # [3^d, d]
    best = np.array(local[:, (digits > 0) @ (1 << np.arange(d))], copy=True)
    for k in range(d):
        free = t[digits[:, k] == 1]
        best[:, free] = np.maximum(best[:, free - 3**k], best[:, free + 3**k])
    return best


def parent_codes(adjacency):
    """The parent set of each node as a code (bit i: i -> j): [B, d, d] -> int32 [B, d]."""
    d = adjacency.shape[-1]
    return jnp.sum(adjacency.astype(jnp.int32) << jnp.arange(d, dtype=jnp.int32)[None, :, None], axis=1)


def heuristic_terms(local, best, adjacency, closure, weight):
    """h(G) and the change of Phi_w from G to each child G + i -> j.

    Args: local float [d, 2^d], best float [d, 3^d] (local scores and best_superset_table of them); adjacency,
      closure [B, d, d] (closure[b, i, j] = 1 iff a path i ~> j); weight w.
    Returns: (h float [B] >= 0, delta_phi float [B, d, d], [b, i, j] = Phi_w(G + ij) - Phi_w(G); meaningless on
      edges that are not valid).
    """
    d = adjacency.shape[-1]
    nodes = jnp.arange(d)
    powers = (3**nodes).astype(jnp.int32)
    local, best = jnp.asarray(local), jnp.asarray(best)
    desc_self = (closure > 0) | jnp.eye(d, dtype=bool)[None]  # [B, a, k]: k is a or one of its descendants
    parents = jnp.swapaxes(adjacency > 0, -1, -2)  # [B, a, k]: k -> a
    non_desc = ~desc_self  # [B, a, k]: ND_a, a itself excluded
    now = ternary_codes(non_desc) + ternary_codes(parents)  # [B, a]
    m_now = best[nodes[None, :], now]  # [B, a]
    s_now = local[nodes[None, :], parent_codes(adjacency)]  # [B, a]
    h = jnp.sum(m_now - s_now, axis=-1)
    # Child G + i -> j: every a with a ~> i or a = i loses j and j's descendants from ND_a; j gains the parent i.
    lost = jnp.einsum("bak,bjk,k->baj", non_desc.astype(jnp.int32), desc_self.astype(jnp.int32), powers)  # [B, a, j]
    anc_self = jnp.swapaxes(desc_self, -1, -2)  # [B, i, a]: a is i or an ancestor of i
    child = now[:, None, None, :] - jnp.where(anc_self[:, :, None, :], jnp.swapaxes(lost, -1, -2)[:, None], 0)
    child = child + jnp.where(nodes[None, :, None] == nodes[None, None, :], powers[:, None, None], 0)[None]
    m_child = best[nodes[None, None, None, :], child]  # [B, i, j, a]
    delta_m = jnp.sum(m_child - m_now[:, None, None, :], axis=-1)  # [B, i, j]
    gained = parent_codes(adjacency)[:, None, :] | (1 << nodes)[:, None]  # [B, i, j]: Pa_j + i
    delta_s = local[nodes[None, None, :], gained] - s_now[:, None, :]  # [B, i, j]: log R(G + ij) - log R(G)
    return h, (1.0 - weight) * delta_s + weight * delta_m


@dataclasses.dataclass(frozen=True)
class HeuristicLogits:
    """The library's network with its logits offset by the heuristic log-flow (module docstring).

    init(key, adjacency), apply(params, adjacency, edge_rows) as the library's network; the stop logit is returned
    in its sigmoid/softmax layout (stop against the log-sum of the valid edges' logits). stop_only: the edge logits
    are the network's own and only the stop logit is offset, by -w h(G) (in the sigmoid layout: P(stop | G) =
    sigmoid(v(G) - w h(G))), so the network learns the edges' flows itself and the stop only log F - Phi_w."""

    base: object
    local: np.ndarray  # float32 [d, 2^d]
    best: np.ndarray  # float32 [d, 3^d]
    weight: float
    max_parents: int | None
    stop_only: bool = False

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, None)  # every graph's edge logits: its stop logit needs them
        b = adjacency.shape[0]
        closure = envlib.closure_of(adjacency)
        h, delta_phi = heuristic_terms(self.local, self.best, adjacency, closure, self.weight)
        rows = b if edge_rows is None else edge_rows
        if self.stop_only:
            stop_logit = out["stop_logit"] - jax.lax.stop_gradient(self.weight * h)
            return {**out, "stop_logit": stop_logit, "edge_logits": out["edge_logits"][:rows]}
        log_pb = uniform_log_pb(jnp.sum(adjacency.astype(jnp.float32), axis=(1, 2)) + 1.0)  # G' has one more edge
        logits = jax.lax.stop_gradient(delta_phi + log_pb[:, None, None]) + out["edge_logits"]
        emask = valid_actions_jax(adjacency, closure, self.max_parents)
        lse = jax.nn.logsumexp(jnp.where(emask, logits, -1e9), axis=(1, 2))
        stop = jax.lax.stop_gradient(-self.weight * h) + out["stop_logit"]
        stop_logit = jnp.where(jnp.any(emask, axis=(1, 2)), stop - lse, 1e9)
        return {**out, "stop_logit": stop_logit, "edge_logits": logits[:rows]}


@dataclasses.dataclass(frozen=True)
class ZeroNetwork:
    """A network whose logits are all 0 (u = v = 0): the heuristic policy alone."""

    def init(self, key, adjacency):
        return {}

    def apply(self, params, adjacency, edge_rows=None):
        b, d, _ = adjacency.shape
        rows = b if edge_rows is None else edge_rows
        return {"stop_logit": jnp.zeros(b), "edge_logits": jnp.zeros((rows, d, d))}


def main():
    """Sample the heuristic policy alone (the network's logits at 0) and compare it with the exact posterior."""
    # Imported here: marginal_reward_oracle imports this module for its --flow-heuristic.
    import argparse
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from accuracy_exact_edges import compare
    from jspgfn.dataset import load_dataset
    from jspgfn.exact import load_exact
    from jspgfn.gflownet import policy
    from jspgfn.gflownet.presets import get_preset
    from jspgfn.gflownet.sample import sample_graphs
    from jspgfn.gflownet.train import resolve_model
    from jspgfn.models import get_graph_prior, get_model
    from marginal_reward_oracle import MarginalRewardTrainer

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("pairs", nargs="+", metavar="DATA=EXACT")
    parser.add_argument("--weight", type=float, default=1.0, help="w in Phi_w")
    parser.add_argument("--stop-only", action="store_true", help="only the stop logit offset (HeuristicLogits)")
    parser.add_argument("--num-samples", type=int, default=1000)
    args = parser.parse_args()
    cfg = get_preset("quick")
    likelihood, family = resolve_model("lingauss-diag")
    print("dataset  w  edge_rmse  pearson  edges  exact_edges  log_stop_at_true_graph  h_at_true_graph")
    for pair in args.pairs:
        data_dir, exact_path = pair.split("=", 1)
        ds = load_dataset(data_dir)
        d = ds.train.shape[1]
        trainer = MarginalRewardTrainer(
            cfg, get_model(likelihood), get_graph_prior(cfg.graph_prior, d), family, ds.train.astype(np.float32)
        )
        local = trainer.local_table
        net = HeuristicLogits(
            ZeroNetwork(), local, best_superset_table(local), args.weight, cfg.max_parents, args.stop_only
        )
        graphs = sample_graphs(net.apply, {}, jax.random.PRNGKey(0), args.num_samples, d, cfg.max_parents)
        exact = load_exact(exact_path)
        rmse, r = compare(graphs.mean(0), exact.edge)
        true = jnp.asarray(ds.graph[None].astype(np.uint8))
        closure = envlib.closure_of(true)
        h, _ = heuristic_terms(local, net.best, true, closure, args.weight)
        out = net.apply({}, true)
        log_stop = policy.log_stop_prob(out["stop_logit"], valid_actions_jax(true, closure, cfg.max_parents))
        print(
            f"{data_dir}  {args.weight}  {rmse:.3f}  {r:.3f}  {graphs.sum(axis=(1, 2)).mean():.1f}  "
            f"{exact.edge.sum():.1f}  {float(log_stop[0]):.2f}  {float(h[0]):.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
