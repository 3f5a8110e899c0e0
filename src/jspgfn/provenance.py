"""What every output records about how it was made: versions, host, time."""

import datetime
import importlib.metadata
import platform

_PACKAGES = (
    "jspgfn",
    "jspgfn-baselines",
    "jax",
    "jaxlib",
    "dm-haiku",
    "optax",
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "causal-learn",
    "dibs-lib",
    "snakemake",
)


def package_versions():
    """{package: version} for the packages that can change a result (absent ones skipped)."""
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def provenance():
    return {
        "versions": package_versions(),
        "host": platform.node(),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
