"""cpu tier of the CuPy-compat harness (python/tests/cupy_compat): UKERN_COMPAT parsing,
the replacement of CuPy's classes, and the junit summary scripts/gpu-cupy-compat.sh prints."""
import os
import sys
import types

import pytest

import ukern

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "cupy_compat"))
import junit_summary  # noqa: E402
import ukern_cupy_compat as compat  # noqa: E402


def test_selection_reads_ukern_compat(monkeypatch):
    monkeypatch.delenv("UKERN_COMPAT", raising=False)
    assert compat.selection() == {"fuse", "elementwise", "reduction", "raw"}
    assert compat.selection("fuse, raw") == {"fuse", "raw"}
    assert compat.selection("none") == set() and compat.selection("") == set()
    monkeypatch.setenv("UKERN_COMPAT", "elementwise")
    assert compat.selection() == {"elementwise"}
    with pytest.raises(ValueError, match=r"unknown item\(s\) \['fusion'\]"):
        compat.selection("fusion")


def test_install_replaces_only_the_chosen_classes():
    orig = object()
    cupy = types.SimpleNamespace(fuse=orig, ElementwiseKernel=orig, ReductionKernel=orig, RawKernel=orig,
                                 RawModule=orig, _core=types.SimpleNamespace(fusion=types.SimpleNamespace(fuse=orig)))
    done = compat.install(cupy, ukern, {"raw", "elementwise"})
    assert sorted(done) == ["ElementwiseKernel", "RawKernel", "RawModule"]
    assert cupy.RawKernel is ukern.RawKernel and cupy.RawModule is ukern.RawModule
    assert cupy.ElementwiseKernel is ukern.ElementwiseKernel
    assert cupy.fuse is orig and cupy.ReductionKernel is orig and cupy._core.fusion.fuse is orig
    if hasattr(ukern, "fuse"):
        compat.install(cupy, ukern, {"fuse"})
        assert cupy.fuse is ukern.fuse and cupy._core.fusion.fuse is ukern.fuse
    with pytest.raises(RuntimeError, match="ukern has no"):
        compat.install(cupy, types.SimpleNamespace(), {"reduction"})


def test_junit_summary_counts(tmp_path, capsys):
    x = tmp_path / "junit-core_tests_fusion_tests_test_misc.xml"
    x.write_text('<testsuites><testsuite name="pytest">'
                 '<testcase name="a"/><testcase name="b"><failure message="m"/></testcase>'
                 '<testcase name="c"><error message="e"/></testcase><testcase name="d"><skipped/></testcase>'
                 '<testcase name="e"/></testsuite></testsuites>')
    assert junit_summary.counts(str(x)) == {"passed": 2, "failed": 1, "errors": 1, "skipped": 1}
    bad = tmp_path / "junit-broken.xml"
    bad.write_text("<testsuites")
    assert junit_summary.counts(str(bad))["passed"] == -1
    junit_summary.main([str(x), str(bad)])
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["core_tests_fusion_tests_test_misc", "2", "1", "1", "1"]
    assert out[-1].split() == ["total", "2", "1", "1", "1"]


def test_junit_summary_counts_an_interrupted_test_as_an_error(tmp_path):
    """What pytest writes when the script's timeout stops it with SIGINT mid-test."""
    x = tmp_path / "junit-stalled.xml"
    x.write_text('<testsuites><testsuite name="pytest" tests="1"><testcase classname="t" name="a"/>'
                 '<testcase time="0.000" /></testsuite></testsuites>')
    assert junit_summary.counts(str(x)) == {"passed": 1, "failed": 0, "errors": 1, "skipped": 0}


def test_private_internals_are_skipped_with_the_reason(monkeypatch):
    name = "cupy_tests/core_tests/test_raw.py::TestRawNameExpressionCache::test_cubin_cache_is_reused[ptr_param<float *>]"
    why = compat.private_reason(name, {"raw", "fuse"})
    assert why.startswith("ukern_cupy_compat: tests CuPy's private internals (raw): mocks CuPy's private cache")
    assert compat.private_reason(name, {"fuse", "elementwise"}) is None  # RawModule is CuPy's own: it runs
    assert compat.private_reason("cupy_tests/core_tests/test_raw.py::TestRaw::test_basic[NVRTC (no-jitify)]",
                                 {"raw"}) is None

    class Item:
        def __init__(self, nodeid):
            self.nodeid, self.marks = nodeid, []

        def add_marker(self, m):
            self.marks.append(m)
    items = [Item(name), Item("cupy_tests/core_tests/test_raw.py::TestRaw::test_basic[NVRTC (no-jitify)]")]
    monkeypatch.setattr(compat, "_selected", {"raw"})
    monkeypatch.delenv("UKERN_COMPAT_SHARD", raising=False)
    compat.pytest_collection_modifyitems(None, items)
    assert [m.name for m in items[0].marks] == ["skip"] and items[0].marks[0].kwargs["reason"] == why
    assert items[1].marks == []
