"""The direction of each effect a seed claims (a figure's optional "direction").

A band says how close a figure came; a direction says whether the model moves
the way the seed did at all. A figure's "direction" is
  {"against": N or FIGURE_ID, "seed": "above" or "below", "claim": TEXT}:
the seed's value lies above (or below) the reference: a number in the figure's
unit (1 for a speed-up, 0 for a gain, 100 for a share of passthrough) or
another figure, whose published value is the seed's reference and whose
measured value is the model's. The model's value then goes:
  same        on the seed's side of its reference,
  wrong       on the other side,
  no effect   within the file's "no_effect_share" of the seed's distance from
              its reference (exactly on it when the seed gave no number).
"""
import math

from .common import InputError

SIDES = ("above", "below")
VERDICTS = ("same", "wrong", "no effect")
DEFAULT_NO_EFFECT_SHARE = 0.05


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def no_effect_share(figs):
    """The file's share of the seed's distance within which the model shows no effect."""
    return float(figs.get("no_effect_share", DEFAULT_NO_EFFECT_SHARE))


def check(data, path):
    """The no-effect share and every figure's direction, once all figures are known."""
    share = data.get("no_effect_share", DEFAULT_NO_EFFECT_SHARE)
    if not is_number(share) or not 0 <= share < 1:
        raise InputError(f"{path}: 'no_effect_share' must be a number from 0 to below 1 (got {share!r})")
    by_id = {f["id"]: f for f in data["figures"]}
    for i, fig in enumerate(data["figures"]):
        if "direction" in fig:
            check_one(fig, by_id, f"{path}: figures.{i} ({fig['id']}): direction")


def check_one(fig, by_id, where):
    d = fig["direction"]
    if not isinstance(d, dict):
        raise InputError(f"{where}: expected an object {{\"against\", \"seed\", \"claim\"}}")
    if not isinstance(d.get("claim"), str) or not d["claim"].strip():
        raise InputError(f"{where}: no field 'claim' (a non-empty string: the effect the seed reports)")
    if d.get("seed") not in SIDES:
        raise InputError(f"{where}: 'seed' must be \"above\" or \"below\" (got {d.get('seed')!r})")
    against = d.get("against")
    if isinstance(against, str):
        other = by_id.get(against)
        if other is None or other is fig:
            raise InputError(f"{where}: 'against' names no other figure ('{against}')")
        if other["unit"] != fig["unit"]:
            raise InputError(f"{where}: 'against' figure '{against}' is in {other['unit']}, this one in {fig['unit']}")
    elif not is_number(against):
        raise InputError(f"{where}: 'against' must be a number or a figure id (got {against!r})")
    published, reference = fig.get("published"), published_reference(d, by_id)
    if is_number(published) and reference is not None and side(published, reference) != d["seed"]:
        raise InputError(f"{where}: the published {published:g} is not {d['seed']} its reference {reference:g}")


def published_reference(d, by_id):
    """The seed's reference value: the number, or the other figure's published value (None if it has none)."""
    against = d["against"]
    if isinstance(against, str):
        value = by_id[against].get("published")
        return value if is_number(value) else None
    return against


def side(value, reference):
    if value > reference:
        return "above"
    return "below" if value < reference else "on"


def verdict(fig, values, by_id, share):
    """(verdict, the model's distance from its reference) or None without a direction or a value."""
    d = fig.get("direction")
    if d is None:
        return None
    against = d["against"]
    if isinstance(against, str) and against not in by_id:
        return None  # its reference figure was left out (--only)
    model_ref = values.get(against) if isinstance(against, str) else against
    value = values.get(fig["id"])
    if not finite(value) or not finite(model_ref):
        return None
    effect = value - model_ref
    published, seed_ref = fig.get("published"), published_reference(d, by_id)
    tolerance = share * abs(published - seed_ref) if is_number(published) and seed_ref is not None else 0.0
    if abs(effect) <= tolerance:
        return "no effect", effect
    return ("same" if side(value, model_ref) == d["seed"] else "wrong"), effect


def finite(x):
    return x is not None and is_number(x) and not math.isnan(x)


def verdicts(figs, values):
    """{figure id: (verdict, effect)} for every figure with a direction and a measured value."""
    by_id = {f["id"]: f for f in figs["figures"]}
    share = no_effect_share(figs)
    out = {}
    for fig in figs["figures"]:
        v = verdict(fig, values, by_id, share)
        if v is not None:
            out[fig["id"]] = v
    return out


def counts(figs, values):
    """The direction line of make reproduce: how many claimed effects go the seed's way, and which do not."""
    found = verdicts(figs, values)
    claimed = [f["id"] for f in figs["figures"] if "direction" in f]
    by_verdict = {k: [fid for fid in claimed if found.get(fid, (None,))[0] == k] for k in VERDICTS}
    unmeasured = [fid for fid in claimed if fid not in found]
    text = (f"direction: {len(by_verdict['same'])} of {len(claimed)} effects the seeds report go their way; "
            f"wrong way: {names(by_verdict['wrong'])}; no effect in the model: {names(by_verdict['no effect'])}")
    if unmeasured:
        text += f"; not measured: {names(unmeasured)}"
    return text


def names(ids):
    return ", ".join(f"`{i}`" for i in ids) or "none"
