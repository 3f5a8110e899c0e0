"""Training speed of JSP-GFN (iterations per second) with the paper's network size.

One iteration = acting in `num_envs` environments + replay insertion + sampling a
batch of B transitions + S theta samples per graph (S x S pairs) + loss + Adam update,
all inside one jitted lax.scan. Prints iterations/s and s/iteration next to the
released code's figures on this class of machine (FACTS.md).

  .venv/bin/python benchmarks/speed.py [--iterations 20] [--repeats 3]
"""

import argparse
import os
import time

import jax
import numpy as np

from jspgfn.generate import generate
from jspgfn.gflownet.core import Trainer
from jspgfn.gflownet.presets import get_preset
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model
from jspgfn.models import get_graph_prior, get_model

CASES = [  # (d, batch, theta samples, model, released s/iteration)
    (5, 32, 1, "lingauss-diag", 0.061),
    (5, 256, 64, "lingauss-diag", 0.375),
    (20, 256, 64, "lingauss-diag", 2.67),
    (5, 256, 64, "mlp-gauss", 2.0),
]


def measure(d, batch, samples, model_name, iterations, repeats):
    ds = generate("er2" if d > 5 else "er1", "mlp" if model_name == "mlp-gauss" else "linear", d, 100, 10, 0)
    cfg = get_preset(
        "paper",
        batch_size=batch,
        num_theta_samples=samples,
        prefill=100,
        iterations_per_dispatch=iterations,
        num_envs=8,
    )
    likelihood, family = resolve_model(model_name)
    trainer = Trainer(cfg, get_model(likelihood), get_graph_prior("uniform", d), family, ds.train.astype(np.float32))
    state = trainer.init(0)
    t = time.time()
    state, _ = trainer.run_chunk(state, iterations)
    jax.block_until_ready(state)
    compile_s = time.time() - t
    best = np.inf
    for _ in range(repeats):
        t = time.time()
        state, m = trainer.run_chunk(state, iterations)
        jax.block_until_ready(state)
        best = min(best, (time.time() - t) / iterations)
    return best, compile_s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="iterations per timed dispatch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", type=int, nargs="*", default=None, help="indices into CASES")
    args = parser.parse_args()
    enable_compilation_cache()
    print(
        f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, jax {jax.__version__} "
        f"{jax.devices()[0].platform}, network embed 128 / GN [128,128] / MHA 4x32"
    )
    for i, (d, b, s, model, released) in enumerate(CASES):
        if args.cases is not None and i not in args.cases:
            continue
        per_it, compile_s = measure(d, b, s, model, args.iterations, args.repeats)
        print(
            f"d={d:2d} batch={b:3d} theta samples={s:2d} {model:14s}: {1 / per_it:7.1f} it/s "
            f"({per_it:.4f} s/it; released {released} s/it -> x{released / per_it:.0f}; "
            f"first dispatch incl. compile {compile_s:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
