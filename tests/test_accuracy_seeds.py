"""benchmarks/accuracy_seeds.py runs several (dataset, seed) pairs in one vmapped program: each run must be
the library's single run (same first update for its own data and seed), or its accuracy table means nothing."""

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.gflownet.core import Trainer
from jspgfn.gflownet.presets import get_preset
from jspgfn.models import get_graph_prior, get_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from accuracy_seeds import run_chunks, stack, unstack  # noqa: E402

TINY = dict(prefill=20, batch_size=8, num_envs=2, num_theta_samples=2, replay_capacity=500, embed_dim=16,
            mlp_hidden=16, key_size=8, theta_hidden=16)  # fmt: skip


def test_vmapped_runs_are_single_runs():
    d, rng = 4, np.random.default_rng(0)
    datas = [rng.standard_normal((30, d)).astype(np.float32) for _ in range(2)]
    cfg = get_preset("smoke", **TINY)
    trainers = [Trainer(cfg, get_model("lingauss"), get_graph_prior("uniform", d), "diag", x) for x in datas]
    seeds = [3, 7]
    states = stack([t.init(s) for t, s in zip(trainers, seeds)])
    out = run_chunks(trainers[0], states, jnp.asarray(np.stack(datas)), 1)
    for k, (trainer, seed) in enumerate(zip(trainers, seeds)):
        single, _ = trainer.run_chunk(trainer.init(seed), 1)
        for a, b in zip(jax.tree_util.tree_leaves(unstack(out.params, k)), jax.tree_util.tree_leaves(single.params)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # the runs differ: their own data and seeds were used
    first, second = (jax.tree_util.tree_leaves(unstack(out.params, k)) for k in (0, 1))
    assert any(not np.allclose(a, b) for a, b in zip(first, second))
