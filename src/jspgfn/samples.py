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
        """Raise DataError unless shapes, 0/1 graphs, finite theta and log-weights and metadata are consistent.

        log_weights may hold -inf (a sample of weight 0) but not NaN or +inf, and at least one is finite.
        """
        g, t = self.graphs, self.theta
        if g.ndim != 3 or g.shape[1] != g.shape[2] or g.shape[0] == 0:
            raise DataError(source, f"graphs must have shape [K, d, d] with K > 0, got {g.shape}")
        if not np.isin(g, (0, 1)).all():
            raise DataError(source, "graphs must contain only 0 and 1")
        if not _is_real(t) or t.ndim < 1:
            raise DataError(source, f"theta must be an array of real numbers, got dtype {t.dtype}, shape {t.shape}")
        if t.shape[0] != g.shape[0]:
            raise DataError(source, f"theta has {t.shape[0]} samples but graphs has {g.shape[0]}")
        if not np.all(np.isfinite(t)):
            raise DataError(source, "theta has non-finite values")
        if self.log_weights is not None:
            log_weights = np.asarray(self.log_weights)
            if not _is_real(log_weights):
                raise DataError(source, f"log_weights must be real numbers, got dtype {log_weights.dtype}")
            if log_weights.shape != (g.shape[0],):
                raise DataError(source, f"log_weights must have shape [{g.shape[0]}], got {log_weights.shape}")
            # -inf is a sample of weight 0; NaN, +inf or no finite weight at all leave no distribution.
            if np.any(np.isnan(log_weights) | (log_weights == np.inf)) or not np.any(np.isfinite(log_weights)):
                raise DataError(source, "log_weights have NaN or infinite values (or no finite one)")
        if not isinstance(self.metadata, dict):
            raise DataError(source, f"metadata must be a JSON object, got {type(self.metadata).__name__}")
        missing = [key for key in REQUIRED_METADATA if key not in self.metadata]
        if missing:
            raise DataError(source, f"metadata lacks {', '.join(missing)}")
        return self

    def share_cyclic(self):
        """Fraction of samples whose graph has a cycle (0 for a correct DAG sampler)."""
        return float(np.mean(~is_dag(self.graphs)))


def _is_real(array):
    return np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)


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
        graphs=arrays.pop("graphs"),
        theta=arrays.pop("theta"),
        metadata=metadata,
        log_weights=arrays.pop("log_weights", None),
        extras=arrays,
    )
    samples.validate(str(path))  # before the cast to uint8, which would turn 0.5 or 256 into 0
    samples.graphs = samples.graphs.astype(np.uint8)
    return samples
