"""Training iterations/s of two source trees of jspgfn, timed side by side (before/after a change).

  rm -rf /tmp/before && mkdir /tmp/before && git archive HEAD src | tar -x -C /tmp/before
  .venv/bin/python benchmarks/ab_iteration.py /tmp/before/src src [--d 20] [--preset quick] [--model mlp-gauss]
      [--family full] [--set key=value ...] [--set-b key=value ...]

--xla-flags-b runs B's worker with XLA_FLAGS set to it, to time an XLA compiler flag against the default:

  .venv/bin/python benchmarks/ab_iteration.py src src --xla-flags-b=--xla_cpu_use_onednn=true

--set-b adds options to B only, to time one option against its absence in the same tree (`src src`), e.g. the
closed-form stop offset against q's:

  .venv/bin/python benchmarks/ab_iteration.py src src --set stop_score_offset=1 theta_elbo=1 \
      stop_target_tau=0.1 replay_capacity=5000 explore_score_temperature=1 explore_score_share=0.75 \
      --set-b stop_score_closed_form=true

Each tree runs in its own worker process (this script with PYTHONPATH=tree, so `import jspgfn`
loads that tree); once both have compiled, they time blocks of --iterations iterations (one
lax.scan each, as training runs) alternately A, B, A, B, ..., so that load from other jobs falls
on both alike. Prints every block and the best of each: iterations/s (wall clock) and CPU
milliseconds per iteration (all threads of the worker; less sensitive to other jobs than wall time
when the machine is oversubscribed).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def worker(args):
    """Build a Trainer (--model on its own kind of data, --family, uniform graph prior), then answer
    "run N" lines."""
    import jax
    import numpy as np
    import yaml

    import jspgfn
    from jspgfn.generate import generate
    from jspgfn.gflownet.core import Trainer
    from jspgfn.gflownet.presets import get_preset
    from jspgfn.models import get_graph_prior, get_model

    overrides = {k: yaml.safe_load(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    cfg = get_preset(args.preset, iterations_per_dispatch=args.iterations, **overrides)
    kind = "mlp" if args.model == "mlp-gauss" else "linear"
    x = generate("er2" if args.d > 5 else "er1", kind, args.d, args.rows, 10, 0).train.astype(np.float32)
    trainer = Trainer(cfg, get_model(args.model), get_graph_prior("uniform", args.d), args.family, x)
    state = trainer.init(0)
    state, _ = trainer.run_chunk(state, args.iterations)
    jax.block_until_ready(state)
    print(json.dumps({"ready": str(Path(jspgfn.__file__).parent)}), flush=True)
    for line in sys.stdin:
        if not line.startswith("run"):
            break
        t, cpu = time.perf_counter(), time.process_time()
        state, metrics = trainer.run_chunk(state, args.iterations)
        jax.block_until_ready(state)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        print(json.dumps({"it_per_s": args.iterations / seconds, "cpu_ms": 1e3 * cpu / args.iterations}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="two src/ folders (A, B), each holding the jspgfn package")
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--model", default="lingauss", choices=["lingauss", "mlp-gauss"], help="likelihood model")
    parser.add_argument("--family", default="diag", choices=["diag", "full"], help="posterior family of theta")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="training options (YAML values)")
    parser.add_argument("--set-b", nargs="*", default=[], metavar="KEY=VALUE", help="more options, for B only")
    parser.add_argument("--xla-flags-b", default=None, help="XLA_FLAGS of B's worker (A: the environment's)")
    parser.add_argument("--iterations", type=int, default=20, help="iterations per timed block")
    parser.add_argument("--repeats", type=int, default=5, help="blocks of each tree")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if len(args.trees) != 2:
        parser.error("give two source trees")

    command = [sys.executable, __file__, "--worker", "--d", str(args.d), "--rows", str(args.rows)]
    command += ["--preset", args.preset, "--model", args.model, "--family", args.family]
    command += ["--iterations", str(args.iterations)]
    procs = []
    for which, tree, extra in zip("AB", args.trees, ([], args.set_b)):
        env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
        if which == "B" and args.xla_flags_b is not None:
            env["XLA_FLAGS"] = args.xla_flags_b
        options = ["--set", *args.set, *extra]
        proc = subprocess.Popen(command + options, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        procs.append(proc)
        print(f"# {'AB'[len(procs) - 1]}: {json.loads(proc.stdout.readline())['ready']}", flush=True)
    print(
        f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; d={args.d} preset {args.preset}"
        f" model {args.model} family {args.family} {args.set}, B also {args.set_b}"
        + (f", B's XLA_FLAGS {args.xla_flags_b!r}" if args.xla_flags_b is not None else "")
    )
    best, best_cpu = [0.0, 0.0], [float("inf")] * 2
    for _ in range(args.repeats):
        row = []
        for i, proc in enumerate(procs):
            proc.stdin.write("run\n")
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            best[i] = max(best[i], reply["it_per_s"])
            best_cpu[i] = min(best_cpu[i], reply["cpu_ms"])
            row.append(f"{'AB'[i]} {reply['it_per_s']:.2f} it/s ({reply['cpu_ms']:.0f} CPU ms/it)")
        print("  ".join(row), flush=True)
    for proc in procs:
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait()
    print(f"best: A {best[0]:.2f} it/s, B {best[1]:.2f} it/s, B/A = {best[1] / best[0]:.3f}")
    print(f"best CPU: A {best_cpu[0]:.1f} ms/it, B {best_cpu[1]:.1f} ms/it, A/B = {best_cpu[0] / best_cpu[1]:.3f}")


if __name__ == "__main__":
    main()
