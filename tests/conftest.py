import os

# Tests run on CPU with a persistent compilation cache shared across processes.
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault(
    "JAX_COMPILATION_CACHE_DIR", os.path.join(os.path.dirname(os.path.dirname(__file__)), ".jax_cache")
)
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")


import importlib.util  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


def benchmark_module(name):
    """benchmarks/<name>.py loaded as a module (benchmarks/ put on sys.path for its own imports)."""
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's in-memory caches after each test module. Every compiled XLA program keeps memory
    mappings; the whole suite in one process compiled enough of them to reach the kernel's limit on
    mappings per process (vm.max_map_count, 65530 here), and XLA then crashed with a segmentation fault
    while compiling (in test_vbg, late in the suite). The persistent compilation cache makes the
    recompilation of a program needed again cheap."""
    yield
    if "jax" in sys.modules:
        sys.modules["jax"].clear_caches()
