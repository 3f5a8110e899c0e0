"""Time of backward_every's local moves (gflownet/local_search.py): 4 heat-bath moves of 8 random graphs, jitted, at
d = 10 and 20 (the closed-form gains of every single-edge move of each graph), beside the closed-form score of 128
graphs (the stop offset's work per batch) for scale.

  .venv/bin/python benchmarks/local_search_speed.py
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.gflownet import closed_form
from jspgfn.gflownet.local_search import local_moves
from jspgfn.models import get_model
from jspgfn.models.graph_prior import get_graph_prior


def best_ms(fn, *args, repeats=5):
    fn(*args).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def main():
    print(f"# jax={jax.__version__} device={jax.devices()[0].platform}")
    for d in (10, 20):
        x = np.random.default_rng(0).normal(size=(100, d)).astype(np.float32)
        model, prior = get_model("lingauss", obs_var=0.01, prior_var=1.0), get_graph_prior("uniform", d)
        graphs = jnp.asarray(np.triu(np.random.default_rng(1).random((8, d, d)) < 0.3, 1).astype(np.uint8))
        moves = jax.jit(lambda g, m=model, p=prior, x=x: local_moves(m, p, x, None, g, jax.random.PRNGKey(0), 4))
        scores = jax.jit(
            lambda g, m=model, p=prior, x=x: closed_form.graph_gains(m, p, x, None, jnp.tile(g, (16, 1, 1)))
        )
        print(f"d={d}: 4 moves of 8 graphs {best_ms(moves, graphs):.1f} ms; "
              f"closed-form score of 128 graphs {best_ms(scores, graphs):.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
