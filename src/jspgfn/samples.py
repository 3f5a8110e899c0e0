"""PosteriorSamples: the one file format every method writes and evaluation reads.

An `.npz` with
  graphs       uint8 [K, d, d]   graphs[k, i, j] = 1 means i -> j
  theta        float [K, d, d]   linear models: weight of edge i -> j (0 off the graph)
               float [K, P]      other models: flattened parameters, layout in metadata
  log_weights  float [K]         optional importance / mixture log-weights (unnormalised)
  metadata     JSON string       method, model, seed, wall_seconds, hyperparameters, versions, ...
Extra optional arrays (e.g. `log_prob_terminating` [K]) are kept as they are.
"""

import dataclasses

import numpy as np

from jspgfn.errors import DataError
from jspgfn.graphs import is_dag
from jspgfn.npzfile import read_npz, write_npz

REQUIRED_METADATA = ("method", "model", "seed")


@dataclasses.dataclass
class PosteriorSamples:
    graphs: np.ndarray
    theta: np.ndarray
    metadata: dict
    log_weights: np.ndarray | None = None
    extras: dict = dataclasses.field(default_factory=dict)

    @property
    def num_samples(self):
        return self.graphs.shape[0]

    @property
    def num_variables(self):
        return self.graphs.shape[1]

    def weights(self):
        """Normalised sample weights [K]: uniform unless log_weights are given."""
        if self.log_weights is None:
            return np.full(self.num_samples, 1.0 / self.num_samples)
        w = np.exp(self.log_weights - np.max(self.log_weights))
        return w / w.sum()

    def validate(self, source="samples"):
        """Raise DataError unless shapes, dtypes, acyclicity and metadata are consistent."""
        g, t = self.graphs, self.theta
        if g.ndim != 3 or g.shape[1] != g.shape[2] or g.shape[0] == 0:
            raise DataError(source, f"graphs must have shape [K, d, d] with K > 0, got {g.shape}")
        if not np.isin(g, (0, 1)).all():
            raise DataError(source, "graphs must contain only 0 and 1")
        if t.shape[0] != g.shape[0]:
            raise DataError(source, f"theta has {t.shape[0]} samples but graphs has {g.shape[0]}")
        if not np.all(np.isfinite(t)):
            raise DataError(source, "theta has non-finite values")
        if self.log_weights is not None and self.log_weights.shape != (g.shape[0],):
            raise DataError(source, f"log_weights must have shape [{g.shape[0]}], got {self.log_weights.shape}")
        missing = [key for key in REQUIRED_METADATA if key not in self.metadata]
        if missing:
            raise DataError(source, f"metadata lacks {', '.join(missing)}")
        return self

    def share_cyclic(self):
        """Fraction of samples whose graph has a cycle (0 for a correct DAG sampler)."""
        return float(np.mean(~is_dag(self.graphs)))


def save_samples(path, samples):
    """Validate and write atomically."""
    samples.validate(str(path))
    arrays = {"graphs": samples.graphs.astype(np.uint8), "theta": np.asarray(samples.theta)}
    if samples.log_weights is not None:
        arrays["log_weights"] = np.asarray(samples.log_weights, dtype=np.float64)
    arrays.update({k: np.asarray(v) for k, v in samples.extras.items()})
    write_npz(path, arrays, samples.metadata)


def load_samples(path):
    arrays, metadata = read_npz(path, ("graphs", "theta"), "a PosteriorSamples file")
    samples = PosteriorSamples(
        graphs=arrays.pop("graphs").astype(np.uint8),
        theta=arrays.pop("theta"),
        metadata=metadata,
        log_weights=arrays.pop("log_weights", None),
        extras=arrays,
    )
    return samples.validate(str(path))
