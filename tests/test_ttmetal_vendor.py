"""The vendor wheel cache (``frontends/ttmetal/vendor.py``): each ttnn release under its own variable and cache
directory, so a host description can name the kernels of an older release (``examples/ttmetal/hangs/``). No
network here: the download itself is exercised by the wheel tests, which skip offline."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from verispatial.frontends.ttmetal import vendor


def test_each_release_has_its_own_variable() -> None:
    assert vendor.env_var() == "VERISPATIAL_TTNN"
    assert vendor.env_var(vendor.TTNN_VERSION) == "VERISPATIAL_TTNN"
    assert vendor.env_var("0.72.0") == "VERISPATIAL_TTNN_0_72_0"
    with pytest.raises(ValueError, match=r"a\.b\.c"):
        vendor.env_var("0.72")
    assert vendor.version_of_env("${VERISPATIAL_TTNN_0_72_0}/ttnn/ttnn/cpp") == "0.72.0"
    assert vendor.version_of_env("${VERISPATIAL_TTNN}/ttnn/ttnn/cpp") == vendor.TTNN_VERSION
    assert vendor.version_of_env("kernels") is None


def test_an_older_release_unpacks_only_its_kernel_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Of a non-pinned wheel only ``ttnn/ttnn/cpp/`` is unpacked; the variable then names the copy."""
    wheel = tmp_path / "ttnn-0.72.0-cp312-cp312-manylinux_2_34_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("ttnn/ttnn/cpp/ttnn/operations/op/device/kernels/k.cpp", "void kernel_main() {}\n")
        z.writestr("ttnn/ttnn/_ttnn.so", "not a kernel")
    root = tmp_path / "wheel"
    vendor.unpack(wheel, root, whole=False)
    assert (root / vendor.KERNELS / "op/device/kernels/k.cpp").is_file()
    assert not (root / "ttnn/ttnn/_ttnn.so").exists()
    monkeypatch.setenv("VERISPATIAL_TTNN_0_72_0", str(root))
    assert vendor.wheel_root(version="0.72.0") == root
    monkeypatch.setenv("VERISPATIAL_TTNN_0_72_0", str(tmp_path / "nothing"))
    assert vendor.wheel_root(download=True, version="0.72.0") is None  # a given variable is never downloaded into


def test_a_host_naming_a_release_not_cached_says_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kernel_root: ${VERISPATIAL_TTNN_9_9_9}/...`` with neither the variable nor the cached copy: bad input
    naming the variable and the release, nothing downloaded."""
    from verispatial.errors import ParseError
    from verispatial.frontends.ttmetal import import_host

    monkeypatch.delenv("VERISPATIAL_TTNN_9_9_9", raising=False)
    monkeypatch.setattr(vendor, "cache_dir", lambda version=vendor.TTNN_VERSION: tmp_path / f"ttnn-{version}")
    host = tmp_path / "h.json"
    host.write_text(json.dumps({
        "format": "verispatial.ttmetal-host", "version": 1, "name": "h",
        "kernel_root": "${VERISPATIAL_TTNN_9_9_9}/ttnn/ttnn/cpp",
        "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader"}],
        "work_units": [{"cores": "0,0", "kernels": ["k"]}]}))
    with pytest.raises(ParseError, match=r"VERISPATIAL_TTNN_9_9_9.*ttnn 9\.9\.9 wheel"):
        import_host(host)
