#!/usr/bin/python3
"""Checks that no profile is fitted to a figure we claim to predict.

For every profile (`smmu-vp profile list`, `smmu-vp profile show NAME --json`),
every "fitted" provenance entry's "to" ids must be figures of
docs/figures.json marked "fit", its micro-figures, or ids the entry defines in
"own_figures" with a source. Exit status: 0 when every profile keeps the rule,
2 naming the profile file and key of each entry that does not (or on bad
input).

  /usr/bin/python3 scripts/check-provenance.py [--cli build/smmu-vp] [--figures docs/figures.json]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from repro import provenance  # noqa: E402
from repro.common import ROOT, InputError  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "smmu-vp"), help="the smmu-vp binary")
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures.json"), help="figure definitions")
    args = ap.parse_args(argv)
    try:
        names = provenance.profile_names(args.cli)
        provenance.check(args.cli, args.figures)
    except InputError as e:
        for line in str(e).splitlines():
            print(f"check-provenance: {line}", file=sys.stderr)
        return 2
    print(f"check-provenance: {len(names)} profile(s); every fitted value names fit figures or micro-figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
