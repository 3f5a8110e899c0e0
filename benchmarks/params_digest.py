"""A digest of JSP-GFN's parameters after a short d=5 training: is a refactor the same training program?

Trains the quick preset for 200 iterations on fixed random data (seed 0), with the paper's loss and with
`stop_target_tau=0.1`, and prints a SHA-256 prefix of the parameters. Run it with two checkouts' sources
side by side; equal digests mean bitwise-equal training:

  PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/params_digest.py; .venv/bin/python benchmarks/params_digest.py
"""

import hashlib

import jax
import numpy as np

import jspgfn
from jspgfn.gflownet.core import Trainer
from jspgfn.gflownet.presets import get_preset
from jspgfn.gflownet.train import resolve_model
from jspgfn.models import get_graph_prior, get_model


def main():
    x = np.random.default_rng(0).normal(size=(100, 5)).astype(np.float32)
    likelihood, family = resolve_model("lingauss-diag")
    for extra in ({}, {"stop_target_tau": 0.1}):
        cfg = get_preset("quick", num_iterations=200, **extra)
        trainer = Trainer(cfg, get_model(likelihood), get_graph_prior("uniform", 5), family, x)
        state = trainer.init(0)
        for _ in range(2):
            state, _ = trainer.run_chunk(state, 100)
        leaves = jax.tree_util.tree_leaves(state.params)
        digest = hashlib.sha256(b"".join(np.asarray(leaf).tobytes() for leaf in leaves)).hexdigest()[:16]
        print(f"{jspgfn.__file__}  {extra}  {digest}")


if __name__ == "__main__":
    main()
