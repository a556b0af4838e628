"""Logging an optimization run to MLflow (``lift-metrics optimize --mlflow``).

:func:`log_run_to_mlflow` reads the files that :func:`~lift_metrics.optimizers.run_optimizer`
wrote into a run's folder, so it works during the run (called at its end) or any time after
it, on a copied folder too. One MLflow run per optimization run:

==========================  ===============================================================
what                        where in MLflow
==========================  ===============================================================
the configuration           params, dotted keys (``optimizer.init.num_candidates``)
provenance                  tags ``lift_metrics.*`` (config and dataset hashes, versions)
per-trial scores            metrics with a step (``trial_score``, ``copro.best_score``, ...)
baseline / optimized        metrics ``baseline.<metric>.mean`` (and median, std_dev, ...),
                            per-example scores as ``baseline.<metric>`` with step = example
the comparison              metrics ``delta.<metric>`` (+ ``.ci_low``, ``.ci_high``,
                            ``.p_value``); tags ``verdict``, ``verdict.<metric>``,
                            ``ab.verdict``; the A/B numbers as ``ab.*`` metrics
usage and timing            metrics ``usage.*``, ``wall_time_s``, ``metric_time_s``
program and report          artifacts: program.json, report.md, config.json, trials.json,
                            comparison.json, result.json, baseline/, optimized/
==========================  ===============================================================

The default store is SQLite under the run's folder (``<output_dir>/mlflow/mlflow.db``,
artifacts in ``<output_dir>/mlflow/artifacts``): MLflow 3 refuses its file store
(``./mlruns``) unless ``MLFLOW_ALLOW_FILE_STORE`` is set. Browse it with
``mlflow ui --backend-store-uri sqlite:///<output_dir>/mlflow/mlflow.db`` (the UI needs
the full ``mlflow`` package; logging needs only ``mlflow-skinny``).

MLflow is optional (``pip install 'lift-metrics[tracking]'``) and imported on first use.
"""

from __future__ import annotations

import json
import os
import socket
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lift_metrics.errors import InputTypeError, InputValueError, TrackingError as TrackingError
from lift_metrics.optimizers._run_metrics import (
    comparison_metrics,
    evaluation_metrics,
    flatten,
    metric_number,
    trial_metrics,
)

__all__ = [
    "DEFAULT_EXPERIMENT",
    "TrackedRun",
    "TrackingError",
    "check_tracking_uri",
    "default_tracking_uri",
    "log_run_to_mlflow",
    "require_mlflow",
]

DEFAULT_EXPERIMENT = "lift-metrics"
"""The MLflow experiment that runs are logged to unless one is named."""

_INSTALL_HINT = "MLflow tracking needs mlflow: pip install 'lift-metrics[tracking]'"
_PARAM_VALUE_CHARS = 500  # MLflow 3 accepts 6000; long values (instructions) say little here
_TAG_VALUE_CHARS = 5000
_BATCH = 100  # MLflow's per-call limit for params and tags (metrics: 1000)
_ARTIFACT_FILES = (
    "program.json",
    "report.md",
    "config.json",
    "trials.json",
    "comparison.json",
    "result.json",
)
_ARTIFACT_DIRS = ("baseline", "optimized")


@dataclass(frozen=True)
class TrackedRun:
    """Where :func:`log_run_to_mlflow` put a run.

    Attributes
    ----------
    run_id, experiment_id : str
        MLflow's identifiers (``MlflowClient(tracking_uri).get_run(run_id)`` reads it back).
    tracking_uri : str
        The store the run was logged to.
    artifact_uri : str
        Where its artifacts are.
    """

    run_id: str
    experiment_id: str
    tracking_uri: str
    artifact_uri: str


def _import_mlflow() -> Any:
    try:
        import mlflow
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    return mlflow


def require_mlflow() -> None:
    """Fail early, before a run starts, when MLflow is missing.

    Raises
    ------
    ImportError
        With the install command: ``pip install 'lift-metrics[tracking]'``.
    """
    _import_mlflow()


# schemes MLflow 3 accepts for a tracking store (the file store needs MLFLOW_ALLOW_FILE_STORE)
_SERVER_SCHEMES = ("http", "https")
_DATABASE_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
_HOSTED_SCHEMES = ("databricks", "databricks-uc", "uc")
_CONNECT_TIMEOUT_S = 3.0


def check_tracking_uri(tracking_uri: str) -> str:
    """Check an MLflow tracking URI before a run starts; return it stripped.

    A malformed URI, and a tracking server that does not answer MLflow's REST API within 3 s
    (or a database host that refuses a connection), are refused here, so that a run does not
    find out only at its end (MLflow retries an unreachable server for minutes).

    Parameters
    ----------
    tracking_uri : str
        ``http(s)://host[:port]``, ``sqlite:///path``, ``postgresql://host/db`` (``mysql``,
        ``mssql``, with an optional ``+driver``), ``databricks``, ``databricks-uc`` or ``uc``.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        One line naming the URI: an unsupported scheme, a server URI without a host or with a
        bad port, an unreachable server or database host, a server that is not MLflow.

    Examples
    --------
    >>> check_tracking_uri(" sqlite:///runs/mlflow.db ")
    'sqlite:///runs/mlflow.db'
    >>> check_tracking_uri("htp://localhost:5000")
    Traceback (most recent call last):
    ...
    lift_metrics.errors.InputValueError: MLflow tracking URI 'htp://localhost:5000' has ... 'htp'...
    """
    if not isinstance(tracking_uri, str) or not tracking_uri.strip():
        raise InputValueError(
            f"the MLflow tracking URI must be a non-empty string, got {tracking_uri!r}"
        )
    uri = tracking_uri.strip()
    try:
        parsed = urlparse(uri)
    except ValueError as exc:  # "Invalid IPv6 URL"
        raise InputValueError(f"MLflow tracking URI {uri!r} is not a URL ({exc})") from None
    scheme = parsed.scheme.lower()
    base = scheme.split("+", 1)[0]
    if base in _HOSTED_SCHEMES or uri.lower() in _HOSTED_SCHEMES:
        return uri
    if base in ("", "file") and os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in (
        "1",
        "true",
    ):
        return uri
    if base == "sqlite":
        if not uri.lower().startswith("sqlite:///") or len(uri) == len("sqlite:///"):
            raise InputValueError(
                f"MLflow tracking URI {uri!r} names no database file; write sqlite:///PATH"
            )
        return uri
    if base not in _SERVER_SCHEMES + _DATABASE_SCHEMES:
        raise InputValueError(
            f"MLflow tracking URI {uri!r} has an unsupported scheme {parsed.scheme!r}; use "
            "http(s)://host:port, sqlite:///PATH, postgresql://..., mysql://..., mssql://... "
            "or databricks (MLflow 3 refuses its file store)"
        )
    try:
        port = parsed.port
    except ValueError:
        raise InputValueError(f"MLflow tracking URI {uri!r} has a bad port") from None
    if not parsed.hostname:
        raise InputValueError(
            f"MLflow tracking URI {uri!r} names no host; write {scheme}://host:port"
        )
    if base in _SERVER_SCHEMES:
        _check_server(uri)
        return uri
    if port is None:
        port = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}[base]
    try:
        with socket.create_connection((parsed.hostname, port), timeout=_CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise InputValueError(
            f"cannot reach the MLflow tracking database at {uri} ({reason}); start it or fix "
            "the URI"
        ) from None
    return uri


# a server that answers this with 200 (or 401/403: it wants credentials) is an MLflow server
_PROBE_PATH = "/api/2.0/mlflow/experiments/search?max_results=1"


def _check_server(uri: str) -> None:
    """One GET of MLflow's REST API with a 3 s timeout, no retries.

    A TCP connection alone proves little (a proxy or another service may accept it), so the
    server must answer like MLflow: 200, or 401/403 when it asks for credentials.
    """
    import http.client
    import urllib.error
    import urllib.request

    url = uri.rstrip("/") + _PROBE_PATH
    try:
        with urllib.request.urlopen(url, timeout=_CONNECT_TIMEOUT_S) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        status = int(exc.code)
        exc.close()
    except (OSError, ValueError, http.client.InvalidURL) as exc:  # refused, unknown host, bad URL
        reason = getattr(exc, "reason", None) or exc
        reason = getattr(reason, "strerror", None) or str(reason) or type(exc).__name__
        raise InputValueError(
            f"cannot reach the MLflow tracking server at {uri} ({reason}); start it or fix the URI"
        ) from None
    if status not in (200, 401, 403):
        raise InputValueError(
            f"the server at {uri} does not answer as an MLflow tracking server (HTTP {status} "
            f"for GET {_PROBE_PATH}); fix the URI"
        )


def default_tracking_uri(output_dir: str | os.PathLike[str]) -> str:
    """Return the default MLflow store of a run: SQLite in ``<output_dir>/mlflow/mlflow.db``.

    Parameters
    ----------
    output_dir : path-like
        The run's folder.

    Returns
    -------
    str
        A ``sqlite:///`` URI with an absolute path.

    Examples
    --------
    >>> default_tracking_uri("/tmp/runs/quick")
    'sqlite:////tmp/runs/quick/mlflow/mlflow.db'
    """
    path = Path(os.path.abspath(Path(output_dir) / "mlflow" / "mlflow.db"))
    return f"sqlite:///{path.as_posix()}"


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _param_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= _PARAM_VALUE_CHARS else text[: _PARAM_VALUE_CHARS - 3] + "..."


def _artifact_location(tracking_uri: str) -> str | None:
    """Return the artifact location: next to the database for a SQLite store.

    That is what ``mlflow server`` does; other stores keep MLflow's own default (None).
    """
    if not tracking_uri.startswith("sqlite:///"):
        return None
    database = Path(tracking_uri[len("sqlite:///") :])
    return (database.parent / "artifacts").resolve().as_uri()


def log_run_to_mlflow(
    run: Any,
    *,
    tracking_uri: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
) -> TrackedRun:
    """Log an optimization run (its output folder) to MLflow as one MLflow run.

    Parameters
    ----------
    run : OptimizationResult or path-like
        What :func:`~lift_metrics.optimizers.run_optimizer` returned, or the run's output
        folder (the one holding ``config.json``).
    tracking_uri : str, optional
        An MLflow tracking URI (``sqlite:///path/mlflow.db``, ``http://host:5000``,
        ``databricks``). Default: :func:`default_tracking_uri` of the run's folder.
    experiment : str, default "lift-metrics"
        The MLflow experiment (created when missing).
    run_name : str, optional
        Default: the config's ``name``.

    Returns
    -------
    TrackedRun
        The MLflow run id, experiment id, tracking URI and artifact URI.

    Raises
    ------
    ImportError
        MLflow is not installed (``pip install 'lift-metrics[tracking]'``).
    FileNotFoundError
        The folder has no ``config.json`` (it is not a run's output folder).
    TypeError, ValueError
        ``experiment`` or ``run_name`` is not a non-empty string.

    Notes
    -----
    What goes where is listed in the module docstring. A run stopped early (a budget) logs
    what it saved; the tag ``stop_reason`` says why. The MLflow run ends ``FINISHED``, or
    ``FAILED`` when logging itself fails halfway. MLflow caps param values; values longer
    than 500 characters (instructions, demo lists) are cut and end in ``...``: the whole
    configuration is in the ``config.json`` artifact.

    Examples
    --------
    Logging a finished run (``pip install 'lift-metrics[tracking]'``)::

        result = run_optimizer("optimizers/quick.toml")
        tracked = log_run_to_mlflow(result)     # or log_run_to_mlflow("runs/quick")

    A folder that is not a run's output folder is refused before MLflow is imported:

    >>> log_run_to_mlflow("/nonexistent/run")
    Traceback (most recent call last):
    ...
    FileNotFoundError: /nonexistent/run/config.json not found: log_run_to_mlflow needs ...
    """
    if not isinstance(experiment, str) or not experiment.strip():
        raise InputTypeError(f"experiment must be a non-empty string, got {experiment!r}")
    if run_name is not None and (not isinstance(run_name, str) or not run_name.strip()):
        raise InputTypeError(f"run_name must be a non-empty string or None, got {run_name!r}")
    folder = Path(getattr(run, "output_dir", run))
    config_doc = _read_json(folder / "config.json")
    if config_doc is None:
        raise FileNotFoundError(
            f"{folder / 'config.json'} not found: log_run_to_mlflow needs the output folder "
            "of a run_optimizer run"
        )
    mlflow = _import_mlflow()
    from mlflow.entities import Metric, Param, RunTag

    uri = tracking_uri if tracking_uri is not None else default_tracking_uri(folder)
    if uri.startswith("sqlite:///"):
        Path(uri[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
    config = config_doc.get("config", {})
    provenance = config_doc.get("provenance", {})
    name = run_name or str(config.get("name") or folder.name)

    with warnings.catch_warnings():
        # MLflow's SQL store uses a loader strategy that SQLAlchemy 2.1 deprecates
        warnings.filterwarnings("ignore", message=r".*``noload``.*", category=DeprecationWarning)
        client = mlflow.MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(experiment)
        if found is None:
            experiment_id = client.create_experiment(
                experiment, artifact_location=_artifact_location(uri)
            )
        else:
            experiment_id = found.experiment_id
        tags = {
            "lift_metrics.output_dir": str(folder.resolve()),
            "lift_metrics.config_hash": str(provenance.get("config_hash", "")),
            "lift_metrics.dataset_hash": str(provenance.get("dataset_hash", "")),
            "lift_metrics.optimizer": str(config.get("optimizer", {}).get("name", "")),
        }
        for package, version in (provenance.get("versions") or {}).items():
            if version is not None:
                tags[f"lift_metrics.version.{package}"] = str(version)
        lm = provenance.get("lm") or {}
        if lm.get("model") is not None:
            tags["lift_metrics.lm"] = str(lm["model"])
        created = client.create_run(experiment_id, run_name=name, tags=tags)
        run_id = created.info.run_id
        try:
            _log_everything(client, run_id, folder, config, Metric, Param, RunTag)
        except BaseException:
            client.set_terminated(run_id, status="FAILED")
            raise
        client.set_terminated(run_id, status="FINISHED")
        artifact_uri = client.get_run(run_id).info.artifact_uri
    return TrackedRun(
        run_id=run_id,
        experiment_id=str(experiment_id),
        tracking_uri=uri,
        artifact_uri=str(artifact_uri),
    )


def _log_everything(
    client: Any,
    run_id: str,
    folder: Path,
    config: Mapping[str, Any],
    metric_cls: Any,
    param_cls: Any,
    tag_cls: Any,
) -> None:
    import time

    params = [
        param_cls(key, _param_value(value))
        for key, value in flatten(config)
        if value is not None and key
    ]
    metrics: list[tuple[str, float, int]] = []
    tags: dict[str, str] = {}
    trials = _read_json(folder / "trials.json")
    if isinstance(trials, Mapping):
        metrics += trial_metrics(trials)
    for arm in ("baseline", "optimized"):
        evaluation = _read_json(folder / arm / f"{arm}.json")
        if isinstance(evaluation, Mapping):
            metrics += evaluation_metrics(arm, evaluation)
            tags[f"{arm}.complete"] = str(bool(evaluation.get("complete", True))).lower()
    comparison = _read_json(folder / "comparison.json")
    if isinstance(comparison, Mapping):
        extra, comparison_tags = comparison_metrics(comparison)
        metrics += extra
        tags.update(comparison_tags)
    result = _read_json(folder / "result.json")
    if isinstance(result, Mapping):
        for key, value in flatten(
            {
                "usage": result.get("usage") or {},
                "wall_time_s": result.get("wall_time_s"),
                "metric_time_s": result.get("metric_time_s"),
            }
        ):
            number = metric_number(value)
            if number is not None:
                metrics.append((key, number, 0))
        tags["stop_reason"] = str(result.get("stop_reason") or "")
        tags.setdefault("verdict", str(result.get("verdict")))
    now = int(time.time() * 1000)
    metric_entities = [metric_cls(key, value, now, step) for key, value, step in metrics]
    tag_entities = [tag_cls(key, value[:_TAG_VALUE_CHARS]) for key, value in tags.items()]
    for start in range(0, max(len(params), len(metric_entities), len(tag_entities)), _BATCH):
        client.log_batch(
            run_id,
            metrics=metric_entities[start : start + _BATCH],
            params=params[start : start + _BATCH],
            tags=tag_entities[start : start + _BATCH],
        )
    for file_name in _ARTIFACT_FILES:
        if (folder / file_name).is_file():
            client.log_artifact(run_id, str(folder / file_name))
    for dir_name in _ARTIFACT_DIRS:
        if (folder / dir_name).is_dir():
            client.log_artifacts(run_id, str(folder / dir_name), artifact_path=dir_name)
