import numpy as np
import pytest

from jspgfn.errors import DataError
from jspgfn.samples import PosteriorSamples, load_samples, save_samples


def make(k=4, d=3):
    rng = np.random.default_rng(0)
    graphs = np.zeros((k, d, d), np.uint8)
    graphs[:, 0, 1] = 1
    theta = rng.standard_normal((k, d, d)) * graphs
    return PosteriorSamples(
        graphs,
        theta,
        {"method": "test", "model": "lingauss", "seed": 0},
        log_weights=np.arange(k, dtype=float),
        extras={"log_prob_terminating": -np.ones(k)},
    )


def test_round_trip(tmp_path):
    s = make()
    save_samples(tmp_path / "s.npz", s)
    back = load_samples(tmp_path / "s.npz")
    np.testing.assert_array_equal(back.graphs, s.graphs)
    np.testing.assert_array_equal(back.theta, s.theta)
    np.testing.assert_array_equal(back.log_weights, s.log_weights)
    np.testing.assert_array_equal(back.extras["log_prob_terminating"], -np.ones(4))
    assert back.metadata == s.metadata
    assert [p.name for p in tmp_path.iterdir()] == ["s.npz"]


def test_weights_normalised():
    w = make().weights()
    assert w.sum() == pytest.approx(1) and np.all(np.diff(w) > 0)


def test_share_cyclic():
    s = make()
    s.graphs[0, 1, 0] = 1  # 0 <-> 1
    assert s.share_cyclic() == pytest.approx(0.25)


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda s: setattr(s, "theta", s.theta[:2]), "theta has 2 samples"),
        (lambda s: setattr(s, "metadata", {"method": "x"}), "metadata lacks model, seed"),
        (lambda s: s.theta.__setitem__((0, 0, 1), np.nan), "non-finite"),
        (lambda s: setattr(s, "log_weights", np.zeros(3)), "log_weights must have shape"),
    ],
)
def test_invalid_samples_refused_and_nothing_written(tmp_path, breakage, message):
    s = make()
    breakage(s)
    with pytest.raises(DataError, match=message):
        save_samples(tmp_path / "s.npz", s)
    assert list(tmp_path.iterdir()) == []


def test_load_rejects_corrupt_file(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(DataError, match="bad.npz: not a readable .npz"):
        load_samples(path)
    np.savez(tmp_path / "other.npz", x=np.zeros(2))
    with pytest.raises(
        DataError, match=r"missing array\(s\) 'graphs', 'theta', 'metadata': not a PosteriorSamples file"
    ):
        load_samples(tmp_path / "other.npz")
