"""Fault injection: a budget of LM calls is a hard cap, however many threads race for it.

A budget checked before each call but counted only once the call is billed lets threads that
pass the check together all make their call (``max_lm_calls = 8`` allowing 9 calls on a busy
machine). The race is forced here, not hoped for: every thread asks for its call before any
call is billed (a barrier), so a check-then-act lets all of them through every time, and a
reservation lets exactly the budget through.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import dspy
import pytest
from dspy.utils import DummyLM
from dspy.utils.callback import BaseCallback

from lift_metrics._usage import Budget, BudgetExceeded, UsageMeter, budget_callback

THREADS = 32
MAX_CALLS = 8


def _race(meter: UsageMeter, callback: Any) -> tuple[list[int], list[int]]:
    """Each thread asks to start a call; once all have asked, the admitted ones are billed."""
    asked = threading.Barrier(THREADS)
    admitted: list[int] = []
    refused: list[int] = []
    lock = threading.Lock()

    def one(index: int) -> None:
        call_id = f"call-{index}"
        try:
            callback.on_lm_start(call_id=call_id, instance=None, inputs={})
        except BudgetExceeded:
            with lock:
                refused.append(index)
            asked.wait()
            return
        with lock:
            admitted.append(index)
        asked.wait()  # nothing is billed before every thread has asked
        meter.add_usage("dummy", {"prompt_tokens": 1, "completion_tokens": 1})
        callback.on_lm_end(call_id=call_id, outputs=None, exception=None)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return admitted, refused


def test_threads_racing_for_the_last_calls_make_no_call_beyond_the_budget() -> None:
    meter = UsageMeter(Budget(max_lm_calls=MAX_CALLS))
    admitted, refused = _race(meter, budget_callback(meter))
    assert len(admitted) == MAX_CALLS
    assert len(refused) == THREADS - MAX_CALLS
    assert meter.totals().lm_calls == MAX_CALLS
    spent = f"the budget of {MAX_CALLS} LM calls is spent ({MAX_CALLS} calls made)"
    assert meter.stop_reason == spent


def test_a_call_that_is_not_billed_gives_its_place_back() -> None:
    meter = UsageMeter(Budget(max_lm_calls=1))
    callback = budget_callback(meter)
    callback.on_lm_start(call_id="cached", instance=None, inputs={})
    callback.on_lm_end(call_id="cached", outputs=None, exception=None)  # a cache hit: no bill
    callback.on_lm_start(call_id="failed", instance=None, inputs={})
    callback.on_lm_end(call_id="failed", outputs=None, exception=RuntimeError("no answer"))
    callback.on_lm_start(call_id="billed", instance=None, inputs={})
    meter.add_usage("dummy", {"prompt_tokens": 1})
    callback.on_lm_end(call_id="billed", outputs=None, exception=None)
    assert meter.totals().lm_calls == 1
    with pytest.raises(BudgetExceeded, match="1 LM calls is spent"):
        callback.on_lm_start(call_id="one more", instance=None, inputs={})


class _Gate(BaseCallback):  # type: ignore[misc]  # dspy is untyped
    """Runs after the budget's callback: holds every started call until all threads have
    either started theirs or been refused, so that none is billed before all have asked."""

    def __init__(self, settled: threading.Condition, state: dict[str, int]) -> None:
        self.settled = settled
        self.state = state

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        with self.settled:
            self.state["started"] += 1
            self.settled.notify_all()
            self.settled.wait_for(lambda: self.state["started"] + self.state["refused"] == THREADS)


def test_dspy_calls_from_many_threads_stop_at_the_budget() -> None:
    meter = UsageMeter(Budget(max_lm_calls=MAX_CALLS))
    settled = threading.Condition()
    state = {"started": 0, "refused": 0}
    lm = DummyLM([{"answer": "x"}] * THREADS)
    callbacks = [budget_callback(meter), _Gate(settled, state)]
    answers: list[Any] = []

    def one(index: int) -> None:
        with dspy.context(lm=lm, usage_tracker=meter, callbacks=callbacks):
            try:  # each question its own, so that no answer comes from a cache
                answers.append(dspy.Predict("question -> answer")(question=f"q{index}"))
            except BudgetExceeded:
                with settled:
                    state["refused"] += 1
                    settled.notify_all()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert (state["started"], state["refused"]) == (MAX_CALLS, THREADS - MAX_CALLS)
    assert len(answers) == MAX_CALLS
    assert meter.totals().lm_calls == MAX_CALLS


def test_totals_read_after_settle_count_a_call_still_running_when_the_budget_stopped() -> None:
    # The stop counts a reserved call that is still running; totals read before that call is
    # billed would say 7 calls in the result against "8 calls made" in the stop.
    meter = UsageMeter(Budget(max_lm_calls=1))
    callback = budget_callback(meter)
    started, finish = threading.Event(), threading.Event()

    def call() -> None:
        callback.on_lm_start(call_id="only", instance=None, inputs={})
        started.set()
        finish.wait()
        meter.add_usage("dummy", {"prompt_tokens": 1, "completion_tokens": 1})
        callback.on_lm_end(call_id="only", outputs=None, exception=None)

    thread = threading.Thread(target=call)
    thread.start()
    started.wait()
    with pytest.raises(BudgetExceeded, match="1 calls made"):
        callback.on_lm_start(call_id="refused", instance=None, inputs={})
    assert meter.totals().lm_calls == 0  # the running call is not billed yet
    threading.Timer(0.05, finish.set).start()
    meter.settle(timeout_s=10.0)
    assert meter.totals().lm_calls == 1
    thread.join()


# The token and dollar caps: each call here is billed 150 tokens and $0.01, so a run making one
# call at a time stops after 8 calls (1,200 tokens, $0.08): the 8th call starts at 1,050 tokens
# ($0.07), below the cap, and the 9th is refused. Caps checked against billed usage only would
# let calls running together all pass a check made before any of them is billed (on a busy
# machine "$0.0900 used" where one call at a time gives "$0.0800").
SIZED_CAPS = {
    "tokens": (Budget(max_tokens=1200), "the budget of 1200 tokens is spent (1200 tokens used)"),
    "dollars": (Budget(max_cost_usd=0.075), "the budget of $0.075 is spent ($0.0800 used)"),
}
BILL = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150, "cost": 0.01}


def _bill(meter: UsageMeter, callback: Any, call_id: str) -> None:
    meter.add_usage("dummy", BILL)
    callback.on_lm_end(call_id=call_id, outputs=None, exception=None)


@pytest.mark.parametrize("cap", sorted(SIZED_CAPS))
def test_calls_running_together_hold_their_size_against_the_token_and_dollar_caps(
    cap: str,
) -> None:
    budget, spent = SIZED_CAPS[cap]
    meter = UsageMeter(budget)
    callback = budget_callback(meter)
    callback.on_lm_start(call_id="first", instance=None, inputs={})
    _bill(meter, callback, "first")  # one call billed: the meter knows a call's size
    # nothing more is billed until every thread has asked; the count admitted is what matters
    admitted, refused = _race(meter, callback)
    assert (len(admitted), len(refused)) == (MAX_CALLS - 1, THREADS - MAX_CALLS + 1)
    assert meter.stop_reason == spent


@pytest.mark.parametrize("cap", sorted(SIZED_CAPS))
def test_calls_racing_from_the_start_stop_where_one_call_at_a_time_stops(cap: str) -> None:
    budget, spent = SIZED_CAPS[cap]
    meter = UsageMeter(budget)
    callback = budget_callback(meter)
    start = threading.Barrier(THREADS)
    admitted: list[int] = []
    lock = threading.Lock()

    def one(index: int) -> None:
        start.wait()  # every thread asks at once, before any call is billed
        try:
            callback.on_lm_start(call_id=f"call-{index}", instance=None, inputs={})
        except BudgetExceeded:
            return
        with lock:
            admitted.append(index)
        time.sleep(0.01)  # the call runs
        _bill(meter, callback, f"call-{index}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert len(admitted) == MAX_CALLS
    assert meter.totals().total_tokens == 1200
    assert meter.totals().cost_usd == pytest.approx(0.08)
    assert meter.stop_reason == spent
