"""Shared fixtures: every test gets its own ukern cache directory (never the user's)."""
import os

import pytest

import ukern


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("UKERN_CACHE_DIR", str(tmp_path / "cache"))
    yield


@pytest.fixture
def arch90(tmp_path):
    """Kernels made in the test compile for sm_90 (no GPU needed)."""
    ukern.configure(arch=90, cache_dir=str(tmp_path / "cache90"))
    yield
    ukern.configure()


def has_gpu():
    return ukern.device_count() > 0 and os.environ.get("UKERN_PY_NO_GPU") != "1"
