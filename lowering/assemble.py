"""Assemble PTX for sm_90a without a GPU: the validity check of the PTX target.

Uses a `ptxas` binary (on PATH, or the one the `nvidia-cuda-nvcc` wheel ships) or,
where there is none, nvJitLink through cuda-python. Both report remarks as
`(C75xx)` info lines; any such line means the generated code made ptxas insert a
wait or a fence, serialize wgmmas, or drop `setmaxnreg`, so callers treat it as a
bug. nvJitLink always compiles as relocatable code and reports C7504 ('setmaxnreg
ignored ... compilation units'), which says nothing about the kernel: it is
filtered out.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

REMARK = re.compile(r"\(C75\d\d\)[^\n]*")
NVJITLINK_ONLY = ("C7504",)


class NoAssembler(RuntimeError):
    """Neither ptxas nor nvJitLink is installed."""


@dataclass(frozen=True)
class Assembly:
    tool: str
    ok: bool
    log: str

    @property
    def remarks(self) -> list[str]:
        """C75xx info lines the kernel is responsible for."""
        return [
            m
            for m in REMARK.findall(self.log)
            if not (
                self.tool == "nvjitlink" and any(code in m for code in NVJITLINK_ONLY)
            )
        ]

    @property
    def spills(self) -> bool:
        return bool(re.search(r"[1-9]\d* bytes spill stores", self.log))


def _ptxas() -> str | None:
    found = shutil.which("ptxas")
    if found:
        return found
    try:
        import nvidia.cu13  # type: ignore[import-not-found]
    except ImportError:
        return None
    candidate = Path(nvidia.cu13.__path__[0]) / "bin" / "ptxas"
    return str(candidate) if candidate.exists() else None


def assemble(ptx: str) -> Assembly:
    """Assemble `ptx` for sm_90a; the log carries ptxas' verbose info lines."""
    ptxas = _ptxas()
    if ptxas is not None:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "kernel.ptx"
            src.write_text(ptx)
            result = subprocess.run(
                [
                    ptxas,
                    "-arch=sm_90a",
                    "-v",
                    str(src),
                    "-o",
                    str(Path(tmp) / "kernel.cubin"),
                ],
                capture_output=True,
                text=True,
            )
        return Assembly("ptxas", result.returncode == 0, result.stdout + result.stderr)
    try:
        from cuda.bindings import nvjitlink
    except ImportError as e:
        raise NoAssembler(
            "no ptxas on PATH and no nvJitLink: pip install 'tawa-xdsl[test]'"
        ) from e
    handle = nvjitlink.create(3, ["-arch=sm_90a", "-O3", "-verbose"])
    try:
        data = ptx.encode()
        nvjitlink.add_data(
            handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx"
        )
        ok = True
        try:
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError:
            ok = False
        logs = []
        for size, get in (
            (nvjitlink.get_error_log_size, nvjitlink.get_error_log),
            (nvjitlink.get_info_log_size, nvjitlink.get_info_log),
        ):
            buf = bytearray(size(handle))
            get(handle, buf)
            logs.append(buf.decode(errors="replace"))
        return Assembly("nvjitlink", ok, "\n".join(logs))
    finally:
        nvjitlink.destroy(handle)
