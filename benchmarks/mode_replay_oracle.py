"""Is it exploration (never meeting the posterior's graphs) that keeps JSP-GFN from the posterior beyond
d=5? An oracle test.

The paper's replay holds what the epsilon-uniform sampler met: during the exploration phase mostly random,
dense graphs, whose scores lie hundreds of nats below the posterior's; the network must generalise from
them to the region where the posterior lives. This script adds to the replay, before training, the
transitions of trajectories to graphs drawn from the EXACT posterior (the dataset's `jspgfn exact` file;
each graph's edges added in a uniformly random order, as P_B would remove them), then trains with the
paper's loss and compares the edge marginals with the exact ones as benchmarks/accuracy_exact_edges.py
does. They stay in the replay until its ring buffer wraps (capacity 100,000: never within 6,000
iterations of the quick preset) and are drawn uniformly with the rest. An oracle: it uses the answer, to
test the diagnosis, not as a method; a method would take its graphs from a search it can afford.

  .venv/bin/python benchmarks/mode_replay_oracle.py /tmp/w/d10er2/0=/tmp/w/d10er2/exact0.npz \
      --graphs 1000 --eval-at 3000 6000 [--source exact|true] [--extend 5]

Every option of accuracy_exact_edges.py applies (--set, --seed, --preset ...). --source true uses the
data-generating graph instead (the same graph --graphs times, in random orders): a non-oracle anchor.
--extend K adds K transitions out of each graph (to a random superset with one more edge): the conditions
that tie the graph's own stop probability to its continuations.
"""

import argparse
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import accuracy_exact_edges  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact import load_exact  # noqa: E402
from jspgfn.gflownet import replay as replaylib  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402


def addable_edges(graph):
    """Flat indices i * d + j of the edges i -> j that keep the DAG `graph` (uint8 [d, d]) acyclic."""
    d = graph.shape[0]
    reach = np.eye(d, dtype=bool) | graph.astype(bool)
    for _ in range(d):  # transitive closure (reach[a, b]: a path a -> ... -> b)
        reach = reach | ((reach.astype(np.int32) @ reach.astype(np.int32)) > 0)
    ok = ~graph.astype(bool) & ~reach.T  # i -> j closes a cycle iff j reaches i
    np.fill_diagonal(ok, False)
    return np.flatnonzero(ok.reshape(-1))


def trajectory_transitions(graphs, rng, extend=0):
    """Transitions (G, edge) of the trajectories empty -> G, each G's edges in a random order, and then
    `extend` transitions out of G (G -> G + e, e uniform among the edges G can take).

    graphs: uint8 [M, d, d]. Returns (states uint8 [T, d, d], actions int32 [T]); the action of adding
    i -> j is i * d + j (jspgfn.gflownet.env)."""
    d = graphs.shape[1]
    states, actions = [], []
    for g in graphs:
        edges = np.flatnonzero(g.reshape(-1))
        state = np.zeros(d * d, np.uint8)
        for a in rng.permutation(edges):
            states.append(state.reshape(d, d).copy())
            actions.append(a)
            state[a] = 1
        out = addable_edges(g)
        for a in rng.choice(out, size=min(extend, len(out)), replace=False):
            states.append(g.copy())
            actions.append(a)
    return np.asarray(states, np.uint8), np.asarray(actions, np.int32)


class OracleTrainer(Trainer):
    transitions = None  # (states [T, d, d], actions [T]), set per dataset by main()

    def init(self, seed, *data):
        state = super().init(seed, *data)
        if state.priorities is not None or state.trajectories is not None:
            sys.exit("mode_replay_oracle.py: only the paper's uniform replay (no replay_priority / trajectory_balance)")
        graphs, actions = self.transitions
        replay = replaylib.add(state.replay, jnp.asarray(graphs), jnp.asarray(actions), jnp.ones(len(actions), bool))
        return state._replace(replay=replay)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--graphs", type=int, default=1000, help="trajectories added to the replay")
    parser.add_argument("--source", choices=["exact", "true"], default="exact")
    parser.add_argument("--extend", type=int, default=0, help="transitions out of each graph, to random supersets")
    args, rest = parser.parse_known_args()
    pairs = [a for a in rest if "=" in a and not a.startswith("-") and Path(a.split("=", 1)[0]).is_dir()]
    options = [a for a in rest if a not in pairs]
    rng = np.random.default_rng(0)
    for pair in pairs:
        data_dir, exact_path = pair.split("=", 1)
        if args.source == "exact":
            exact = load_exact(exact_path)
            weights = np.exp(exact.log_probs - exact.log_probs.max())
            picks = rng.choice(len(weights), size=args.graphs, p=weights / weights.sum())
            graphs = exact.graphs[picks]
        else:
            graphs = np.repeat(load_dataset(data_dir).graph[None].astype(np.uint8), args.graphs, axis=0)
        OracleTrainer.transitions = trajectory_transitions(graphs.astype(np.uint8), rng, args.extend)
        note = f" oracle replay: {args.graphs} trajectories to {args.source} graphs, {args.extend} steps out of each, "
        note += f"{len(OracleTrainer.transitions[1])} transitions"
        accuracy_exact_edges.main(OracleTrainer, [pair, *options], note=note)


if __name__ == "__main__":
    main()
