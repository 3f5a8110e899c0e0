"""The log of one training call: a line of metrics.jsonl per dispatch and the progress bar."""

import json


class TrainingLog:
    """Appends to metrics.jsonl and, when `progress`, shows a tqdm bar over `total` iterations from `initial`.

    Use as a context manager: the file and the bar are closed on leaving, also on an error.
    """

    def __init__(self, path, total, initial, progress, desc="jspgfn train"):
        self.path, self.total, self.initial, self.progress, self.desc = path, total, initial, progress, desc
        self.file = self.bar = None

    def __enter__(self):
        if self.progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, initial=self.initial, unit="it", desc=self.desc, dynamic_ncols=True)
        self.file = open(self.path, "a")
        return self

    def __exit__(self, *exc_info):
        try:
            if self.bar is not None:
                self.bar.close()
        finally:
            self.file.close()
        return False

    def record(self, iteration, num_new, loss, metrics, rate):
        """One dispatch: iteration reached, num_new iterations in it, its loss and metrics (dict of scalars,
        loss and abs_delta among them), rate in iterations/s. The line is flushed at once."""
        self.file.write(
            json.dumps(
                {
                    "iteration": iteration,
                    "loss": loss,
                    "abs_delta": float(metrics["abs_delta"]),
                    **{k: float(v) for k, v in metrics.items() if k not in ("loss", "abs_delta")},
                    "iterations_per_second": rate,
                }
            )
            + "\n"
        )
        self.file.flush()
        if self.bar is not None:
            self.bar.update(num_new)
            self.bar.set_postfix(loss=f"{loss:.3f}", its=f"{rate:.1f}/s")
