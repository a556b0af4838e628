"""One rule for unknown prices: a model without a known price costs NaN (flagged), never 0."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from optimizers_testkit import dummy_lm, make_config

from lift_metrics import _usage
from lift_metrics._tasks import task_records
from lift_metrics._usage import (
    Budget,
    BudgetExceeded,
    UsageMeter,
    call_cost_usd,
    check_budget_prices,
    is_priced,
)
from lift_metrics.optimizers import run_optimizer

UNKNOWN = "acme/unlisted-model-0"
USAGE = {"prompt_tokens": 100, "completion_tokens": 20}


def test_an_unknown_model_costs_nan_not_zero() -> None:
    assert math.isnan(call_cost_usd(UNKNOWN, USAGE))
    assert not is_priced(UNKNOWN)


def test_known_free_and_reported_costs_are_numbers() -> None:
    known = call_cost_usd("openai/gpt-4o-mini", USAGE)
    assert math.isfinite(known)
    assert known > 0
    assert call_cost_usd("local/SmolLM2-abc", USAGE) == 0.0  # the local model has no bill
    assert call_cost_usd("dummy", USAGE) == 0.0
    assert call_cost_usd(UNKNOWN, {**USAGE, "cost": 0.5}) == 0.5  # the provider's own figure
    assert call_cost_usd(UNKNOWN, {"prompt_tokens": 0}) == 0.0  # no tokens, nothing billed


def test_the_meter_flags_unpriced_calls_and_its_total_is_nan() -> None:
    meter = UsageMeter()
    meter.add_usage("openai/gpt-4o-mini", USAGE)
    assert meter.totals().unpriced_calls == 0
    assert math.isfinite(meter.totals().cost_usd)
    meter.add_usage(UNKNOWN, USAGE)
    totals = meter.totals()
    assert totals.unpriced_calls == 1
    assert math.isnan(totals.cost_usd)
    assert totals.total_tokens == 240
    assert totals.to_dict()["unpriced_calls"] == 1


def test_a_dollar_budget_stops_at_an_unpriced_call() -> None:
    meter = UsageMeter(Budget(max_cost_usd=5.0))
    meter.add_usage(UNKNOWN, USAGE)
    with pytest.raises(BudgetExceeded, match="dollar budget cannot be enforced: 1 LM call had"):
        meter.check()
    tokens = UsageMeter(Budget(max_tokens=10_000))  # a token budget still works
    tokens.add_usage(UNKNOWN, USAGE)
    tokens.check()


def test_a_dollar_budget_is_refused_at_start_up_for_an_unknown_model() -> None:
    with pytest.raises(ValueError, match=f"max_cost_usd is set but model '{UNKNOWN}'"):
        check_budget_prices(Budget(max_cost_usd=1.0), ["local/m", UNKNOWN])
    check_budget_prices(Budget(max_cost_usd=1.0), ["local/m", "dummy", "openai/gpt-4o-mini"])
    check_budget_prices(Budget(max_lm_calls=3), [UNKNOWN])


def test_a_run_with_a_dollar_budget_and_no_price_stops_before_writing(tmp_path: Path) -> None:
    lm = dummy_lm(task_records("train")[0])
    lm.model = UNKNOWN
    config = make_config(tmp_path, "mipro", budget={"max_cost_usd": 1.0})
    with pytest.raises(ValueError, match="has no known price"):
        run_optimizer(config, lm=lm, progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_run_without_prices_reports_unknown_cost_not_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_usage, "call_cost_usd", lambda model, usage: math.nan)
    config = make_config(tmp_path, "mipro")
    result = run_optimizer(config, lm=dummy_lm(task_records("train")[0]), progress=False)
    assert result.usage.lm_calls > 0
    assert result.usage.unpriced_calls == result.usage.lm_calls
    assert math.isnan(result.usage.cost_usd)
    assert result.deltas
    assert result.comparison is None
    saved = json.loads((tmp_path / "out" / "result.json").read_text())
    assert saved["usage"]["cost_usd"] is None
    assert saved["usage"]["unpriced_calls"] == result.usage.lm_calls
    report = (tmp_path / "out" / "report.md").read_text()
    assert "No pass/fail A/B: the LM has no known price" in report
