"""A short, deterministic run of the fuzz target ``fuzz/fuzz_fixture.py``.

The long run is manual (``python fuzz/fuzz_fixture.py --seconds 600``, see
``fuzz/README.md``); this keeps the target working and proves it can report a finding.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from course import FixtureProviderError

from .helpers import ROUNDTRIP_PATH, end, fixture, start, text, tool
from .oracle import Failed

FUZZ_PATH = Path(__file__).resolve().parent.parent / "fuzz" / "fuzz_fixture.py"

LOADER = "rejected by load_fixture"
ADAPTER = "rejected by the adapter"
STREAMED = "streamed"


def _load() -> ModuleType:
    name = "fuzz_fixture"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, FUZZ_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


fuzz_fixture = _load()


def test_a_short_fuzz_run_finds_nothing(tmp_path: Path) -> None:
    state = fuzz_fixture.fuzz(iterations=400, seed=0, crash_dir=tmp_path, log=lambda message: None)
    assert state.executions == 400
    # The run reached all three ends: rejected bytes, rejected fixtures, streamed ones.
    assert set(state.outcomes) == {LOADER, ADAPTER, STREAMED}
    assert list(tmp_path.iterdir()) == []


def test_the_hypothesis_entry_point_runs_structured_inputs(tmp_path: Path) -> None:
    state = fuzz_fixture.Run()
    target = fuzz_fixture.hypothesis_target(state, tmp_path / "fixture.json", True)
    for size in (0, 16, 512, 4096):
        target(bytes(range(256)) * (size // 256) + bytes(size % 256))
    assert state.executions >= 1


def _v2(records: list[object]) -> dict[str, object]:
    return {"schemaVersion": 2, "responses": [{"records": records}]}


def _fragments(fragments: list[str]) -> dict[str, object]:
    return {**tool("c", "f", n=1), "argumentFragments": fragments}


HOSTILE_TEXTS: dict[str, tuple[bytes, str]] = {
    # name: (the bytes, the one outcome they must have)
    "bundled": (ROUNDTRIP_PATH.read_bytes(), STREAMED),
    "empty": (b"", LOADER),
    "BOM": (b"\xef\xbb\xbf" + ROUNDTRIP_PATH.read_bytes(), LOADER),
    "invalid UTF-8": (b'{"schemaVersion": 1, "responses": [], "\xff": 1}', LOADER),
    "encoded surrogate": (b'{"schemaVersion": 1, "responses": [], "\xed\xa0\x80": 1}', LOADER),
    "duplicate key": (b'{"schemaVersion": 1, "schemaVersion": 1, "responses": []}', LOADER),
    "duplicate key in a record": (
        json.dumps(fixture([start(), text("a"), end()]))
        .replace('"text": "a"', '"text": "a", "text": "b"')
        .encode(),
        LOADER,
    ),
    "NaN": (b'{"schemaVersion": NaN, "responses": []}', LOADER),
    "Infinity in a record": (
        json.dumps(fixture([start(), text("a"), end()])).replace('"a"', "Infinity").encode(),
        LOADER,
    ),
    "overflow": (b'{"schemaVersion": 1e400, "responses": []}', LOADER),
    "4300 digits": (b'{"schemaVersion": 1, "responses": [], "n": ' + b"9" * 4300 + b"}", ADAPTER),
    "4301 digits": (b'{"schemaVersion": ' + b"9" * 4301 + b', "responses": []}', LOADER),
    "nesting at the limit": (
        b'{"schemaVersion": 1, "responses": [{"records": [' + b"[" * 252 + b"]" * 252 + b"]}]}",
        STREAMED,
    ),
    "nesting past the limit": (
        b'{"schemaVersion": 1, "responses": [{"records": [' + b"[" * 253 + b"]" * 253 + b"]}]}",
        LOADER,
    ),
    "100000 levels": (b"[" * 100_000 + b"]" * 100_000, LOADER),
    "lone surrogate escape": (
        json.dumps(fixture([start("\ud800"), text("\udfff"), end("\ud800")])).encode(),
        STREAMED,
    ),
    "trailing comma": (b'{"schemaVersion": 1, "responses": [],}', LOADER),
    "control character": (b'{"schemaVersion": 1, "responses": [], "\x01": 1}', LOADER),
    "not a fixture": (b"[1, 2, 3]", ADAPTER),
    "wrong schema version": (b'{"schemaVersion": 1.0, "responses": []}', ADAPTER),
    "trailing data": (b'{"schemaVersion": 1, "responses": []} []', LOADER),
    # Schema version 2.
    "version 2, every record type": (json.dumps(fuzz_fixture.SEED_V2).encode(), STREAMED),
    "version 2, an hour's delay per record": (
        json.dumps(_v2([{**start(), "delay": 3600}, {**text("a"), "delay": 3600}, end()])).encode(),
        STREAMED,
    ),
    "version 2, delay NaN": (
        json.dumps(_v2([{**start(), "delay": 0}, end()])).replace("0}", "NaN}", 1).encode(),
        LOADER,
    ),
    "version 2, delay 1e400": (
        json.dumps(_v2([{**start(), "delay": 0}, end()])).replace("0}", "1e400}", 1).encode(),
        LOADER,
    ),
    "version 2, a version-2 record in version 1": (
        json.dumps(fixture([start(), {"type": "thinking_delta", "text": "t"}, end()])).encode(),
        STREAMED,
    ),
    "version 3": (b'{"schemaVersion": 3, "responses": []}', ADAPTER),
    "version 2.0": (b'{"schemaVersion": 2.0, "responses": []}', ADAPTER),
    "version 2, fragments of 4301 digits": (
        json.dumps(_v2([start(), _fragments(['{"n": ' + "9" * 4301 + "}"]), end()])).encode(),
        STREAMED,
    ),
    "version 2, fragments 100000 deep": (
        json.dumps(_v2([start(), _fragments(["[" * 100_000]), end()])).encode(),
        STREAMED,
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TEXTS))
def test_the_target_handles_hostile_texts(name: str, tmp_path: Path) -> None:
    data, expected = HOSTILE_TEXTS[name]
    assert fuzz_fixture.check_bytes(data, tmp_path / "fixture.json") == expected


def test_a_disagreement_is_a_finding_and_its_input_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An oracle that predicts every response fails: the adapter disagrees at once.
    monkeypatch.setattr(
        fuzz_fixture,
        "_predicted",
        lambda data: [Failed("PROVIDER_MISSING_TERMINAL", None, [])] * 10,
    )
    with pytest.raises(fuzz_fixture.Finding):
        fuzz_fixture.fuzz(iterations=200, seed=0, crash_dir=tmp_path, log=lambda m: None)
    saved = list(tmp_path.iterdir())
    assert len(saved) == 1


def test_an_escaping_exception_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: object) -> object:
        raise RecursionError("as if the loader recursed")

    monkeypatch.setattr(fuzz_fixture, "load_fixture", broken)
    with pytest.raises(fuzz_fixture.Finding) as caught:
        fuzz_fixture.fuzz(iterations=10, seed=0, crash_dir=tmp_path, log=lambda m: None)
    assert isinstance(caught.value.__cause__, RecursionError)
    assert not isinstance(caught.value.__cause__, FixtureProviderError)
