"""The package keeps its promises: `pip install .` (not only `pip install -e .`)
ships every package, the examples and the license, and what it installs works
outside the source tree; `tawa-opt` imports only what a round trip needs."""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import tawa_xdsl

from .conftest import EXAMPLE_FILES, REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_every_package_is_listed_in_pyproject() -> None:
    listed = set(SETUPTOOLS["packages"])
    found = set()
    for package, directory in SETUPTOOLS["package-dir"].items():
        for init in (REPO / directory).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / directory)
            found.add(".".join([package, *rel.parts]))
    assert found <= listed, (
        f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of exactly what the build reads, so the build
    leaves no `build/` or egg-info behind in the checkout (tests run in
    parallel there)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for directory in set(SETUPTOOLS["package-dir"].values()):
        shutil.copytree(REPO / directory, src / directory, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"),
            *("--no-build-isolation", "--wheel-dir", str(out), str(src)),
        ],
        capture_output=True,
        text=True,
    )
    # without build isolation the build uses this environment's setuptools: the
    # test extra pins one that knows PEP 639 licenses
    assert build.returncode == 0, build.stderr[-3000:]
    (built,) = out.glob("tawa_xdsl-*.whl")
    return built


def test_wheel_ships_examples_license_and_honest_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        (metadata,) = (n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(whl.read(metadata))
    for example in EXAMPLE_FILES:
        assert f"tawa_xdsl/examples/{example.name}" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["Version"] == PYPROJECT["project"]["version"]
    assert meta["Requires-Python"] == ">=3.11"
    assert "Programming Language :: Python :: 3.11" in meta.get_all("Classifier")
    assert meta.get_all("Project-URL")
    requires = meta.get_all("Requires-Dist")

    def extra(name: str) -> str:
        return " ".join(r for r in requires if f'extra == "{name}"' in r)

    assert "cuda-python" in extra("gpu")  # the runtime's driver API
    assert all(dep in extra("bench") for dep in ("torch", "triton", "matplotlib"))
    assert "torch" not in extra("test")  # CI installs the test extra


def test_installed_wheel_works_outside_the_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    """Install the wheel into a fresh venv that borrows this environment's
    dependencies (a .pth file, which does not run our editable-install hook),
    then use the bundled examples from a directory with no `examples/`."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (Path(site) / "borrowed_deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install"),
            *("--quiet", "--no-deps", "--no-index", str(wheel)),
        ],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = (
        "import tawa_xdsl, pathlib\n"
        f"assert pathlib.Path(tawa_xdsl.__file__).is_relative_to({str(venv)!r})\n"
        f"assert tawa_xdsl.__version__ == {PYPROJECT['project']['version']!r}\n"
        "m = tawa_xdsl.parse(tawa_xdsl.examples.path('gemm.mlir'))\n"
        "tawa_xdsl.apply(m, 'aref-partition,pipeline')\n"
        "print(len(tawa_xdsl.examples.names()))\n"
    )
    api = subprocess.run(
        [python, "-c", check], cwd=work, env=env, capture_output=True, text=True
    )
    assert api.returncode == 0, api.stderr
    assert api.stdout.strip() == str(len(EXAMPLE_FILES))
    cli = subprocess.run(
        [venv / "bin" / "tawa-opt", "gemm.mlir", "-p", "aref-partition"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    assert "aref.warp_specialize" in cli.stdout


def test_a_missing_path_is_not_replaced_by_an_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a bare example name falls back to the bundled file; a path with a
    directory that does not exist is reported as missing, and a file of that
    name in the working directory wins."""
    from tawa_xdsl import examples

    monkeypatch.chdir(tmp_path)
    assert examples.resolve("gemm.mlir") == str(examples.path("gemm.mlir"))
    assert examples.resolve("nowhere/gemm.mlir") == "nowhere/gemm.mlir"
    (tmp_path / "gemm.mlir").write_text("")
    assert examples.resolve("gemm.mlir") == "gemm.mlir"
    with pytest.raises(FileNotFoundError, match="gemm_typo"):
        examples.path("gemm_typo.mlir")


# What `tawa-opt` must not import for a round trip: the CPU interpreters and
# simulators, the GPU runtime, the pass and lowering modules, array libraries and
# xDSL's interpreters (the RISC-V one alone costs ~0.2 s).
HEAVY = (
    "tawa_xdsl.interp",
    "tawa_xdsl.runtime",
    "tawa_xdsl.pipelines",
    "tawa_xdsl.transforms.",
    "tawa_xdsl.lowering.",
    "numpy",
    "ml_dtypes",
    "cuda",
    "xdsl.interpreters",
    "xdsl.transforms.",
)


def test_tawa_opt_round_trip_imports_nothing_heavy() -> None:
    """Start-up time is import time; a test of the import graph, not a timing,
    keeps it from creeping back (a timing would be flaky on a loaded machine)."""
    script = (
        "import os, sys\n"
        "from tawa_xdsl.tawa_opt import main\n"
        f"rc = main([{str(EXAMPLE_FILES[0])!r}, '-o', os.devnull])\n"
        "print(rc, *sorted(sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    rc, *modules = result.stdout.split()
    assert rc == "0", result.stderr
    heavy = [m for m in modules if m.startswith(HEAVY)]
    assert not heavy, f"tawa-opt imports {heavy}: import them where they are used"


def test_import_tawa_xdsl_is_lazy() -> None:
    """`import tawa_xdsl` loads none of its submodules until a name is used."""
    script = (
        "import sys, tawa_xdsl\n"
        "print(*sorted(m for m in sys.modules if m.startswith(('tawa_xdsl', 'xdsl'))))\n"
        "tawa_xdsl.parse\n"
        "print('parse' in vars(tawa_xdsl), 'tawa_xdsl.interp' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    first, second = result.stdout.splitlines()
    assert first.split() == ["tawa_xdsl"]
    assert second == "True False"


# What the runtime must not import: the compiler's passes and lowering. It
# loads and launches compiled-kernel records (`tawa_xdsl.compiled`), which a
# process may read from the disk cache without compiling anything.
COMPILER = ("tawa_xdsl.transforms", "tawa_xdsl.lowering", "tawa_xdsl.pipelines")


def test_the_runtime_launches_records_without_the_compiler(tmp_path: Path) -> None:
    from tawa_xdsl.compiled import from_lowered
    from tawa_xdsl.kernel import find_kernel

    from .conftest import example_module

    module = example_module("gemm.mlir", "gemm_nt")
    lowered = tawa_xdsl.apply(module, "tawa-hopper-pipeline")
    record = from_lowered(lowered, "gemm_nt")
    assert find_kernel(lowered, "gemm_nt")  # the record was made of this kernel
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record.to_json()))
    script = (
        "import json, sys\n"
        "import tawa_xdsl.runtime, tawa_xdsl.runtime.kernel, tawa_xdsl.runtime.realign\n"
        "from tawa_xdsl.compiled import CompiledKernel\n"
        "from tawa_xdsl.runtime import Kernel\n"
        f"record = CompiledKernel.from_json(json.loads(open({str(path)!r}).read()))\n"
        "kernel = Kernel(record)\n"
        "print(kernel.name, kernel.threads, sorted(kernel.tensor_maps))\n"
        "print(*sorted(sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    first, modules = result.stdout.splitlines()
    assert first == f"gemm_nt {record.contract.launch.threads} ['a', 'b', 'c']"
    compiler = [m for m in modules.split() if m.startswith(COMPILER)]
    assert not compiler, f"the runtime imports {compiler}"
