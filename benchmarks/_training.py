"""Shared by the accuracy benchmarks: train a Trainer state up to an iteration, timing only the training."""

import time

import jax


def train_to(trainer, state, done, target):
    """Run iterations done..target in dispatches of iterations_per_dispatch: (state, target, seconds spent)."""
    seconds = 0.0
    while done < target:
        n = min(trainer.cfg.iterations_per_dispatch, target - done)
        start = time.time()
        state, _ = trainer.run_chunk(state, n)
        jax.block_until_ready(state)
        seconds += time.time() - start
        done += n
    return state, done, seconds
