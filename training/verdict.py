"""Does a candidate voice beat the shipped one on all three of issue 21's measures? The rule a checkpoint ships by.

usage: python3 training/verdict.py --base MEASURES... --candidate MEASURES...
           [--confirm-base MEASURES... --confirm-candidate MEASURES...]

Each MEASURES is the `measures` file that `training/quality.sh VOICE.onnx OUTDIR` leaves in OUTDIR, one synthesis a
line ("WER P808 OVRL TONE"); several files of one voice (two REPEAT runs of the same day) are pooled. Prints each side's
means over its syntheses, the differences, and whether each difference is larger than twice its standard error
(the syntheses' own spread: the voice's noise scales make each one differ). The candidate beats the base if its
mean WER and tone are lower and its mean P.808 higher; OVRL is shown but not judged.

That noise is the syntheses', not the sentences': a checkpoint can win on one set of 30 sentences by what it
happens to do to them. So a voice ships only if it also wins on a second set of another kind, the confirmation
sentences (`TEXTS=training/confirm_sentences.txt quality.sh`, long LJ050 prose), given as --confirm-base and
--confirm-candidate; without them the table is a triage and the exit status is 1 even for a win.
Exit status: 0 it beats the base on both sets, 1 it does not (or only one set was given), 2 bad input."""
import argparse
import math
import sys

MEASURES = [  # name, column, +1 if higher is better, judged
    ("WER %", 0, -1, True),
    ("DNSMOS P.808", 1, +1, True),
    ("OVRL", 2, +1, False),
    ("tone dB", 3, -1, True),
]


def fail(msg):
    print(f"verdict.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read(paths):
    rows = []
    for p in paths:
        try:
            lines = open(p).read().splitlines()
        except OSError as e:
            fail(e)
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                values = [float(v) for v in line.split()]
            except ValueError:
                values = []
            if len(values) != 4:
                fail(f"{p}:{n}: want 4 numbers (WER P808 OVRL TONE), got {line!r}")
            rows.append(values)
    if not rows:
        fail(f"no syntheses in {' '.join(paths)}")
    return rows


def stats(rows, col):
    v = [r[col] for r in rows]
    m = sum(v) / len(v)
    var = sum((x - m) ** 2 for x in v) / (len(v) - 1) if len(v) > 1 else 0.0
    return m, var / len(v)


def compare(title, base, cand):
    """Print one set's table; True if the candidate beats the base on every judged measure."""
    print(f"{title}\n")
    print(f"| measure | base (N={len(base)}) | candidate (N={len(cand)}) | difference | beyond noise |")
    print("|---|---|---|---|---|")
    beats = True
    for name, col, sign, judged in MEASURES:
        (mb, seb), (mc, sec) = stats(base, col), stats(cand, col)
        diff = mc - mb
        better = sign * diff > 0
        if judged and not better:
            beats = False
        noise = 2 * math.sqrt(seb + sec)
        mark = "yes" if abs(diff) > noise else "no"
        verdict = ("better" if better else "not better") if judged else "not judged"
        print(f"| {name} | {mb:.2f} | {mc:.2f} | {diff:+.3f} ({verdict}) | {mark} (2 SE {noise:.2f}) |")
    print()
    return beats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", nargs="+", required=True, help="measures file(s) of the shipped voice")
    ap.add_argument("--candidate", nargs="+", required=True, help="measures file(s) of the voice to judge")
    ap.add_argument("--confirm-base", nargs="+", help="the shipped voice's measures on the confirmation sentences")
    ap.add_argument("--confirm-candidate", nargs="+", help="the candidate's measures on the confirmation sentences")
    a = ap.parse_args()
    if (a.confirm_base is None) != (a.confirm_candidate is None):
        fail("--confirm-base and --confirm-candidate go together")
    sets = [("evaluation sentences", read(a.base), read(a.candidate))]
    if a.confirm_base is not None:  # read before printing, so that bad input stops before any table
        sets.append(("confirmation sentences", read(a.confirm_base), read(a.confirm_candidate)))
    beats = compare(*sets[0])
    if len(sets) == 1:
        outcome = "beats" if beats else "does not beat"
        print(f"verdict: the candidate {outcome} the base on all three on the evaluation sentences; "
              "without the confirmation sentences it does not ship")
        return 1
    confirmed = compare(*sets[1])
    if beats and confirmed:
        print("verdict: the candidate beats the base on all three, on both sets")
        return 0
    lost = [name for name, won in (("the evaluation", beats), ("the confirmation", confirmed)) if not won]
    print(f"verdict: the candidate does not beat the base on all three on {' and '.join(lost)} sentences")
    return 1


if __name__ == "__main__":
    sys.exit(main())
