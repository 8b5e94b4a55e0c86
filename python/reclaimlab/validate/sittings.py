"""Where a scenario's kept boots are: the roles of the validation scenarios and the sittings
(docs/VALIDATION.md, "Protocol").

The calibration scenarios (``validation/calibrate/``) and the prediction scenarios
(``validation/predict/``) carry no kept data of their own: their boots are those of a sitting,
``validation/sittings/<date>/real/``, one run of ``scripts/validate-real.sh`` that booted them
all. The reference sitting is the latest complete one (every calibration and prediction
scenario kept); a partial re-sitting never replaces it. Any other scenario file (a sitting's
own, with its per-scenario ``[cost]``, or a balloon scenario) keeps its boots in the ``real/``
beside it, as before the protocol.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from .errors import ValidateError

ROLES = {"calibrate": "calibration", "predict": "prediction"}
# A sitting's record of its boots (scripts/validate-real.sh): start times, aborted boots, and
# the scenarios due in it (every calibration and prediction scenario when it began).
RECORD = "sitting.json"
# The scenarios due in a sitting kept from before sittings recorded theirs: the six of the
# protocol's table (docs/VALIDATION.md, "Protocol"). A scenario added since is not due in it.
DUE_BEFORE_RECORDS = ("anon-seq-reread", "file-stream", "anon-random", "file-write", "mix",
                      "thp-fault")


def role(scenario: Path) -> str | None:
    """"calibration", "prediction", or None for a scenario outside the two directories."""
    return ROLES.get(scenario.resolve().parent.name)


def validation_root(scenario: Path) -> Path:
    """The validation directory a calibration or prediction scenario belongs to."""
    return scenario.resolve().parent.parent


def scenarios(root: Path) -> list[Path]:
    """Every calibration and prediction scenario under ``root``, calibration first."""
    return [p for d in ROLES for p in sorted((root / d).glob("*.toml"))]


def due(sitting: Path, root: Path) -> list[str]:
    """The scenarios due in ``sitting``: those its record lists, for a sitting kept from before
    records listed them DUE_BEFORE_RECORDS, and for one not begun yet every calibration and
    prediction scenario under ``root``."""
    record = sitting / RECORD
    if record.is_file():
        listed = json.loads(record.read_text()).get("scenarios")
        if listed is not None:
            return list(listed)
    if (sitting / "real").is_dir():
        return list(DUE_BEFORE_RECORDS)
    return [p.stem for p in scenarios(root)]


def missing(sitting: Path, root: Path) -> list[str]:
    """The scenarios due in ``sitting`` that it has no kept boots of."""
    return [n for n in due(sitting, root) if not (sitting / "real" / f"{n}.json").is_file()]


def not_yet_sat(scenario: Path, sitting: Path) -> bool:
    """Whether ``scenario`` (a calibration or prediction scenario) was not due in ``sitting``
    and has no kept boots there: added after the sitting, it is listed, not scored."""
    root = validation_root(scenario)
    return (role(scenario) is not None
            and not (sitting / "real" / f"{scenario.stem}.json").is_file()
            and scenario.stem not in due(sitting, root))


def lru_of(sitting: Path) -> str:
    """The page-replacement algorithm a sitting ran its guests under (its record's `lru`;
    "classic", the two lists, for every sitting from before records named one)."""
    record = sitting / RECORD
    if record.is_file():
        return str(json.loads(record.read_text()).get("lru", "classic"))
    return "classic"


def is_complete(sitting: Path, root: Path) -> bool:
    """Every scenario due in it kept, and the sitting's own record (when it has one) does not
    call it partial."""
    record = sitting / RECORD
    if record.is_file() and not json.loads(record.read_text()).get("complete", False):
        return False
    return bool(scenarios(root)) and not missing(sitting, root)


def reference(root: Path, lru: str = "classic") -> Path:
    """The latest complete sitting under ``root``/sittings (by its directory's name, which
    starts with its date) whose guests ran ``lru``."""
    found = [d for d in sorted((root / "sittings").glob("*"))
             if d.is_dir() and lru_of(d) == lru and is_complete(d, root)]
    if not found:
        how = "bash scripts/validate-real.sh" if lru == "classic" else \
            f"LRU={lru} bash scripts/validate-real.sh"
        raise ValidateError(
            f"{root / 'sittings'}: no complete sitting{'' if lru == 'classic' else ' under ' + lru}"
            f" (one holding the kept boots of every scenario of {root / 'calibrate'} and "
            f"{root / 'predict'}); make one with `{how}`"
        )
    return found[-1]


def real_dir(scenario: Path, sitting: Path | None = None, lru: str = "classic") -> Path:
    """Where the kept boots of ``scenario`` are: ``sitting``/real when given, the reference
    sitting's (under ``lru``) for a calibration or prediction scenario, else the ``real/``
    beside it."""
    if sitting is not None:
        return sitting / "real"
    if role(scenario) is not None:
        return reference(validation_root(scenario), lru) / "real"
    return scenario.parent / "real"


def _record(sitting: Path) -> dict:
    """The sitting's record; a new one lists every calibration and prediction scenario as due
    (a sitting is under validation/sittings/)."""
    path = sitting / RECORD
    if path.is_file():
        return json.loads(path.read_text())
    root = sitting.resolve().parent.parent
    return {"complete": False, "scenarios": [p.stem for p in scenarios(root)], "boots": []}


def _save(sitting: Path, rec: dict) -> None:
    """Write the sitting's record (the one place that does)."""
    sitting.mkdir(parents=True, exist_ok=True)
    (sitting / RECORD).write_text(json.dumps(rec, indent=1) + "\n")


def begin(sitting: Path, lru: str = "classic") -> list[str]:
    """Start a sitting's record before its first boot: every calibration and prediction
    scenario is due in it (the scenarios added later are not), its guests under ``lru`` (the
    record says so only for the multi-generational LRU: a sitting that names none is one of
    the two lists). Returns them."""
    rec = _record(sitting)
    if lru != "classic":
        rec["lru"] = lru
    _save(sitting, rec)
    return rec["scenarios"]


def resume(sitting: Path, root: Path) -> list[str]:
    """Go on with an interrupted sitting (scripts/validate-real.sh with RESUME=1): the scenarios
    due in it that have no kept boots yet, in the order they were due. A scenario whose boots
    were under way is booted again from its first rep (its kept file is written only after
    its last boot, so none of its boots was kept); what was kept stays. A complete sitting has
    nothing left to boot (the script then makes only the traces it lacks). The record notes
    when the sitting resumed, so the gap between its boots is on record."""
    record = sitting / RECORD
    if not record.is_file():
        raise ValidateError(f"{record}: no such sitting record; begin a sitting with "
                            "`bash scripts/validate-real.sh` (without RESUME=1)")
    rec = json.loads(record.read_text())
    left = [] if rec.get("complete") else missing(sitting, root)
    # Boots of a scenario left to boot were recorded as they ended, but its kept file was never
    # written: the record says they were lost, not kept.
    for b in rec.get("boots", []):
        if b.get("scenario") in left and b.get("status") == "kept":
            b["status"] = "lost"
            b["why"] = "the sitting stopped before the scenario's boots were written"
    rec.setdefault("resumed", []).append(
        {"at": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
         "left": left})
    _save(sitting, rec)
    return left


def record_boot(sitting: Path, scenario: str, entry: dict) -> None:
    """Add one boot of ``scenario`` (its rep, start and end times, kept or aborted and why) to
    the sitting's record; a sitting being booted is not complete until :func:`finish`."""
    rec = _record(sitting)
    rec["complete"] = False
    rec["boots"].append({"scenario": scenario} | entry)
    _save(sitting, rec)


def finish(sitting: Path, root: Path, reps: int) -> list[str]:
    """Mark the sitting complete when every scenario due in it has ``reps`` kept boots; the
    reasons it is not, otherwise (it stays partial, and the reference stays the latest complete
    sitting)."""
    rec = _record(sitting)
    rec.setdefault("scenarios", due(sitting, root))
    why = [f"{name}: no kept boots" for name in missing(sitting, root)]
    for name in due(sitting, root):
        kept = sitting / "real" / f"{name}.json"
        if kept.is_file():
            n = len(json.loads(kept.read_text()).get("reps", []))
            if n < reps:
                why.append(f"{name}: {n} of {reps} boots kept")
    rec["complete"] = not why
    rec["incomplete_because"] = why
    _save(sitting, rec)
    return why
