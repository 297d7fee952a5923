#!/usr/bin/env python3
"""Prints the medians criterion saved for the `capture` bench (target/criterion/*/*/new/estimates.json),
with capture/floor ratios and the targets of BENCHMARKS.md. Usage: medians.py [TARGET_DIR]"""
import json
import os
import sys

root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "target", "criterion")


def median_ms(group, bench):
    path = os.path.join(root, group, bench, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e6
    except OSError:
        return None


targets = {"1KiB": None, "64KiB": 3.0, "1MiB": 1.5, "32MiB": 1.3}
print(f"{'size':>6} {'capture ms':>11} {'floor ms':>9} {'ratio':>6} {'target':>7}  met")
for size, target in targets.items():
    c, f = median_ms(f"capture_{size}", "capture"), median_ms(f"capture_{size}", "floor")
    if c is None or f is None:
        print(f"{size:>6}  (not run)")
        continue
    ratio = c / f
    t = f"{target:.1f}x" if target else "-"
    met = "-" if target is None else ("yes" if ratio <= target else "NO")
    print(f"{size:>6} {c:>11.3f} {f:>9.3f} {ratio:>5.2f}x {t:>7}  {met}")
for group, bench, target in [
    ("resume", "open_list_100x10", 10.0),
    ("fsync", "new_1_byte_file", None),
    ("fsync", "dir_after_create", None),
]:
    m = median_ms(group, bench)
    if m is not None:
        extra = f"  (target <= {target:.0f} ms: {'yes' if m <= target else 'NO'})" if target else ""
        print(f"{group}/{bench}: {m:.3f} ms{extra}")
