# Writes a kernel calling a chain of N helpers, each calling the previous one:
#   python3 chain.py N [reverse] [deep]
# reverse: the helpers are defined from the last to the first (each one's
# callee comes later in the file); deep: each call sits inside a 200-deep
# expression.
import sys
n = int(sys.argv[1])
reverse = "reverse" in sys.argv[2:]
deep = "deep" in sys.argv[2:]
def call(i, arg="x"):
    inner = "f%d(%s)" % (i, arg)
    if deep:
        inner = "(%s - %s + " % (arg, arg) * 200 + inner + ")" * 200
    return inner
helpers = ["int f0(int x) { return x + 1; }"]
for i in range(1, n):
    helpers.append("int f%d(int x) { return %s + 1; }" % (i, call(i - 1)))
if reverse:
    helpers.reverse()
print("\n".join(helpers))
print("__global__ void k(int *c) { *c = %s; }" % call(n - 1, "0"))
