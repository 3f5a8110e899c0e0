"""Where the time of one JSP-GFN training iteration goes (linear Gaussian or MLP model, diag family).

Times the whole iteration (n iterations in one lax.scan, as training runs) and each piece
jitted alone on the shapes it has inside the iteration (d variables, E = num_envs
environments, B transitions, S theta samples, 2B graphs G and G' in the loss):

  act             network forward on the E environment graphs + epsilon-uniform sampling
  env step        E environments take one action (closure update)
  replay          add E transitions + sample B (--calls of them in one scan, the buffer donated)
  closure+masks   transitive closure and valid-edge masks of the 2B graphs (in the loss)
  net forward     network on the 2B graphs
  net fwd+bwd     network forward and backward (vjp of all outputs) on the 2B graphs
  theta sample    S theta per graph (pooled noise) from the network outputs
  theta log-prob  log q(theta | G) [2B, S]
  likelihood      log R(G, theta) [2B, S] (likelihood + priors)
  likelihood fwd+bwd  the same and its gradient in theta
  loss fwd+bwd    the whole loss and its gradient (everything above that the loss contains)
  optimizer       clip + Adam on the gradient

For each: milliseconds per call, --calls calls in one lax.scan as in training (best of
--repeats), and the FLOPs XLA's cost analysis gives for the compiled piece alone. Then the
FLOPs of one iteration, the attainable FLOP/s of this machine (a large float32 matmul, timed in
the same run) and the fraction of it that the iteration reaches. The pieces overlap (the loss
contains the network, theta sampling and the likelihood), so their shares do not add up to 100%.

--xla-ops also traces the iteration (jax.profiler) and sums its XLA ops' time by part of the network
(forward and backward) and by kind (ops holding a matmul, copies/transposes, the rest), with the bound
that follows: the fraction of the attainable rate the iteration would reach were every op but the
matmuls free (benchmarks/_xla_ops.py).

  .venv/bin/python benchmarks/profile_iteration.py [--d 20] [--preset quick] [--rows 100] [--model mlp-gauss]
      [--set theta_elbo=1] [--xla-ops]
"""

import argparse
import glob
import os
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

from _xla_ops import attribute, hlo_ops, op_times  # benchmarks/, the script's directory
from jspgfn.generate import generate
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy
from jspgfn.gflownet import replay as replaylib
from jspgfn.gflownet.core import Trainer, exploration
from jspgfn.gflownet.loss import log_rewards, next_graphs
from jspgfn.gflownet.presets import get_preset
from jspgfn.graphs import valid_actions_jax
from jspgfn.models import get_graph_prior, get_model

# Parts of the network by the haiku modules in an op's source path (networks.py).
NETWORK_PARTS = {
    "graph network": "edge_sender edge_receiver edge_to_receiver edge_to_sender global_in node_self node_out "
    "node_embed gn_norm",
    "attention block": "attention attn_norm",
    "feed-forward block": "ffn ffn_norm",
    "heads (graph, stop, edge, theta)": "global_mlp global_norm stop_mlp stop_node_mlp u u_self theta_w theta_g "
    "theta_hidden theta_loc theta_scale theta_tril",
}


def flops_of(fn, *args):
    """FLOPs of the compiled fn(*args) by XLA's cost analysis (a while loop's body counts once)."""
    cost = jax.jit(fn).lower(*args).compile().cost_analysis()
    if isinstance(cost, (list, tuple)):
        cost = cost[0]
    return float(cost.get("flops", float("nan")))


def time_of(fn, *args, calls=20, repeats=3):
    """Seconds per call of jit(fn)(*args): best over `repeats` of the mean of `calls` calls."""
    jitted = jax.jit(fn)
    jax.block_until_ready(jitted(*args))
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            out = jitted(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def time_in_scan(fn, *args, calls=20, repeats=3):
    """Seconds per call of fn(*args) run `calls` times in one lax.scan (as inside the training
    iteration: buffers allocated once, no dispatch per call); best of `repeats` scans.

    Every step adds the carry c (always 0, which XLA cannot know) to the inputs and carries
    0 * sum(outputs), so no step can be hoisted out of the loop or left out."""

    def shift(a, c):
        if a.dtype == jnp.bool_:
            return a ^ (c > 1)
        return a + c.astype(a.dtype)

    def run(args):
        def body(c, _):
            out = fn(*jax.tree_util.tree_map(lambda a: shift(a, c), args))
            total = sum(jnp.sum(leaf.astype(jnp.float32)) for leaf in jax.tree_util.tree_leaves(out))
            return 0.0 * total, None

        return jax.lax.scan(body, jnp.zeros(()), None, length=calls)[0]

    return time_of(run, args, calls=1, repeats=repeats) / calls


def attainable_flops(n=2048, repeats=5):
    """FLOP/s of a float32 [n, n] @ [n, n] matmul (2 n^3 FLOPs), best of `repeats`."""
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32)
    seconds = time_of(lambda x: x @ x, a, calls=3, repeats=repeats)
    return 2 * n**3 / seconds


def shape_rates(cfg, d, repeats=5):
    """FLOP/s of the matmul shapes the network is made of, each alone, forward only (best of `repeats`):
    [(what, shape, FLOP/s)]. These small products are what the iteration runs, so their rates, not the
    large square matmul's, bound it."""
    rows, e, h = 2 * cfg.batch_size, cfg.embed_dim, cfg.mlp_hidden
    heads, k = cfg.num_heads, cfg.key_size
    key = jax.random.PRNGKey(1)
    cases = [
        ("dense layer on every node", (rows * d, e), (e, h), "ne,eh->nh"),
        ("messages (per node, over the d parents)", (d, rows, d), (d, d, h), "jbi,jih->jbh"),
        ("attention scores (per graph and head)", (rows * heads, d, k), (rows * heads, d, k), "gik,gjk->gij"),
    ]
    out = []
    for what, sa, sb, spec in cases:
        a, b = jax.random.normal(key, sa, jnp.float32), jax.random.normal(key, sb, jnp.float32)
        fn = jax.jit(lambda x, y, spec=spec: jnp.einsum(spec, x, y))
        seconds = time_of(fn, a, b, calls=20, repeats=repeats)
        out.append((what, f"{sa} x {sb}", flops_of(fn, a, b) / seconds))
    return out


def network_part(op_name):
    """The part of the iteration an HLO op belongs to, from its JAX source path: a network part and
    forward/backward ('transpose(' marks the backward pass), or the rest of the iteration."""
    segments = op_name.split("/")
    direction = "backward" if "transpose(" in op_name else "forward"
    for part, modules in NETWORK_PARTS.items():
        if set(modules.split()).intersection(segments):
            return f"{part}, {direction}"
    if any("policy" in segment for segment in segments):
        return f"network, between modules, {direction}"
    return "outside the network (likelihood, theta, environment, replay, optimizer)"


def xla_op_profile(trainer, state, iterations, repeats, peak, reached):
    """Print the traced op time of `repeats` chunks of `iterations` iterations (run_chunk already compiled for
    them) per part and kind (jax.profiler, events per HLO op on XLA's CPU worker threads, joined with the
    compiled HLO's source paths and dots), and the fraction of the attainable rate `peak` (FLOP/s) the
    iteration would reach, from the `reached` FLOP/s measured without the tracer, were every op but the
    matmuls free."""
    ops = hlo_ops(trainer.run_chunk.lower(trainer, state, iterations).compile().as_text())
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        with jax.profiler.trace(folder):
            for _ in range(repeats):
                state, _ = trainer.run_chunk(state, iterations)
                jax.block_until_ready(state)
        wall = (time.perf_counter() - t) / (repeats * iterations)
        (path,) = glob.glob(f"{folder}/**/*.xplane.pb", recursive=True)
        times, counts, threads = op_times(jax.profiler.ProfileData.from_file(path))
    rows = attribute(times, counts, ops, network_part)
    n = repeats * iterations
    total = sum(row["ns"] for row in rows.values())
    print(
        f"\nXLA ops, traced ({repeats} x {iterations} iterations; {1e3 * wall:.1f} ms per iteration under the tracer): "
        f"op time summed over {threads} worker threads {total / 1e6 / n:.1f} ms per iteration"
    )
    print("| part | op ms / iteration | share | matmul ms | copies/transposes ms | other ms | matmul MFLOP |")
    print("|---|---|---|---|---|---|---|")
    for part, row in sorted(rows.items(), key=lambda kv: -kv[1]["ns"]):
        print(
            f"| {part} | {row['ns'] / 1e6 / n:.2f} | {row['ns'] / total:.0%} | {row['matmul_ns'] / 1e6 / n:.2f} | "
            f"{row['copy_ns'] / 1e6 / n:.2f} | {row['other_ns'] / 1e6 / n:.2f} | {row['flops'] / n / 1e6:.0f} |"
        )
    sums = {k: sum(row[k] for row in rows.values()) for k in ("matmul_ns", "copy_ns", "other_ns", "flops")}
    matmul_share = sums["matmul_ns"] / total
    print(
        f"all: matmuls {matmul_share:.0%} of the op time ({sums['flops'] / n / 1e6:.0f} MFLOP per iteration in "
        f"traced dots), copies/transposes {sums['copy_ns'] / total:.0%}, other ops {sums['other_ns'] / total:.0%}. "
        f"Were every op but the matmuls free, the iteration would reach at most {reached / matmul_share / peak:.0%} "
        f"of the attainable rate (now {reached / peak:.0%}). Shares only: the tracer slows the iteration "
        f"(to {1e3 * wall:.1f} ms) and an op split over threads is one event, so op times are not FLOP rates."
    )
    return state


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--rows", type=int, default=100, help="rows N of training data")
    parser.add_argument("--model", default="lingauss", choices=["lingauss", "mlp-gauss"], help="likelihood model")
    parser.add_argument("--iterations", type=int, default=20, help="iterations per timed scan")
    parser.add_argument("--calls", type=int, default=20, help="calls per timing of a piece")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="training options (ints)")
    parser.add_argument(
        "--xla-ops",
        action="store_true",
        help="also trace the iteration and attribute its op time to the network's parts",
    )
    args = parser.parse_args()

    overrides = {k: int(v) for k, v in (kv.split("=") for kv in args.set)}
    cfg = get_preset(args.preset, iterations_per_dispatch=args.iterations, **overrides)
    d, b, s = args.d, cfg.batch_size, cfg.num_theta_samples
    data_model = "linear" if args.model == "lingauss" else "mlp"
    x_np = generate("er2", data_model, d, args.rows, 10, 0).train.astype(np.float32)
    model, prior = get_model(args.model), get_graph_prior("uniform", d)
    trainer = Trainer(cfg, model, prior, "diag", x_np)
    state = trainer.init(0)
    print(
        f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, jax {jax.__version__} "
        f"{jax.devices()[0].platform}; preset {args.preset}: d={d} N={args.rows} E={cfg.num_envs} B={b} S={s} "
        f"embed {cfg.embed_dim}, noise_pool {cfg.noise_pool}, model {args.model}, theta_elbo {cfg.theta_elbo}"
    )

    # The whole iteration, as training runs it (many iterations in one scan).
    def time_iteration(state):
        """(state, best seconds per iteration over `repeats` scans of `iterations` iterations)."""
        best = np.inf
        for _ in range(args.repeats):
            t = time.perf_counter()
            state, _ = trainer.run_chunk(state, args.iterations)
            jax.block_until_ready(state)
            best = min(best, (time.perf_counter() - t) / args.iterations)
        return state, best

    state, _ = trainer.run_chunk(state, args.iterations)
    jax.block_until_ready(state)
    state, per_iteration = time_iteration(state)
    peak = attainable_flops()
    iteration_flops = flops_of(lambda st: trainer.iteration(st)[0], state)

    # Representative inputs of the pieces.
    params, key = state.params, jax.random.PRNGKey(1)
    x = jnp.asarray(x_np)
    graphs, actions, _ = replaylib.sample(state.replay, key, b)
    both = jnp.concatenate([graphs, next_graphs(graphs, actions)], axis=0)  # [2B, d, d]
    out = trainer.network.apply(params, both)
    node_mask = policy.node_mask_of(model, both)
    theta = policy.sample_theta(key, out, node_mask, s, cfg.noise_pool, groups=2)  # [2B, S, d, d]
    grads = jax.grad(lambda p: trainer.loss(p, graphs, actions, key, x)[0])(params)
    eps = exploration(cfg, state.step)

    def net_fwd_bwd(p, g):
        o, vjp = jax.vjp(lambda q: trainer.network.apply(q, g), p)
        return vjp(jax.tree_util.tree_map(jnp.ones_like, o))

    def replay_add_sample(rep, k):
        """`calls` replay insertions + samples in one scan, the buffer carried (updated in place) as in training."""

        def body(rep, kk):
            adds = jnp.zeros(cfg.num_envs, jnp.int32), jnp.ones(cfg.num_envs, bool)
            rep = replaylib.add(rep, state.env.adjacency, *adds)
            graphs, acts, _ = replaylib.sample(rep, kk, b)
            return rep, graphs.sum() + acts.sum()

        return jax.lax.scan(body, rep, jax.random.split(k, args.calls))

    def closure_masks(g):
        return valid_actions_jax(g, envlib.closure_of(g), cfg.max_parents)

    pieces = [
        ("act", lambda p, e, k: trainer.act(p, e, k, eps), (params, state.env, key)),
        ("env step", envlib.step, (state.env, jnp.full(cfg.num_envs, d * d, jnp.int32))),
        ("closure+masks", closure_masks, (both,)),
        ("net forward", trainer.network.apply, (params, both)),
        ("net fwd+bwd", net_fwd_bwd, (params, both)),
        ("theta sample", lambda o, m, k: policy.sample_theta(k, o, m, s, cfg.noise_pool, 2), (out, node_mask, key)),
        ("theta log-prob", policy.theta_log_prob, (out, theta, node_mask)),
        ("likelihood", lambda t, g: log_rewards(model, prior, t, g, x, x.shape[0]), (theta, both)),
        (
            "likelihood fwd+bwd",
            jax.grad(lambda t, g: log_rewards(model, prior, t, g, x, x.shape[0]).sum()),
            (theta, both),
        ),
        ("loss fwd+bwd", jax.grad(lambda p, g, a, k: trainer.loss(p, g, a, k, x)[0]), (params, graphs, actions, key)),
        ("optimizer", trainer.optimizer.update, (grads, state.opt_state, params)),
    ]
    # The replay buffer (capacity x d x d bytes) is donated, so that it is updated in place as in training.
    replay_loop = jax.jit(replay_add_sample, donate_argnums=0)
    rep = jax.tree_util.tree_map(jnp.copy, state.replay)
    rep, _ = replay_loop(rep, key)
    replay_s = np.inf
    for _ in range(args.repeats):
        t = time.perf_counter()
        rep, out = replay_loop(rep, key)
        jax.block_until_ready(out)
        replay_s = min(replay_s, (time.perf_counter() - t) / args.calls)

    timings = []
    for name, fn, fn_args in pieces:
        timings.append(
            (name, time_in_scan(fn, *fn_args, calls=args.calls, repeats=args.repeats), flops_of(fn, *fn_args))
        )
    # Once more after the pieces (best of both), as other jobs may load the machine unevenly.
    per_iteration = min(per_iteration, time_iteration(state)[1])
    peak = max(peak, attainable_flops())

    print("| piece | ms / call | share of iteration | MFLOP |")
    print("|---|---|---|---|")
    print(f"| whole iteration (in a scan) | {1e3 * per_iteration:.2f} | 100% | {iteration_flops / 1e6:.1f} |")
    print(f"| replay add+sample | {1e3 * replay_s:.3f} | {100 * replay_s / per_iteration:.0f}% | 0 |")
    for name, seconds, flops in timings:
        print(f"| {name} | {1e3 * seconds:.3f} | {100 * seconds / per_iteration:.0f}% | {flops / 1e6:.2f} |")

    reached = iteration_flops / per_iteration
    print(
        f"\niteration: {1 / per_iteration:.1f} it/s, {iteration_flops / 1e6:.1f} MFLOP -> {reached / 1e9:.2f} GFLOP/s; "
        f"attainable (float32 2048^3 matmul, best of 2 here): {peak / 1e9:.1f} GFLOP/s; fraction {reached / peak:.1%}"
    )
    print("\nthe network's matmul shapes alone (forward, best of 5):")
    for what, shape, rate in shape_rates(cfg, d):
        print(f"  {what} {shape}: {rate / 1e9:.1f} GFLOP/s ({rate / peak:.0%} of the 2048^3 rate)")
    if args.xla_ops:
        xla_op_profile(trainer, state, args.iterations, args.repeats, peak, reached)


if __name__ == "__main__":
    main()
