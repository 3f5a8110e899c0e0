"""Training speed of JSP-GFN, ours next to the paper's released code, timed side by side.

One iteration = acting in 8 environments + replay insertion + sampling a batch of B
transitions + S theta samples per graph (S x S pairs) + loss + Adam update. Ours runs
them inside one jitted lax.scan (a network the size of the paper's); the released code
(tristandeleu/jax-jsp-gfn, commit d53b3b6) is driven by benchmarks/released/time_released.py
in its own old-JAX venv (benchmarks/released/setup.sh), exactly as its train.py loop does.
For each case both are built, then timed in alternating blocks (ours, released, ours,
released, ...) in the same run, so that load from other jobs falls on both alike; the table
gives the best block of each (seconds per iteration) and their ratio.

  .venv/bin/python benchmarks/speed.py [--iterations 20] [--repeats 3] [--cases 0 2] \
      [--released-src /work/released-src --released-python /work/released-venv/bin/python]

Without --released-src / --released-python only ours is timed.

Several runs in one process (`jspgfn train DATA... --out RUN...`), on the CPU or on a GPU when JAX has one:

  .venv/bin/python benchmarks/speed.py --group-sizes 1 5 20 [--group-case d5-lingauss|d20-mlp] \
      [--iterations 20] [--repeats 3] [--end-to-end 5 --train-iterations 300 [--end-to-end-one]]

--group-sizes: for each K, K runs of the quick preset (other data and seeds) advanced by one compiled step
(Trainer.run_group_chunk) against one run alone (Trainer.run_chunk), timed in alternating blocks in the
same process; K runs in K processes one after another go at the rate of one run alone (start-up and
compilation left out here). --end-to-end K: the wall time of `jspgfn train` commands, compilation and
start-up included: K datasets in one process against the same K trained one after another, one process
each (--end-to-end-one: against one process with one dataset, the other K - 1 not run), each for
--train-iterations iterations of the quick preset (--max-iterations; the learning-rate schedule is the
quick preset's). No persistent compilation cache there: each dataset's own process compiles its step anew
anyway (the data is a constant of it).
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

from jspgfn.generate import generate
from jspgfn.gflownet.core import Trainer
from jspgfn.gflownet.presets import get_preset
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model
from jspgfn.models import get_graph_prior, get_model

CASES = [  # (d, batch B, theta samples S, model): the four cases of FACTS.md
    (5, 32, 1, "lingauss-diag"),
    (5, 256, 64, "lingauss-diag"),
    (20, 256, 64, "lingauss-diag"),
    (5, 256, 64, "mlp-gauss"),
]
RELEASED_MODEL = {"lingauss-diag": "lingauss_diag", "mlp-gauss": "mlp_gauss"}
NUM_ENVS = 8
PREFILL = 100  # acting steps of the uniform policy before the first update (both codes)
DRIVER = Path(__file__).resolve().parent / "released" / "time_released.py"


def case_data(d, model_name):
    """Synthetic training data float32 [100, d] (ER1 graph at d=5, ER2 above)."""
    ds = generate("er2" if d > 5 else "er1", "mlp" if model_name == "mlp-gauss" else "linear", d, 100, 10, 0)
    return ds.train.astype(np.float32)


class Ours:
    """Our trainer for one case; `block(n)` -> seconds per iteration of n iterations in one dispatch."""

    def __init__(self, x, batch, samples, model_name, iterations):
        cfg = get_preset(
            "paper",
            batch_size=batch,
            num_theta_samples=samples,
            prefill=PREFILL,
            iterations_per_dispatch=iterations,
            num_envs=NUM_ENVS,
        )
        likelihood, family = resolve_model(model_name)
        d = x.shape[1]
        self.trainer = Trainer(cfg, get_model(likelihood), get_graph_prior("uniform", d), family, x)
        self.state = self.trainer.init(0)
        t = time.time()
        self.block(iterations)  # compile
        self.setup_s = time.time() - t

    def block(self, n):
        t = time.perf_counter()
        self.state, _ = self.trainer.run_chunk(self.state, n)
        jax.block_until_ready(self.state)
        return (time.perf_counter() - t) / n


class Released:
    """The released code's driver as a subprocess (benchmarks/released/time_released.py)."""

    def __init__(self, python, src, x, batch, samples, model_name, workdir):
        data = Path(workdir) / f"x_{x.shape[1]}_{model_name}.npy"
        np.save(data, x)
        self.log = open(Path(workdir) / "released_stderr.log", "w")  # noqa: SIM115 (closed in close())
        command = [python, str(DRIVER), "--src", src, "--data", str(data), "--model", RELEASED_MODEL[model_name]]
        command += ["--batch-size", str(batch), "--theta-samples", str(samples)]
        command += ["--num-envs", str(NUM_ENVS), "--prefill", str(PREFILL)]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, env=env
        )
        self.info = self._reply()

    def _reply(self):
        line = self.proc.stdout.readline()
        if not line:
            self.log.flush()
            tail = Path(self.log.name).read_text()[-3000:]
            raise RuntimeError(f"the released-code driver stopped:\n{tail}")
        return json.loads(line)

    def block(self, n):
        self.proc.stdin.write(f"run {n}\n")
        self.proc.stdin.flush()
        reply = self._reply()
        self.compiled = reply["compiled"]
        return reply["s_per_iteration"]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=60)
        self.log.close()


# Cases of the group timings: (d, model, training options over the quick preset, as config/methods.yaml's
# quick entries: jspgfn-diag on d=5, jspgfn-mlp on d=20).
GROUP_CASES = {
    "d5-lingauss": (5, "lingauss-diag", {}),
    "d20-mlp": (20, "mlp-gauss", {"theta_elbo": 1.0, "learning_rate": 1e-3}),
}


def group_datasets(d, model_name, k):
    """k synthetic datasets (seeds 0..k-1) of the group case, as Datasets (100 training rows each)."""
    graph = "er2" if d > 5 else "er1"
    return [generate(graph, "mlp" if model_name == "mlp-gauss" else "linear", d, 100, 10, seed) for seed in range(k)]


class Group:
    """K runs of the quick preset advanced together (train.RunGroup: one compiled step, vmapped over the
    runs for K > 1); `block(n)` -> seconds per iteration of the K runs (each advances n iterations)."""

    def __init__(self, datasets, model_name, options, iterations):
        from jspgfn.gflownet.train import RunGroup

        cfg = get_preset("quick", iterations_per_dispatch=iterations, **options)
        likelihood, family = resolve_model(model_name)
        xs = [ds.train.astype(np.float32) for ds in datasets]
        d = xs[0].shape[1]
        trainer = Trainer(cfg, get_model(likelihood), get_graph_prior("uniform", d), family, xs[0])
        self.group = RunGroup(trainer, [trainer.init(seed) for seed in range(len(xs))], xs, [None] * len(xs))
        t = time.time()
        self.block(iterations)  # compile
        self.setup_s = time.time() - t

    def block(self, n):
        t = time.perf_counter()
        self.group.advance(n, [True] * self.group.size)  # returns once the chunk is done (metrics to host)
        return (time.perf_counter() - t) / n


def device_label():
    device = jax.devices()[0]
    return f"jax {jax.__version__}, {device.platform} ({getattr(device, 'device_kind', '?')})"


def time_groups(args):
    """The table of --group-sizes: K runs in one process against one run alone, alternating blocks."""
    d, model, options = GROUP_CASES[args.group_case]
    print(
        f"# {datetime.datetime.now().isoformat(timespec='minutes')}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f}, {device_label()}; case {args.group_case} (d={d}, {model}, quick preset "
        f"{options or ''}); best of {args.repeats} blocks of {args.iterations} iterations, alternating"
    )
    datasets = group_datasets(d, model, max(args.group_sizes))
    one = Group(datasets[:1], model, options, args.iterations)
    print(f"# one run alone: {one.setup_s:.1f} s to compile")
    print(
        "| K | one run alone, it/s | K in one process: it/s per run | it/s in all | K one after another: it/s in all "
        "| in one process / one after another | compile s |"
    )
    print("|---|---|---|---|---|---|---|")
    for k in args.group_sizes:
        group = Group(datasets[:k], model, options, args.iterations)
        best_one = best_group = np.inf
        for _ in range(args.repeats):
            best_one = min(best_one, one.block(args.iterations))
            best_group = min(best_group, group.block(args.iterations))
        per_run, alone = 1 / best_group, 1 / best_one
        print(
            f"| {k} | {alone:.1f} | {per_run:.1f} | {k * per_run:.1f} | {alone:.1f} | {k * per_run / alone:.2f} "
            f"| {group.setup_s:.1f} |"
        )
        sys.stdout.flush()


def time_end_to_end(args):
    """Wall time of `jspgfn train` processes: K datasets in one against K one after another (or one)."""
    d, model, options = GROUP_CASES[args.group_case]
    k, n = args.end_to_end, args.train_iterations
    print(
        f"# {datetime.datetime.now().isoformat(timespec='minutes')}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f}, {device_label()}; `jspgfn train` of {k} datasets, case {args.group_case} "
        f"(d={d}, {model}), quick preset stopped at --max-iterations {n}; {args.repeats} alternating repeats"
    )
    env = {key: value for key, value in os.environ.items() if key != "JAX_COMPILATION_CACHE_DIR"}
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # on a GPU: this process holds it too
    with tempfile.TemporaryDirectory() as workdir:
        from jspgfn.dataset import write_dataset

        folders = []
        for i, ds in enumerate(group_datasets(d, model, k)):
            folders.append(Path(workdir) / f"data{i}")
            write_dataset(folders[-1], ds)
        sets = [f"--set={key}={value}" for key, value in options.items()]
        base = [sys.executable, "-m", "jspgfn.cli", "train", "--model", model, "--preset", "quick", *sets]
        base += ["--max-iterations", str(n), "--no-progress"]

        def wall(datas, tag, kind):
            runs = [str(Path(workdir) / f"{tag}{i}") for i in range(len(datas))]
            t = time.time()
            done = subprocess.run(
                [*base, *map(str, datas), "--seed", *map(str, range(len(datas))), "--out", *runs],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            if done.returncode not in (0, 3):  # 3: stopped at --max-iterations, as asked
                raise RuntimeError(f"jspgfn train failed (status {done.returncode}):\n{done.stderr[-3000:]}")
            seconds = time.time() - t
            rates.setdefault(kind, []).append(steady_rate(Path(runs[0]) / "metrics.jsonl"))
            print(f"# {len(datas)} dataset(s) in one process: {seconds:.1f} s, {rates[kind][-1]:.1f} it/s per run")
            sys.stdout.flush()
            for run in runs:
                shutil.rmtree(run)
            return seconds

        together, apart, rates = [], [], {}
        for r in range(args.repeats):
            together.append(wall(folders, f"group{r}-", "group"))
            if args.end_to_end_one:
                apart.append(wall(folders[:1], f"one{r}-", "apart"))
            else:
                apart.append(sum(wall([folder], f"alone{r}-{i}-", "apart") for i, folder in enumerate(folders)))
    best_together, best_apart = min(together), min(apart)
    if args.end_to_end_one:
        print(f"| {k} datasets in one process, s | one dataset in one process, s | ratio (target <= 3) |")
        print("|---|---|---|")
        print(f"| {best_together:.1f} | {best_apart:.1f} | {best_together / best_apart:.2f} |")
    else:
        print(
            f"| {k} datasets in one process, s | {k} processes one after another, s | one after another / one process |"
        )
        print("|---|---|---|")
        print(f"| {best_together:.1f} | {best_apart:.1f} | {best_apart / best_together:.2f} |")
    print(f"# all repeats: one process {[round(t, 1) for t in together]}, the other {[round(t, 1) for t in apart]}")
    # The full budget, from the same runs: the wall time measured plus the iterations left at the rate of
    # each process's dispatches after its first (which holds the compilation): metrics.jsonl's
    # iterations_per_second, per run.
    full = get_preset("quick", **options).num_iterations
    if full > n:
        left = full - n
        group_rate, other_rate = np.median(rates["group"]), np.median(rates["apart"])
        extra_together, extra_apart = left / group_rate, left / other_rate * (1 if args.end_to_end_one else k)
        print(
            f"# steady rates (it/s per run): in one process {group_rate:.1f}, alone {other_rate:.1f}; extrapolated "
            f"to the quick preset's {full} iterations: {best_together + extra_together:.0f} s against "
            f"{best_apart + extra_apart:.0f} s, ratio "
            + (
                f"{(best_together + extra_together) / (best_apart + extra_apart):.2f} (one process / one dataset)"
                if args.end_to_end_one
                else f"{(best_apart + extra_apart) / (best_together + extra_together):.2f} (one after another / "
                "one process)"
            )
        )


def steady_rate(metrics):
    """Median iterations/s of a run's dispatches after the first (metrics.jsonl), or nan with fewer than two."""
    rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    rates = [row["iterations_per_second"] for row in rows[1:]]
    return float(np.median(rates)) if rates else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="iterations per timed block")
    parser.add_argument("--repeats", type=int, default=3, help="timed blocks of each code per case")
    parser.add_argument("--cases", type=int, nargs="*", default=None, help="indices into CASES")
    parser.add_argument("--released-src", help="checkout of tristandeleu/jax-jsp-gfn (commit d53b3b6)")
    parser.add_argument("--released-python", help="python of the released code's venv (released/setup.sh)")
    parser.add_argument("--group-sizes", type=int, nargs="+", help="time K runs in one process, for each K")
    parser.add_argument("--group-case", choices=sorted(GROUP_CASES), default="d5-lingauss")
    parser.add_argument("--end-to-end", type=int, metavar="K", help="time `jspgfn train` of K datasets")
    parser.add_argument("--train-iterations", type=int, default=300, help="--max-iterations of --end-to-end")
    parser.add_argument("--end-to-end-one", action="store_true", help="--end-to-end against one dataset alone")
    args = parser.parse_args()
    if bool(args.released_src) != bool(args.released_python):
        parser.error("--released-src and --released-python go together")
    if args.group_sizes or args.end_to_end:
        if any(k < 1 for k in args.group_sizes or []) or (args.end_to_end is not None and args.end_to_end < 1):
            parser.error("group sizes must be >= 1")
        enable_compilation_cache()
        if args.group_sizes:
            time_groups(args)
        if args.end_to_end:
            time_end_to_end(args)
        return
    released = args.released_src is not None
    enable_compilation_cache()
    print(
        f"# {datetime.datetime.now().isoformat(timespec='minutes')}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f}, ours: jax {jax.__version__} {jax.devices()[0].platform}; best of "
        f"{args.repeats} blocks of {args.iterations} iterations, alternating"
    )
    if not released:
        print("# the released code was not timed (give --released-src and --released-python)")
    print("| case | ours s/iteration | released s/iteration | released / ours |")
    print("|---|---|---|---|")
    notes = []  # the released driver's ready lines (versions, setup time, NaN in its Adam state)
    with tempfile.TemporaryDirectory() as workdir:
        for i, (d, b, s, model) in enumerate(CASES):
            if args.cases is not None and i not in args.cases:
                continue
            x = case_data(d, model)
            ours = Ours(x, b, s, model, args.iterations)
            other = Released(args.released_python, args.released_src, x, b, s, model, workdir) if released else None
            best_ours, best_released, compiled = np.inf, np.inf, 0
            try:
                for _ in range(args.repeats):
                    best_ours = min(best_ours, ours.block(args.iterations))
                    if other is not None:
                        best_released = min(best_released, other.block(args.iterations))
                        compiled += other.compiled
            finally:
                if other is not None:
                    other.close()
            name = f"d={d} B={b} S={s} {model}"
            if released:
                note = f" ({compiled} compiling iterations left out)" if compiled else ""
                print(f"| {name} | {best_ours:.4f} | {best_released:.4f}{note} | {best_released / best_ours:.1f} |")
                notes.append(f"# released, {name}: {json.dumps(other.info)}")
            else:
                print(f"| {name} | {best_ours:.4f} | not timed | |")
            sys.stdout.flush()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
