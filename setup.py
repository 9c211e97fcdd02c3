"""Builds the qonnx_cc package with the project's CMake (offline: `pip install --no-build-isolation .`).

CMake builds the `qonnx_cc_python` target (the `_core` extension over the C++ libraries, for the Python running
pip) in build-pip/; the package's Python files come from python/qonnx_cc.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version() -> str:
    """The version in CMakeLists.txt's project() line, the one the CLI reports."""
    match = re.search(r"project\(qonnx-cc VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not match:
        raise RuntimeError("no project version in CMakeLists.txt")
    return match.group(1)


class CMakeBuild(build_ext):
    """Runs CMake instead of compiling sources itself."""

    def build_extension(self, ext: Extension) -> None:
        # QONNX_CC_BUILD_DIR: a tree `make` already configured for this Python; only the package target is
        # brought up to date there (the test suite installs this way instead of compiling everything again).
        reuse = os.environ.get("QONNX_CC_BUILD_DIR")
        build_dir = pathlib.Path(reuse) if reuse else ROOT / "build-pip" / f"cmake-{sys.implementation.cache_tag}"
        if not reuse:
            self._configure(build_dir)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "qonnx_cc_python", "-j", jobs], check=True)
        built = sorted((build_dir / "python" / "qonnx_cc").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"CMake built no _core extension in {build_dir}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)

    @staticmethod
    def _configure(build_dir: pathlib.Path) -> None:
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     "-DQONNX_BUILD_TESTS=OFF", "-DQONNX_BUILD_BENCH=OFF", "-DQONNX_PYTHON=ON",
                     f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)


setup(
    version=project_version(),
    packages=["qonnx_cc"],
    package_dir={"": "python"},
    package_data={"qonnx_cc": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("qonnx_cc._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(ROOT / "build-pip")}},
    zip_safe=False,
)
