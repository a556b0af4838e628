"""load_labels: JSON Lines and CSV, field maps, raters, splits, errors naming line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lift_metrics.validation import LabelFileError, load_labels, shipped_labels_path

ROWS = [
    {"id": "a", "split": "calibration", "pred": "x", "gold": "x", "human_score": 1.0},
    {
        "id": "b",
        "split": "heldout",
        "pred": "y",
        "gold": "x",
        "human_score": 0.2,
        "human_score_2": 0.3,
    },
    {"id": "c", "split": "heldout", "pred": "z", "gold": "x", "human_score": 0.0},
]


def test_jsonl_with_field_map_split_and_raters(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    items = load_labels(path, fields={"predicted": "pred", "expected": "gold"}, split="heldout")
    assert [i.id for i in items] == ["b", "c"]
    assert items[0].item == {"predicted": "y", "expected": "x"}
    assert items[0].ratings == (0.2, 0.3)
    assert items[1].ratings == (0.0, None)  # second rater skipped c
    assert items[0].line == 2
    assert items[0].split == "heldout"


def test_default_item_is_every_other_field(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    items = load_labels(path)
    assert items[0].item == {"pred": "x", "gold": "x"}
    assert len(items) == 3


def test_csv_with_json_fields(tmp_path: Path, write_jsonl) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "id,code,tests,score,score_2\n"
        'one,"def f(): pass","[{""inputs"": {}, ""expected"": null}]",0.5,\n'
        "two,x,[],1,0.9\n",
        encoding="utf-8",
    )
    items = load_labels(path, score_field="score", json_fields=["tests"])
    assert items[0].item == {"code": "def f(): pass", "tests": [{"inputs": {}, "expected": None}]}
    assert items[0].label == 0.5
    assert items[0].ratings == (0.5, None)
    assert items[1].ratings == (1.0, 0.9)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "human_score": 0.5}\n{"id": "b"\n', r"d\.jsonl:2: not valid JSON"),
        ('{"id": "a", "human_score": "high"}\n', r":1: field 'human_score' must be a number"),
        ('{"id": "a"}\n', r":1: field 'human_score' \(the label\) is missing"),
        (
            '{"id": "a", "human_score": 1}\n{"id": "a", "human_score": 1}\n',
            r":2: field 'id': duplicate id 'a' \(first on line 1\)",
        ),
        ("[1, 2]\n", r":1: each line must be a JSON object"),
    ],
)
def test_jsonl_errors_name_line_and_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LabelFileError, match=message):
        load_labels(path)


def test_mapped_field_missing_names_line(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    with pytest.raises(LabelFileError, match=r":1: field 'predicted_code' is missing"):
        load_labels(path, fields={"predicted": "predicted_code"})


def test_csv_errors_name_line_and_field(tmp_path: Path, write_jsonl) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,human_score\na,0.5\nb,\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=r"d\.csv:3: field 'human_score' .*empty"):
        load_labels(path)
    path.write_text("id,human_score,tests\na,0.5,[oops\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=r":2: field 'tests': not valid JSON"):
        load_labels(path, json_fields=["tests"])


def test_split_without_split_field_is_an_error(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "human_score": 1}])
    with pytest.raises(LabelFileError, match=r":1: field 'split' is missing"):
        load_labels(path, split="heldout")
    assert len(load_labels(path, split="all")) == 1


def test_missing_file_and_unknown_suffix(tmp_path: Path, write_jsonl) -> None:
    with pytest.raises(FileNotFoundError):
        load_labels(tmp_path / "nope.jsonl")
    other = tmp_path / "d.txt"
    other.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="suffix"):
        load_labels(other)


def test_shipped_labels_counts_match_the_dataset_card() -> None:
    # datasets/labels/README.md: 119 IR pairs (51 heldout), 120 code pairs (48 heldout)
    ir = load_labels(shipped_labels_path("ir_quality"))
    code = load_labels(shipped_labels_path("code_quality"))
    assert len(ir) == 119
    assert sum(i.split == "heldout" for i in ir) == 51
    assert len(code) == 120
    assert sum(i.split == "heldout" for i in code) == 48
    assert sum(i.ratings[1] is not None for i in ir) == 30
    assert all(0.0 <= i.label <= 1.0 for i in ir + code)
    first = json.loads(shipped_labels_path("ir_quality").read_text().splitlines()[0])
    assert ir[0].label == first["human_score"]
