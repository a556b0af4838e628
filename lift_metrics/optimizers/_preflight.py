"""Checks of a run configuration that need files or the network but no LM call.

:func:`preflight` runs in ``optimize --check`` and at the start of every run, after
:func:`lift_metrics.optimizers._config.load_config` has checked everything that needs
neither: the task file and its split sizes, the output and cache folders, the local model
files, the LM server's address.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from lift_metrics.errors import InputValueError
from lift_metrics.optimizers._config_checks import _is_local, _where

if TYPE_CHECKING:
    from lift_metrics.optimizers._config import RunConfig

__all__ = ["preflight"]


def _check_reachable(table: Mapping[str, Any], key: str) -> None:
    api_base = table.get("api_base")
    if not api_base:
        return
    try:
        parsed = urlparse(str(api_base))
        host = parsed.hostname
    except ValueError:  # "Invalid IPv6 URL"
        host = None
    if not host:
        raise InputValueError(f"[{key}] api_base {api_base!r} is not a URL (http://host:port/v1)")
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError as exc:  # "Port out of range 0-65535", named after nothing
        raise InputValueError(
            f"[{key}] api_base {api_base!r} has an invalid port ({exc}); "
            "expected http://host:port/v1 with a port from 1 to 65535"
        ) from None
    try:
        with socket.create_connection((host, port), timeout=3.0):
            pass
    except (OSError, ValueError) as exc:  # ValueError: a host name IDNA cannot encode
        raise InputValueError(
            f"[{key}] cannot reach the LM server at {api_base} "
            f"({getattr(exc, 'strerror', None) or exc}); "
            "start it or fix api_base"
        ) from None


def preflight(config: RunConfig) -> None:
    """Run the checks that need files or the network but no LM call.

    The task file, split sizes against the optimizer's needs, the output and cache folders
    (writable, no file in the way), the local model files (exist, GGUF), the LM server's address.
    ``optimize --check`` runs it and so does every run, before any LM is built.

    Raises
    ------
    FileNotFoundError
        A missing task file.
    ValueError
        Empty splits, a MIPROv2 minibatch larger than the validation set, a local model file
        that is not a GGUF model, an unknown LM provider, an unreachable ``api_base``.
    """
    from lift_metrics._io import check_output_dir, existing_file
    from lift_metrics._tasks import task_records

    check_output_dir(config.output_dir, option=f"{_where(config.source)}output_dir")
    if config.cache_dir is not None:
        check_output_dir(config.cache_dir, option=f"{_where(config.source)}cache_dir")
    spec = config.dataset
    if spec.path is not None:
        existing_file(spec.path, "dataset file")
    sizes: dict[str, int] = {}
    for role, split, limit in (
        ("train", spec.train, spec.train_limit),
        ("val", spec.val, spec.val_limit),
        ("test", spec.test, spec.test_limit),
    ):
        n = len(task_records(split, path=spec.path))
        n = n if limit is None else min(n, limit)
        if n == 0:
            where = "the bundled tasks" if spec.path is None else str(spec.path)
            raise InputValueError(f"[dataset] the {role} split {split!r} of {where} holds no tasks")
        sizes[role] = n
    opt = config.optimizer
    if opt.name == "mipro" and opt.init_args.get("auto", "light") is None:
        minibatch = opt.compile_args.get("minibatch", True)
        size = opt.compile_args.get("minibatch_size", 35)
        if minibatch and size > sizes["val"]:
            raise InputValueError(
                f"MIPROv2 minibatch_size {size} exceeds the {sizes['val']} validation examples; "
                "set minibatch = false in [optimizer.compile], lower minibatch_size, or use "
                f"more validation examples (>= {size})"
            )
    _check_lm(config.lm, "lm", config.source)
    if config.prompt_lm is not None:
        _check_lm(config.prompt_lm, "prompt_lm", config.source)


def _check_lm(table: Mapping[str, Any], key: str, source: Path | None) -> None:
    """Return the LM of ``[key]`` without a call.

    A local model file must exist and start with the GGUF magic (it is not loaded); a remote model
    is built once (an unknown provider fails here) and its ``api_base`` must accept a connection.
    """
    from lift_metrics.lm import check_gguf as _check_gguf, resolve_lm

    model = str(table.get("model", "local"))
    try:
        if _is_local(model):
            _check_gguf(None if model == "local" else model)
            return
        resolve_lm(dict(table))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{_where(source)}[{key}] {exc}") from None
    except (TypeError, ValueError, OSError) as exc:
        raise InputValueError(f"{_where(source)}[{key}] {exc}") from None
    _check_reachable(table, key)
