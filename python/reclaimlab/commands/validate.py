"""``reclaimlab validate SCENARIO...``: the same workload on a real Debian 6.1 kernel (kept
results, or fresh boots with ``--boot``) beside the simulator on the guest's zone layout. The
harness and the comparison are in :mod:`reclaimlab.validate`."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from ..api import ScenarioError
from ..validate import (
    balloon, balloon_compare, calibrate, compare, course, effect, profile, report, sittings, spec,
    store,
)
from ..validate.errors import ValidateError
from ..validate.guest import DEFAULT_TIMEOUT_S
from ._common import CliError, key_value, positive_int

NAME = "validate"
HELP = "compare a scenario on a real 6.1 kernel (QEMU guest) with the simulator"
DESCRIPTION = (
    "Compare the real kernel's vmstat deltas for a scenario (kept in a sitting's real/, or "
    "measured now with --boot in a QEMU guest running Debian's 6.1 kernel) with the simulator's "
    "counters for seeds 1..N on the guest's zone layout: means, spreads (coefficient of "
    "variation), ratio sim/real flagged outside [0.8, 1.25], and a score. The calibration "
    "(validation/calibrate/) and prediction (validation/predict/) scenarios take the guest "
    "profile's costs; the prediction score is the headline, beside its timing-sensitive "
    "subset, the baseline with no costs, and the calibration score (docs/VALIDATION.md, "
    "\"Protocol\"). With --balloon: "
    "a guest with a virtio-balloon device frees memory; the memory its QEMU process gives back "
    "to the host and how fast (free page reporting, D4, and without it, D1), real beside "
    "simulated."
)
VALIDATION_DIR = Path("validation")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="validation scenario files")
    p.add_argument("--all", action="store_true",
                   help=f"every scenario of {VALIDATION_DIR}/calibrate/ and {VALIDATION_DIR}/predict/")
    p.add_argument(
        "--profile", metavar="FILE|none",
        help="the guest profile merged into each scenario before simulating (default: "
        f"{profile.default_path(VALIDATION_DIR)} for calibration and prediction scenarios, "
        "none for a scenario with its own [cost]); `none`: no costs at all",
    )
    p.add_argument(
        "--speed", metavar="auto|FACTOR",
        help="scale every time of the profile by the sitting's speed factor: FACTOR, or `auto`, "
        "the geometric mean over the calibration scenarios of their mean run length in the "
        "sitting over that in the profile's own sitting (default: 1, the profile's pace)",
    )
    p.add_argument(
        "--sitting", metavar="DIR",
        help="the sitting whose kept boots to compare with (DIR/real/; default: the latest "
        f"complete one under {VALIDATION_DIR}/sittings/); with --boot, where to keep them "
        f"(default: {VALIDATION_DIR}/sittings/<today>)",
    )
    p.add_argument(
        "--lru", choices=spec.LRUS, default=None,
        help="run every scenario under this page-replacement algorithm, guest and model alike, "
        "whatever its [policy] lru says: `mglru` is the protocol's second run (kept in the "
        "latest complete sitting under it; with --boot, in <today>-mglru)",
    )
    p.add_argument(
        "--effect-against", metavar="DIR",
        help="with --lru mglru: the two-list sitting whose boots the algorithm's effect is "
        "taken against (default: the two-list reference); give the two-list sitting of the "
        "MGLRU sitting's own night, so that the two nights' pace does not enter the effect",
    )
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", dest="sim_set",
        help="set a scenario key on the simulator's side alone (repeatable; a dotted key, as "
        "reproduce --set takes: --set fs.log_inodes=100000): a sensitivity sweep's point, "
        "printed with each table; the guest's kept boots are the same",
    )
    p.add_argument(
        "--reps", type=positive_int, default=5, metavar="N",
        help="real boots with --boot, and simulator seeds 1..N (default 5)",
    )
    p.add_argument(
        "--boot", action="store_true",
        help="boot the real guest N times and refresh the kept results (needs QEMU; minutes)",
    )
    p.add_argument(
        "--accel", choices=("auto", "kvm", "tcg"), default="auto",
        help="with --boot: KVM, TCG, or KVM when a probe boot shows it works (default)",
    )
    p.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
        help=f"with --boot: limit for one boot (default {DEFAULT_TIMEOUT_S:.0f})",
    )
    p.add_argument(
        "--format", choices=("table", "markdown", "json"), default="table",
        help="output format (default: table)",
    )
    p.add_argument(
        "--write-doc", metavar="FILE",
        help="also write the summary and every table into FILE between its validate markers",
    )
    p.add_argument(
        "--balloon", action="store_true",
        help="the free page reporting validation (default scenarios: "
        + ", ".join(str(x) for x in balloon.SCENARIOS)
        + "): returned MiB, t_half, t_90 of the kept real boots beside the simulator (seed 1)",
    )
    p.add_argument(
        "--real-only", action="store_true",
        help="with --balloon: the kept real figures only, no simulator run",
    )
    p.add_argument(
        "--sim-out", metavar="DIR",
        help="keep the simulator's side in DIR: each scenario as the simulator runs it beside "
        "the guest, DIR/<scenario>.toml (for `reclaimlab run`); with --balloon, the result "
        "directories, DIR/<scenario>/",
    )
    p.add_argument(
        "--course", action="store_true",
        help="also the course of each run: the guest's state and counters once every 5 s "
        "(sampled by the workload program, boots from 2026-11-30 on) beside the model's time "
        "series, means over boots and seeds (diagnosis, in no score)",
    )


def _scenarios(args: argparse.Namespace) -> list[Path]:
    paths = [Path(s) for s in args.scenarios]
    if args.all:
        found = sittings.scenarios(VALIDATION_DIR)
        if not found:
            raise CliError(f"--all: no {VALIDATION_DIR}/calibrate/*.toml or predict/*.toml here; "
                           "run from the repository root")
        paths += [p for p in found if p not in paths]
    if not paths:
        raise CliError("no scenario: give SCENARIO files or --all")
    return paths


def _write_sim_scenario(out: Path, s: spec.GuestSpec, kept: dict, prof: dict | None) -> None:
    """DIR/<name>.toml: the scenario with the guest's zones, kernel memory and min_free_kbytes
    filled in, as `compare` simulates it."""
    import tomli_w

    path = out / f"{s.name}.toml"
    head = (
        f"# {s.name} as `reclaimlab validate` simulates it beside the kept boots "
        f"({s.path}): the guest's zoneinfo, kernel memory and min_free_kbytes filled in.\n"
    )
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(head + tomli_w.dumps(compare.kept_sim_scenario(s, kept, prof)),
                        encoding="utf-8")
    except OSError as e:
        raise CliError(
            f"--sim-out: cannot write {path}: {e.strerror}; give a writable directory"
        ) from None


def _profile(args: argparse.Namespace, s: spec.GuestSpec) -> dict | None:
    """The profile ``s`` is simulated with: --profile's, or by default the guest profile for a
    calibration or prediction scenario and none for a scenario with its own [cost]."""
    if args.profile == "none":
        return None
    if args.profile:
        prof = profile.load(Path(args.profile))
    elif s.role is not None:
        prof = profile.load(profile.default_path(sittings.validation_root(s.path)))
    else:
        return None
    if not args.speed:
        return prof
    if args.speed == "auto":
        root = sittings.validation_root(s.path) if s.role else VALIDATION_DIR
        factor = calibrate.speed_factor(root, s.real_dir.parent, prof)
    else:
        try:
            factor = float(args.speed)
        except ValueError:
            raise CliError(f"--speed {args.speed!r}: give `auto` or a positive number") from None
        if not factor > 0:
            raise CliError(f"--speed {args.speed!r}: give `auto` or a positive number")
    return profile.scaled(prof, factor, store.CACHE / "speed")


def _sitting(args: argparse.Namespace, path: Path) -> Path | None:
    if args.sitting:
        return Path(args.sitting)
    if args.boot and sittings.role(path) is not None:
        # A new sitting is today's; the reference stays the latest complete one.
        today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        if args.lru not in (None, "classic"):
            today += f"-{args.lru}"
        return sittings.validation_root(path) / "sittings" / today
    return None


def _effect_sitting(args: argparse.Namespace) -> Path | None:
    """The two-list sitting ``--effect-against`` names (None: the two-list reference), checked
    to be one: a directory of kept boots whose guests ran the two lists."""
    if args.effect_against is None:
        return None
    if args.lru != "mglru" or args.boot:
        raise CliError("--effect-against goes with --lru mglru (and not with --boot): it names "
                       "the two-list boots the algorithm's effect is taken against")
    d = Path(args.effect_against)
    if not (d / "real").is_dir():
        raise CliError(f"--effect-against {d}: no kept boots there (no {d / 'real'}); give a "
                       f"two-list sitting, one of {VALIDATION_DIR}/sittings/")
    if sittings.lru_of(d) != "classic":
        raise CliError(f"--effect-against {d}: its guests ran {sittings.lru_of(d)}, not the two "
                       "lists; give the two-list sitting of the same night")
    return d


def _effects(args: argparse.Namespace, paths: list[Path], mglru: list[compare.Comparison],
             sim_set: dict, against: Path | None) -> list[effect.Effect]:
    """The algorithm's effect (validate/effect.py): the same calibration and prediction
    scenarios simulated under the two lists beside the boots of the two-list sitting
    ``against`` (None: the two-list reference), with the same profile rules and seeds, set
    against their MGLRU comparisons. A scenario that sitting has no boots of is left out."""
    classic = []
    for path in paths:
        s = spec.load(path, against, "classic")
        if sittings.role(path) is None or sittings.not_yet_sat(path, s.real_dir.parent) \
                or not (s.real_dir / f"{s.name}.json").is_file():
            continue
        s.sim_set = sim_set
        print(f"{s.name}: simulating seeds 1..{args.reps} under the two lists, for the effect",
              file=sys.stderr, flush=True)
        classic.append(compare.compare(s, store.load(s), args.reps, _profile(args, s)))
    return effect.effects(classic, mglru)


def main(args: argparse.Namespace) -> int:
    if args.balloon:
        return _balloon(args)
    if args.real_only:
        raise CliError("--real-only goes with --balloon")
    comparisons, baseline, not_sat = [], [], []
    sim_set = dict(key_value(t, "--set") for t in args.sim_set)
    if sim_set and args.boot:
        raise CliError("--set changes the simulator's side alone; it cannot go with --boot")
    courses: dict[str, list] = {}
    compared: list[Path] = []
    effects = None
    against = _effect_sitting(args)
    against_name = report.REFERENCE if against is None else \
        f"those of the two-list sitting {against.name}"
    try:
        for path in _scenarios(args):
            s = spec.load(path, _sitting(args, path), args.lru)
            s.sim_set = sim_set
            if args.boot:
                kept = store.boot_and_keep(s, args.reps, args.accel, args.timeout)
            elif sittings.not_yet_sat(path, s.real_dir.parent):
                # Added after the sitting: listed, in no score (docs/VALIDATION.md).
                not_sat.append(s.name)
                continue
            else:
                kept = store.load(s)
            prof = _profile(args, s)
            if args.sim_out:
                _write_sim_scenario(Path(args.sim_out), s, kept, prof)
            print(f"{s.name}: simulating seeds 1..{args.reps}", file=sys.stderr, flush=True)
            comparisons.append(compare.compare(s, kept, args.reps, prof))
            compared.append(path)
            if args.course:
                courses[s.name] = course.course(s, kept, args.reps, prof)
            # The prediction scenarios once more with no costs at all: the baseline.
            if s.role == "prediction" and prof is not None:
                baseline.append(compare.compare(s, kept, args.reps, baseline=True))
        if not comparisons:
            raise ValidateError(
                f"no scenario to compare: {', '.join(not_sat)} not yet sat (no kept boots in "
                "the sitting; `bash scripts/validate-real.sh` boots them)")
        # Under MGLRU, what the switch changed, the guest's beside the model's.
        if args.lru == "mglru" and not args.boot:
            effects = _effects(args, compared, comparisons, sim_set, against)
        if args.write_doc:
            report.write_doc(Path(args.write_doc), comparisons, baseline, not_sat,
                             lru=args.lru or "classic", effects=effects, against=against_name)
    except ValidateError as e:
        raise CliError(str(e), e.exit_code) from None
    if args.format == "json":
        out = report.as_json(comparisons, baseline, not_sat, effects, against_name)
        if args.course:
            doc = json.loads(out)
            doc["courses"] = courses
            out = json.dumps(doc, indent=2) + "\n"
        sys.stdout.write(out)
    else:
        render = report.text if args.format == "table" else report.markdown
        sys.stdout.write("\n".join(render(c) for c in comparisons))
        if len(comparisons) > 1 or baseline or not_sat:
            sys.stdout.write(f"\n{report.overall(comparisons, baseline, not_sat)}\n")
        if effects is not None:
            sys.stdout.write(f"\nThe guest's change is this sitting's boots over {against_name}.\n"
                             + effect.table(effects))
        for name, rows in courses.items():
            sys.stdout.write("\n" + course.text(name, rows))
    return 0


def _balloon(args: argparse.Namespace) -> int:
    if args.all:
        raise CliError("--balloon runs its own scenarios (or the SCENARIO files given); drop --all")
    paths = [Path(x) for x in args.scenarios] or list(balloon.SCENARIOS)
    comparisons = []
    try:
        for path in paths:
            s = balloon.load_spec(path)
            if args.boot:
                timeout = args.timeout if args.timeout != DEFAULT_TIMEOUT_S else None
                kept = balloon.boot_and_keep(s, args.reps, args.accel, timeout)
            else:
                kept = balloon.load_kept(s)
            csv_path = None
            if not args.real_only:
                print(f"{s.name}: simulating", file=sys.stderr, flush=True)
                try:
                    csv_path = balloon_compare.simulate(
                        s, Path(args.sim_out) if args.sim_out else None)
                except ScenarioError as e:
                    raise CliError(
                        f"{e} (the simulator could not run {path}; --real-only shows the kept "
                        "real figures alone)") from None
            comparisons.append(balloon_compare.compare(s, kept, csv_path))
        if args.write_doc:
            report.write_balloon_doc(Path(args.write_doc), comparisons)
    except ValidateError as e:
        raise CliError(str(e), e.exit_code) from None
    if args.format == "json":
        sys.stdout.write(report.balloon_json(comparisons))
    else:
        sys.stdout.write(report.balloon_markdown(comparisons))
    return 0
