"""What every output records about how it was made: versions, host, time."""

import datetime
import importlib.metadata
import platform

# The packages of the core and its workflow that can change a result. A baseline adds its own package and
# the distributions its method.yaml `requires` (jspgfn_baselines.fit_baseline), so none is listed here.
_PACKAGES = (
    "jspgfn",
    "jax",
    "jaxlib",
    "dm-haiku",
    "optax",
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "snakemake",
)


def package_versions(extra=()):
    """{package: version} for the packages that can change a result, and the `extra` ones (absent ones
    skipped)."""
    versions = {"python": platform.python_version()}
    for name in dict.fromkeys([*_PACKAGES, *extra]):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def provenance(extra=()):
    """Versions (of _PACKAGES and the `extra` distributions), host and time."""
    return {
        "versions": package_versions(extra),
        "host": platform.node(),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
