"""The algorithm's effect (validate/effect.py): the guest's MGLRU / two-list ratio beside the
model's, judged only where the guest's change is out of the band and resolved by the boots."""

from __future__ import annotations

import json
import math

from reclaimlab.validate import effect, report
from reclaimlab.validate.compare import Comparison
from reclaimlab.validate.rows import make_row


def _cmp(name: str, lru: str, rows: dict[str, tuple[list[float], list[float]]]) -> Comparison:
    return Comparison(name, 5, 5, {}, [make_row(k, r, s, 5.0) for k, (r, s) in rows.items()],
                      [], [], lru=lru)


TIGHT = [99.0, 100.0, 101.0, 100.0, 100.0]


def _x(values: list[float], f: float) -> list[float]:
    return [v * f for v in values]


def test_a_change_out_of_the_band_and_resolved_is_judged_by_direction_and_size():
    classic = _cmp("s", "classic", {
        "pswpout": (TIGHT, _x(TIGHT, 2.0)),
        "pgsteal_direct": (TIGHT, _x(TIGHT, 3.0)),
        "pgscan_kswapd": (TIGHT, TIGHT),
        "pgfault": (TIGHT, TIGHT),
    })
    mglru = _cmp("s", "mglru", {
        # The guest's switch halved it, the model's halved it too: same way, within.
        "pswpout": (_x(TIGHT, 0.5), _x(TIGHT, 1.0)),
        # The guest's doubled it, the model's fell: opposite.
        "pgsteal_direct": (_x(TIGHT, 2.0), _x(TIGHT, 2.4)),
        # The guest's tripled it, the model's rose 1.5 times: same way, out of range.
        "pgscan_kswapd": (_x(TIGHT, 3.0), _x(TIGHT, 1.5)),
        # The guest's moved by 10 %: inside the band, not judged.
        "pgfault": (_x(TIGHT, 1.1), _x(TIGHT, 5.0)),
    })
    es = {e.counter: e for e in effect.effects([classic], [mglru])}
    assert math.isclose(es["pswpout"].real_ratio, 0.5)
    assert math.isclose(es["pswpout"].sim_ratio, 0.5)
    assert es["pswpout"].judged and es["pswpout"].same_way and es["pswpout"].within
    assert math.isclose(es["pgsteal_direct"].sim_ratio, 0.8)
    assert es["pgsteal_direct"].judged and not es["pgsteal_direct"].same_way
    assert not es["pgsteal_direct"].within
    assert es["pgscan_kswapd"].same_way and not es["pgscan_kswapd"].within
    assert not es["pgfault"].judged
    s = effect.score(list(es.values()))
    assert (s["compared"], s["judged"], s["same_way"], s["within"]) == (4, 3, 2, 1)
    assert s["timing_sensitive"]["judged"] == 1  # pgsteal_direct
    text = effect.table(list(es.values()))
    assert "| s " in text and "OPPOSITE" in text and "pgfault" not in text
    assert "moved 3 out of [0.8, 1.25]" in text and "2 of them the same way, 1 by a ratio" in text


def test_a_change_the_boots_do_not_resolve_is_not_judged():
    noisy_c = [50.0, 150.0, 60.0, 140.0, 100.0]
    noisy_m = [90.0, 200.0, 110.0, 190.0, 160.0]  # mean 1.5 times, intervals overlapping
    classic = _cmp("s", "classic", {"pswpin": (noisy_c, noisy_c)})
    mglru = _cmp("s", "mglru", {"pswpin": (noisy_m, noisy_c)})
    (e,) = effect.effects([classic], [mglru])
    assert math.isclose(e.real_ratio, 1.5) and not e.judged
    assert effect.score([e])["judged"] == 0


def test_only_counters_scored_under_both_and_scenarios_sat_under_both_are_compared():
    classic = _cmp("a", "classic", {"pswpout": (TIGHT, TIGHT), "pswpin": ([0.0] * 5, TIGHT)})
    mglru = [_cmp("a", "mglru", {"pswpout": (_x(TIGHT, 2), TIGHT), "pswpin": (TIGHT, TIGHT)}),
             _cmp("b", "mglru", {"pswpout": (TIGHT, TIGHT)})]
    es = effect.effects([classic], mglru)
    # pswpin's two-list mean is 0 (a miss when the model moved it): no ratio to take.
    assert [(e.scenario, e.counter) for e in es] == [("a", "pswpout")]
    # The model never moved it under the two lists: an infinite ratio, never within.
    classic0 = _cmp("a", "classic", {"pswpout": (TIGHT, [0.0] * 5)})
    (e,) = effect.effects([classic0], mglru[:1])
    assert math.isinf(e.sim_ratio) and e.same_way and not e.within
    assert e.as_json()["sim_ratio"] is None and json.dumps(e.as_json())


def test_the_mglru_doc_part_and_json_carry_the_effect(tmp_path):
    classic = _cmp("s", "classic", {"pswpout": (TIGHT, TIGHT)})
    mglru = _cmp("s", "mglru", {"pswpout": (_x(TIGHT, 0.5), _x(TIGHT, 0.6))})
    es = effect.effects([classic], [mglru])
    body = report.doc_body([mglru], lru="mglru", effects=es)
    assert "The algorithm's effect: of 1 counters" in body and "| s " in body
    doc = json.loads(report.as_json([mglru], effects=es))
    assert doc["effect"]["score"]["within"] == 1
    assert doc["effect"]["counters"][0]["real_ratio"] == 0.5
    # The two-list run has no effect section.
    assert "effect" not in json.loads(report.as_json([classic]))
