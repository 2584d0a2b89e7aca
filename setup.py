"""Builds the C++ library and the pybind11 extension with CMake and installs the `oneflow`
package. Use: pip install --no-build-isolation .   (in a venv made with --system-site-packages)

Environment: ONEFLOW_BUILD_DIR (default: build), ONEFLOW_BUILD_TESTS (default: 1).
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, extension):
        build_dir = os.path.join(ROOT, os.environ.get("ONEFLOW_BUILD_DIR", "build"))
        os.makedirs(build_dir, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call(
            ["cmake", "-S", ROOT, "-B", build_dir, *generator,
             "-DCMAKE_BUILD_TYPE=Release",
             "-DPython3_EXECUTABLE=" + sys.executable,
             "-DONEFLOW_BUILD_TESTS=" + ("ON" if os.environ.get("ONEFLOW_BUILD_TESTS", "1") == "1" else "OFF")]
        )
        subprocess.check_call(["cmake", "--build", build_dir, "--parallel", str(os.cpu_count() or 2)])
        target_dir = os.path.dirname(os.path.abspath(self.get_ext_fullpath(extension.name)))
        os.makedirs(target_dir, exist_ok=True)
        for pattern in ("_oneflow_internal*.so", "liboneflow.so"):
            for path in glob.glob(os.path.join(build_dir, pattern)):
                shutil.copy2(path, target_dir)


def _package_version():
    """oneflow.__version__, read from python/oneflow/version.py without importing the package."""
    scope = {}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "python", "oneflow",
                           "version.py")) as f:
        exec(f.read(), scope)  # noqa: S102 - our own one-line file
    return scope["__version__"]


setup(
    name="oneflow",
    version=_package_version(),
    description="A distributed deep-learning framework with OneFlow 0.3's lazy API",
    license="Apache-2.0",
    package_dir={"": "python"},
    packages=find_packages("python"),
    py_modules=["oneflow_api"],
    ext_modules=[CMakeExtension("oneflow._oneflow_internal")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
