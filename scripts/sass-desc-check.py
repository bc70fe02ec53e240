#!/usr/bin/env python3
"""Checks, in a cubin's SASS, that every wgmma (HGMMA) reads matrix descriptors whose high
words (stride and swizzle mode) some instruction wrote.

ptxas 13.0 lost the high word of a descriptor summed in 64 bits with `mul.wide.u32`
(docs/upstream/ptxas-wgmma-desc-hi.md): the HGMMA then read an unwritten uniform register.
For each `HGMMA ... gdesc[URn]` the high words UR(n+1) (a, when a comes from a descriptor)
and UR(n+3) (b) are traced back through the straight-line code before it: through copies
(`UMOV URx, URy`) and 64-bit adds (`UIADD3.64 URd, URs, imm`, whose high word is URs+1's)
to a constant or a computation. No writer, or a `UIMAD.WIDE` (the bug's form), is bad.
Control flow is not followed (a backwards scan), so this is a check of the straight-line
forms the backend emits, not a proof.

    cuobjdump -sass kernel.cubin > kernel.sass
    scripts/sass-desc-check.py kernel.sass          # prints "kernel.sass: 12 high words checked, 0 bad"

Exit status: 0 all written, 1 some bad (each printed), 2 no HGMMA at all or a bad file.
"""
import re
import sys


def parse(text):
    text = re.sub(r'^@!?U?P\w+\s+', '', text)
    parts = text.split(None, 1)
    if len(parts) < 2:
        return None, []
    return parts[0], [a.strip() for a in parts[1].split(',')]


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__.strip().splitlines()[0] + "\nusage: sass-desc-check.py FILE.sass [-v]",
              file=sys.stderr)
        return 2
    path, verbose = argv[1], '-v' in argv[2:]
    try:
        with open(path, errors='replace') as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"sass-desc-check: error: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    ins = []
    for line in lines:
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;', line)
        if m:
            ins.append(m.group(2))

    def writer(i, r):
        for j in range(i - 1, -1, -1):
            op, args = parse(ins[j])
            if not args:
                continue
            m = re.match(r'UR(\d+)$', args[0])
            if not m:
                continue
            d = int(m.group(1))
            wide = '.64' in op or 'WIDE' in op
            if d == r or (wide and d + 1 == r):
                return j, op, args, d
        return None

    def written(i, r, depth=0):
        if depth > 32:
            return False, f'UR{r}: chain too long'
        w = writer(i, r)
        if w is None:
            return False, f'UR{r} never written'
        j, op, args, d = w
        if 'IMAD.WIDE' in op:
            return False, ins[j]
        if op.startswith('UMOV') and re.match(r'UR(\d+)$', args[1]):
            return written(j, int(args[1][2:]), depth + 1)
        if op.startswith('UIADD3.64') and d + 1 == r:
            m = re.match(r'UR(\d+)$', args[1])
            if m:
                return written(j, int(m.group(1)) + 1, depth + 1)
        return True, ins[j]

    checked = bad = 0
    for i, text in enumerate(ins):
        m = re.search(r'HGMMA\S*\s+R\d+,\s*(R\d+,\s*)?gdesc\[UR(\d+)\]', text)
        if not m:
            continue
        base = int(m.group(2))
        for high in ([base + 3] if m.group(1) else [base + 1, base + 3]):
            checked += 1
            good, why = written(i, high)
            bad += not good
            if not good or verbose:
                print(f"{'ok' if good else 'BAD'}: {text} | UR{high}: {why}")
    print(f"{path}: {checked} high words checked, {bad} bad")
    if not checked:
        print("sass-desc-check: error: no HGMMA with a descriptor in the SASS", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
