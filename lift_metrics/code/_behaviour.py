"""Behaviour, not resemblance: run the candidate and the reference on generated inputs.

Where the reference runs, :func:`code_quality` compares what the two compute
(docs/code.md#behaviour-on-generated-inputs): inputs proposed by
:func:`~lift_metrics.code._inputs.generate_inputs` are run through the reference in the
sandbox; an input on which the reference runs out of time, returns something that is not
plain data, raises, or does something else on a second run is dropped, except where it raises
an exception that its code raises by name (``raise ValueError(...)``: the task's error
contract), which is kept as "raises ValueError", at most :data:`RAISING_INPUTS` such inputs
and a third as many as those returning a value. Of the valid inputs, :data:`BEHAVIOUR_INPUTS`
are chosen: up to three for each kind of outcome (True and False, empty and not, negative,
zero and positive, each exception), then those on which the reference's one-change mutants
(:func:`~lift_metrics._mutants.mutants`: an operator swapped, a constant off by one,
``min`` for ``max``, ...) differ from it, as few as tell every mutant apart, then the
longest input and the longest of the other parity, then others spread over the rest; fewer
when the reference needs more than :data:`REFERENCE_BUDGET_S` for them. The choice is cached
per reference, entry point, known inputs and prompt. The candidate is then run on those
inputs in one execution and each outcome compared with the reference's (:func:`same_value`;
a raising input agrees when the candidate raises an exception of that name).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from lift_metrics import _pyast as pyast
from lift_metrics._lru import LRUCache
from lift_metrics._mutants import mutants
from lift_metrics.code._extract import single_function
from lift_metrics.code._inputs import _key, generate_inputs

BEHAVIOUR_INPUTS = 20
"""The most generated inputs the candidate is compared on."""
PROPOSED_INPUTS = 120
"""The inputs proposed to the reference (those it rejects are dropped)."""
KIND_INPUTS = 3
"""The most inputs chosen for each kind of outcome (True, False, empty, ...) first."""
MUTANTS = 24
"""The most one-change mutants of the reference run on the valid inputs to choose them."""
MUTANT_BUDGET_S = 1.5
"""The reference's own time on the valid inputs, times the mutants run, stays under this:
a slow reference runs fewer mutants (none when one run takes longer)."""
MUTANT_TIMEOUT_S = 0.25
"""The least time limit of one mutant's run (ten times the reference's own when longer)."""
REFERENCE_TIMEOUT_S = 2.0
"""Time limit of one run of the reference over the proposed inputs."""
CANDIDATE_TIMEOUT_S = 1.0
"""The least time the candidate gets for its run (more when the reference itself is slow)."""
CANDIDATE_TIMEOUT_MAX_S = 5.0
"""The most time the candidate gets for its run: 2.5 times the reference's own limit, so a
correct but slower candidate finishes while an endless loop costs at most this."""
REFERENCE_BUDGET_S = CANDIDATE_TIMEOUT_MAX_S / 10.0
"""The reference's time on the inputs kept: a slow reference keeps as many as it runs in
this time (at least one), so the same program gets at least 10 times its own time."""
RAISING_INPUTS = 5
"""The most inputs kept on which the reference raises an exception its code raises by name
(and never more than a third of the inputs on which it returns): code that raises on every
input agrees on those only."""
FLOAT_REL_TOL = 1e-9
"""Relative tolerance between two floats (``math.isclose``; absolute 1e-12)."""

Calls = Callable[..., Sequence[Any]]
"""``execute_calls(code, inputs, *, entry_point, timeout_s)`` bound to a sandbox."""

_REFERENCE_RUNS: LRUCache[tuple[Any, ...], ReferenceRun] = LRUCache(512)


@dataclass(frozen=True)
class Raises:
    """What the reference does on an input of its error contract: raise ``name`` (internal)."""

    name: str


def raised_name(output: Any) -> str | None:
    """Return the name of the exception a call raised (``"ValueError"``), or None."""
    if output is None or output.ok or output.status != "failed" or not output.error:
        return None
    name = str(output.error).split(":", 1)[0]
    return name if name.isidentifier() else None


def contract_errors(reference: str) -> frozenset[str]:
    r"""Return the built-in exceptions the reference raises by name (``raise ValueError(...)``).

    Examples
    --------
    >>> sorted(contract_errors("def f(x):\n    if x < 0:\n        raise ValueError('x')\n"))
    ['ValueError']
    >>> contract_errors("def f(x):\n    return [][x]\n")
    frozenset()
    """
    import builtins

    try:
        tree = pyast.parse(reference)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if not isinstance(target, ast.Name):
                continue
            kind = getattr(builtins, target.id, None)
            if isinstance(kind, type) and issubclass(kind, Exception):
                names.add(target.id)
    return frozenset(names)


def _same_outcome(first: Any, again: Any) -> bool:
    """Whether two runs of the reference on one input returned one value or raised alike."""
    if first.ok or again.ok:
        return bool(first.ok and again.ok and same_value(again.value, first.value))
    return raised_name(first) == raised_name(again)


@dataclass(frozen=True)
class ReferenceRun:
    """The valid generated inputs of a reference and what it returns on them (internal)."""

    inputs: tuple[dict[str, Any], ...]
    outputs: tuple[Any, ...]
    elapsed_ms: float
    reason: str = ""
    """Why there are no inputs (empty when there are)."""


@dataclass(frozen=True)
class Behaviour:
    """How often the candidate returned what the reference returns (internal)."""

    agreed: int
    total: int
    reason: str

    @property
    def share(self) -> float:
        """Return agreed / total (1.0 when nothing was compared)."""
        return self.agreed / self.total if self.total else 1.0


def same_value(actual: Any, expected: Any) -> bool:
    """Whether two plain-data values are equal as the I/O tests judge them, floats close.

    Exact types (``1``, ``1.0`` and ``True`` differ; a list is not a tuple), set and dict
    order ignored, NaN equal to NaN, and two floats equal when ``math.isclose`` (relative
    1e-9, absolute 1e-12) says so, at any depth.

    Examples
    --------
    >>> same_value([0.1 + 0.2], [0.3]), same_value(1, 1.0), same_value((1,), [1])
    (True, False, False)
    """
    if type(actual) is not type(expected):
        return False
    if isinstance(actual, Probed):
        return same_value(actual.result, expected.result) and same_value(
            actual.arguments, expected.arguments
        )
    if isinstance(actual, float):
        if math.isnan(actual) or math.isnan(expected):
            return math.isnan(actual) and math.isnan(expected)
        return math.isclose(actual, expected, rel_tol=FLOAT_REL_TOL, abs_tol=1e-12)
    if isinstance(actual, list | tuple):
        return len(actual) == len(expected) and all(
            same_value(a, b) for a, b in zip(actual, expected, strict=True)
        )
    if isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(
            same_value(actual[key], expected[key]) for key in actual
        )
    return bool(actual == expected)


def _calls(sandbox: Any) -> Calls | None:
    """Return how to make calls in ``sandbox``, or None when it cannot return values.

    A :class:`~lift_metrics.sandbox.Sandbox` through
    :func:`~lift_metrics.sandbox.execute_calls`; another object through its own
    ``execute_calls(code, inputs, *, entry_point, timeout_s)`` method, if it has one. Each
    call goes through :data:`PROBE`, so that what it leaves in its arguments is compared too.
    """
    from lift_metrics.sandbox import Sandbox, execute_calls

    if isinstance(sandbox, Sandbox):
        return _probing(functools.partial(execute_calls, sandbox=sandbox))
    method = getattr(sandbox, "execute_calls", None)
    return _probing(cast(Calls, method)) if callable(method) else None


PROBE = "_lift_metrics_probe"
"""The function appended to a program that calls its entry point and returns the value with
the arguments as the call left them (a list sorted in place, an item appended)."""
_PROBE_SOURCE = "\n\n\ndef {probe}(**arguments):\n    return ({entry}(**arguments), arguments)\n"


@dataclass(frozen=True)
class Probed:
    """What one call returned and the state it left its arguments in (internal)."""

    result: Any
    arguments: Any


def _probing(calls: Calls) -> Calls:
    """Return ``calls`` running each program through :data:`PROBE`, values as :class:`Probed`."""

    def probe(
        code: str, inputs: Sequence[dict[str, Any]], *, entry_point: str | None, timeout_s: float
    ) -> list[Any]:
        entry = entry_point if entry_point is not None else single_function(code)
        if entry is None:  # nothing to wrap: the values as they are
            return list(calls(code, inputs, entry_point=entry_point, timeout_s=timeout_s))
        wrapped = code.rstrip("\n") + _PROBE_SOURCE.format(probe=PROBE, entry=entry)
        outputs = calls(wrapped, inputs, entry_point=PROBE, timeout_s=timeout_s)
        return [_unwrapped(out) for out in outputs]

    return probe


def _unwrapped(out: Any) -> Any:
    """Return a probed call's output with its value as :class:`Probed`."""
    if not out.ok:
        return out
    value = out.value
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        return dataclasses.replace(out, value=Probed(value[0], value[1]))
    return dataclasses.replace(out, ok=False, value=None, error="the call was not probed")


def _sandbox_key(sandbox: Any) -> tuple[Any, ...]:
    return (
        getattr(sandbox, "isolation", None),
        getattr(sandbox, "importable", None),
        getattr(sandbox, "memory_mb", None),
    )


def _run_all(
    code: str, inputs: Sequence[dict[str, Any]], entry: str | None, calls: Calls, timeout_s: float
) -> tuple[list[Any], float]:
    """Run every input (a batch stopped by a timeout or crash goes on after the culprit).

    Returns one ExecutionOutput or None (not run) per input, and the ms of every batch
    together (a stopped batch counts the time it took, about its limit); 0.0 for no inputs.
    """
    outputs: list[Any] = [None] * len(inputs)
    start, elapsed = 0, 0.0
    for _ in range(3):  # at most three batches: a reference that keeps stopping is dropped
        if start >= len(inputs):
            break
        batch = calls(code, list(inputs[start:]), entry_point=entry, timeout_s=timeout_s)
        elapsed += batch[0].elapsed_ms if batch else 0.0
        stopped = None
        for offset, out in enumerate(batch):
            if (out.error or "").startswith("did not run"):
                stopped = start + offset
                break
            outputs[start + offset] = out
        if stopped is None:
            break
        start = stopped + 1  # the input that stopped the batch is dropped
    return outputs, elapsed


def reference_run(
    reference: str,
    entry: str | None,
    seeds: Sequence[dict[str, Any]],
    prompt: str | None,
    sandbox: Any,
    calls: Calls,
) -> ReferenceRun:
    """Return the reference's valid generated inputs and outputs, cached (module docstring)."""
    key = (reference, entry, tuple(_key(s) for s in seeds), prompt, _sandbox_key(sandbox))
    cached = _REFERENCE_RUNS.get(key)
    if cached is not None:
        return cached
    try:
        proposed = generate_inputs(reference, entry, seeds, prompt=prompt, count=PROPOSED_INPUTS)
    except (RecursionError, MemoryError):  # a reference nested too deeply to read
        proposed = ()
    if not proposed:
        run = ReferenceRun((), (), 0.0, "no inputs could be generated for the reference")
    else:
        pool = _valid(reference, entry, proposed, calls)
        if (pool.inputs or seeds) and len(pool.inputs) < BEHAVIOUR_INPUTS:
            # few proposals were valid (a parser's inputs): mutate the valid ones too
            more = generate_inputs(
                reference,
                entry,
                [*seeds, *pool.inputs],
                prompt=prompt,
                count=PROPOSED_INPUTS,
                variant=1,
            )
            pool = _joined(pool, _valid(reference, entry, more, calls))
        run = _within(
            _select(reference, entry, pool, calls, prompt), REFERENCE_BUDGET_S * 1000.0, 1
        )
    _REFERENCE_RUNS.put(key, run)
    return run


def _valid(
    reference: str, entry: str | None, proposed: Sequence[dict[str, Any]], calls: Calls
) -> ReferenceRun:
    """Return the inputs on which the reference returns one value twice, or raises alike.

    The inputs are the proposed ones that return plain data, and among the others the
    shortest (``""``, ``0``, ``[]`` first: where error contracts
    are) that raise an exception the reference raises by name (its error contract,
    :func:`contract_errors`), at most :data:`RAISING_INPUTS` and a third as many as those
    returning; in the order proposed. The time kept is the second run's (every
    batch counted), per input, times the inputs kept.
    """
    first, _ = _run_all(reference, proposed, entry, calls, REFERENCE_TIMEOUT_S)
    returned = [i for i, out in enumerate(first) if out is not None and out.ok]
    contract = contract_errors(reference)
    raising = [i for i, out in enumerate(first) if raised_name(out) in contract]
    raising.sort(key=lambda i: (len(repr(proposed[i])), i))  # the edge cases first: "", 0, []
    chosen = sorted(returned + raising[: min(RAISING_INPUTS, len(returned) // 3)])
    again, elapsed = _run_all(
        reference, [proposed[i] for i in chosen], entry, calls, REFERENCE_TIMEOUT_S
    )
    kept = [
        i
        for i, out in zip(chosen, again, strict=True)
        if out is not None and _same_outcome(first[i], out)
    ]
    per_input = elapsed / len(chosen) if chosen else 0.0
    return ReferenceRun(
        tuple(proposed[i] for i in kept),
        tuple(first[i].value if first[i].ok else Raises(str(raised_name(first[i]))) for i in kept),
        per_input * len(kept),
        "" if kept else _no_valid_reason(first),
    )


def _agrees(out: Any, want: Any) -> bool:
    """Whether a call's outcome is the reference's: its value, or raising the same exception."""
    if isinstance(want, Raises):
        return raised_name(out) == want.name
    return bool(out.ok and same_value(out.value, want))


def _select(
    reference: str, entry: str | None, pool: ReferenceRun, calls: Calls, prompt: str | None
) -> ReferenceRun:
    """Choose :data:`BEHAVIOUR_INPUTS` of the valid inputs (module docstring)."""
    if len(pool.inputs) <= BEHAVIOUR_INPUTS:
        return pool
    runs = int(MUTANT_BUDGET_S * 1000.0 // max(pool.elapsed_ms, 1e-3))
    programs = mutants(reference, entry, limit=MUTANTS, more=True)[: min(MUTANTS, runs)]
    kills = [_kills(program, entry, pool, calls) for program in programs]
    survivors = [i for i, killed in enumerate(kills) if not killed]
    if survivors and runs >= 2 * len(programs):
        pool, kills = _hunt(reference, entry, pool, calls, prompt, programs, kills, survivors)
    return _subset(pool, _chosen(pool.outputs, kills, pool.inputs))


def _hunt(
    reference: str,
    entry: str | None,
    pool: ReferenceRun,
    calls: Calls,
    prompt: str | None,
    programs: Sequence[str],
    kills: list[set[int]],
    survivors: Sequence[int],
) -> tuple[ReferenceRun, list[set[int]]]:
    """Mutate the valid inputs once more and add those on which a surviving mutant differs.

    The valid inputs are mutated (their neighbours: one more character, a bound moved by
    one), so a mutant that only a boundary case tells apart is told apart where it can be.
    """
    proposed = generate_inputs(
        reference, entry, pool.inputs, prompt=prompt, count=PROPOSED_INPUTS, variant=2
    )
    extra = _valid(reference, entry, proposed, calls) if proposed else None
    if extra is None or not extra.inputs:
        return pool, kills
    found = {i: _kills(programs[i], entry, extra, calls) for i in survivors}
    useful = sorted(set().union(*found.values()))
    if not useful:
        return pool, kills
    offset = len(pool.inputs)
    moved = {old: offset + new for new, old in enumerate(useful)}
    for i, killed in found.items():
        kills[i] = {moved[j] for j in killed}
    return _joined(pool, _subset(extra, useful)), kills


def _kills(program: str, entry: str | None, pool: ReferenceRun, calls: Calls) -> set[int]:
    """Return the valid inputs on which a mutant differs from the reference.

    An input the mutant's run did not reach (it ran out of time or crashed first) counts as
    agreeing: nothing is known there.
    """
    limit = min(REFERENCE_TIMEOUT_S, max(MUTANT_TIMEOUT_S, 10.0 * pool.elapsed_ms / 1000.0))
    outputs = calls(program, list(pool.inputs), entry_point=entry, timeout_s=limit)
    return {
        i
        for i, (out, want) in enumerate(zip(outputs, pool.outputs, strict=True))
        if not (out.error or "").startswith("did not run") and not _agrees(out, want)
    }


def _outcome_kind(value: Any) -> tuple[Any, ...]:
    """Return a coarse kind of an outcome: its type, with the sign, truth or length 0/1/2+."""
    if isinstance(value, Raises):
        return ("raises", value.name)
    if isinstance(value, Probed):
        return _outcome_kind(value.result)
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return (type(value).__name__, (value > 0) - (value < 0))
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset):
        return (type(value).__name__, min(len(value), 2))
    return (type(value).__name__,)


def _length(inputs: Any) -> int:
    """Return how long a call's arguments are: the summed lengths of its strings and containers."""
    values = inputs.values() if isinstance(inputs, dict) else ()
    return sum(len(v) for v in values if isinstance(v, str | bytes | list | tuple | dict | set))


def _longest(inputs: Sequence[Any]) -> list[int]:
    """Return the longest input and the longest of the other parity (none without lengths).

    Code often goes wrong only on long inputs, and differently on odd and even lengths (the
    middle element, pairs): a median that is wrong only on odd lists of nine or more.
    """
    lengths = [_length(item) for item in inputs]
    ranked = sorted((i for i, n in enumerate(lengths) if n), key=lambda i: (-lengths[i], i))
    other = [i for i in ranked[1:] if lengths[i] % 2 != lengths[ranked[0]] % 2]
    return ranked[:1] + other[:1]


def _chosen(outputs: Sequence[Any], kills: Sequence[set[int]], inputs: Sequence[Any]) -> list[int]:
    """Return the indices of the inputs kept, in the order proposed (module docstring)."""
    wanted = BEHAVIOUR_INPUTS
    chosen: set[int] = set()
    kinds: dict[tuple[Any, ...], list[int]] = {}
    for index, output in enumerate(outputs):
        kinds.setdefault(_outcome_kind(output), []).append(index)
    spread = {kind: _spread(indices, KIND_INPUTS) for kind, indices in kinds.items()}
    for turn in range(KIND_INPUTS):  # each kind's first input, then each one's second, ...
        for picks in spread.values():
            if turn < len(picks) and len(chosen) < wanted // 2:
                chosen.add(picks[turn])
    alive = [killed for killed in kills if killed and not killed & chosen]
    while len(chosen) < wanted and alive:  # greedy: the input telling most mutants apart
        counts = Counter(i for killed in alive for i in killed)
        best = min(counts, key=lambda i: (-counts[i], i))
        chosen.add(best)
        alive = [killed for killed in alive if best not in killed]
    chosen.update(_longest(inputs)[: max(0, wanted - len(chosen))])
    rest = [i for i in range(len(outputs)) if i not in chosen]
    chosen.update(_spread(rest, wanted - len(chosen)))  # the others, first to last
    return sorted(chosen)


def _spread(indices: Sequence[int], count: int) -> list[int]:
    """Return ``count`` of ``indices`` evenly spaced from the first (all when fewer)."""
    if count <= 0:
        return []
    if len(indices) <= count:
        return list(indices)
    step = len(indices) / count
    return [indices[int(j * step)] for j in range(count)]


def _within(run: ReferenceRun, budget_ms: float, least: int) -> ReferenceRun:
    """Keep the first inputs the reference runs within ``budget_ms`` (at least ``least``)."""
    if not run.inputs or run.elapsed_ms <= budget_ms:
        return run
    per_input = run.elapsed_ms / len(run.inputs)
    return _first(run, max(least, int(max(budget_ms, 0.0) // per_input)))


def _first(run: ReferenceRun, count: int) -> ReferenceRun:
    """Keep the first ``count`` inputs, and the reference's time on them."""
    if count >= len(run.inputs):
        return run
    return _subset(run, range(count))


def _subset(run: ReferenceRun, indices: Sequence[int]) -> ReferenceRun:
    """Keep the inputs at ``indices``, with the reference's time on them (its mean per input)."""
    per_input = run.elapsed_ms / len(run.inputs) if run.inputs else 0.0
    return ReferenceRun(
        tuple(run.inputs[i] for i in indices),
        tuple(run.outputs[i] for i in indices),
        per_input * len(indices),
        run.reason,
    )


def _joined(run: ReferenceRun, more: ReferenceRun) -> ReferenceRun:
    """Return ``run`` followed by ``more`` (the first's reason kept)."""
    return ReferenceRun(
        run.inputs + more.inputs,
        run.outputs + more.outputs,
        run.elapsed_ms + more.elapsed_ms,
        run.reason,
    )


def _no_valid_reason(outputs: Sequence[Any]) -> str:
    """Say why no input is valid, naming the reference's first exception by its type only.

    The message is left out: the reference's text (``invalid duration: 'aAbB'``) would
    reach GEPA's feedback through the reasons.
    """
    errors = [out.error for out in outputs if out is not None and out.error]
    first = str(errors[0]).split(":", 1)[0].strip() if errors else ""
    detail = f" (first: {first[:60]})" if first else ""
    return (
        f"the reference returned no plain value on any of {len(outputs)} generated inputs{detail}"
    )


def compare(
    candidate: str, run: ReferenceRun, entry: str | None, calls: Calls, timeout_s: float | None
) -> Behaviour:
    """Run the candidate on the reference's inputs and count the outputs that agree."""
    limit = min(max(CANDIDATE_TIMEOUT_S, 20.0 * run.elapsed_ms / 1000.0), CANDIDATE_TIMEOUT_MAX_S)
    if timeout_s is not None:
        limit = min(limit, timeout_s)
    outputs = calls(candidate, list(run.inputs), entry_point=entry, timeout_s=limit)
    agreed = 0
    first: str | None = None
    for out, want in zip(outputs, run.outputs, strict=True):
        if _agrees(out, want):
            agreed += 1
        elif first is None:  # what the code did, never the reference's output nor the input
            first = _what_it_did(out, want)
    total = len(run.inputs)
    reason = f"behaviour: agrees with the reference on {agreed} of {total} generated inputs"
    if first is not None:
        reason += f"; where it first differs the code {first[:160]}"
    return Behaviour(agreed, total, reason)


def _what_it_did(out: Any, want: Any) -> str:
    """Say what a call that disagrees did: its value, its error, or its arguments' state."""
    if not out.ok:
        return str(out.error or out.status)
    value = out.value
    if not isinstance(value, Probed):
        return f"returned {value!r}"
    if isinstance(want, Probed) and same_value(value.result, want.result):
        return "returned the same value but left its arguments in another state"
    return f"returned {value.result!r}"


def check_behaviour(
    candidate: str,
    reference: str,
    entry: str | None,
    seeds: Sequence[dict[str, Any]],
    prompt: str | None,
    sandbox: Any,
    timeout_s: float | None,
) -> Behaviour:
    """Compare the candidate with the reference on generated inputs.

    ``total`` is 0 when nothing could be compared (the reason says why); then the score
    falls back on resemblance. Only a :class:`~lift_metrics.sandbox.Sandbox` can return the
    values, or an object with an ``execute_calls(code, inputs, *, entry_point, timeout_s)``
    method that does what :func:`~lift_metrics.sandbox.execute_calls` does; with another
    sandbox-like object (one that runs tests only) nothing is compared and the reason is
    empty.
    """
    calls = _calls(sandbox)
    if calls is None:
        return Behaviour(0, 0, "")  # a test double or a tests-only runner: nothing to say
    run = reference_run(reference, entry, seeds, prompt, sandbox, calls)
    if not run.inputs:
        return Behaviour(0, 0, f"behaviour: not checked ({run.reason})")
    return compare(candidate, run, entry, calls, timeout_s)
