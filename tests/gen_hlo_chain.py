#!/usr/bin/env python3
"""Writes an HLO module (issue 42, item 15): a chain of N elementwise ops,
x1 = negate(x0), x2 = negate(x1), ..., each x_i also read by one other
elementwise op y_i = exp(x_i); the ROOT is the last x.  Every x_i has two
fusible users, so priority fusion's duplication computes it again in each;
duplicating a producer that reads duplicated producers was quadratic in N.

    gen_hlo_chain.py N > chain.hlo
"""
import sys


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    n = int(argv[1])
    out = ["HloModule chain_%d, is_scheduled=true" % n, "", "ENTRY e {",
           "  x0 = f32[1024] parameter(0)"]
    for i in range(1, n + 1):
        out.append("  x%d = f32[1024] negate(x%d)" % (i, i - 1))
        out.append("  y%d = f32[1024] exponential(x%d)" % (i, i))
    out.append("  ROOT r = f32[1024] negate(x%d)" % n)
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
