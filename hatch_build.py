"""Build hook: compile the sandbox's server loop (``lift_metrics/sandbox/_native.c``) when the
package is built, so that installed copies need no C compiler at run time.

Wheels get the library as ``lift_metrics/sandbox/_native_loop.bin`` (and a platform tag,
``py3-none-linux_x86_64`` for example); editable installs get it in the source tree next to
``_native.c`` (ignored by git). Without a compiler, or if compiling fails, the build goes on
with a warning and the package compiles the loop at run time (see
``lift_metrics.sandbox._isolation.native_library``), or runs the same loop in Python. The
compiling code is ``lift_metrics/sandbox/_native_build.py``, loaded by path: none of the
package's dependencies is needed here.
"""

from __future__ import annotations

import importlib.util
import sysconfig
import tempfile
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _native_build(root: str) -> ModuleType:
    path = Path(root, "lift_metrics", "sandbox", "_native_build.py")
    spec = importlib.util.spec_from_file_location("_lift_metrics_native_build", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the sdist
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NativeLoopBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the server loop into the wheel (or next to the source, for editable installs)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        native = _native_build(self.root)
        relative = f"lift_metrics/sandbox/{native.PREBUILT_NAME}"
        if version == "editable":  # the package is imported from the source tree
            destination = Path(self.root, relative)
        else:
            self._build_dir = tempfile.TemporaryDirectory(prefix="lift-metrics-native-")
            destination = Path(self._build_dir.name, native.PREBUILT_NAME)
        failure = native.build_prebuilt(destination)
        if failure is not None:
            warnings.warn(
                f"lift-metrics: the sandbox's compiled server loop was not built ({failure}); "
                "it is compiled at run time if a compiler is found then, else the sandbox "
                "runs the same loop in Python",
                stacklevel=1,
            )
            return
        if version != "editable":
            build_data["force_include"][str(destination)] = relative
            # the library is plain C (no Python API): any Python 3 on this platform
            platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
            build_data["pure_python"] = False
            build_data["tag"] = f"py3-none-{platform}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        build_dir = getattr(self, "_build_dir", None)
        if build_dir is not None:
            build_dir.cleanup()
