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
"""

import argparse
import datetime
import json
import os
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="iterations per timed block")
    parser.add_argument("--repeats", type=int, default=3, help="timed blocks of each code per case")
    parser.add_argument("--cases", type=int, nargs="*", default=None, help="indices into CASES")
    parser.add_argument("--released-src", help="checkout of tristandeleu/jax-jsp-gfn (commit d53b3b6)")
    parser.add_argument("--released-python", help="python of the released code's venv (released/setup.sh)")
    args = parser.parse_args()
    if bool(args.released_src) != bool(args.released_python):
        parser.error("--released-src and --released-python go together")
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
