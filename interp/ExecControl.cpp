// Structured control flow (for, if, while and their terminators) and the
// debugging ops (print, assert, debug_barrier).
#include "interp/Interpreter.h"

#include "interp/ExecElem.h"

namespace tc::interp {

namespace {

/// Traps undefined_value if the scalar in `slot` is poison.
bool checkDefined(Frame &f, const Instr &in, uint32_t slot, const char *what) {
  if (!f.get(slot)->isPoison(0))
    return true;
  unsigned k = 0;
  while (k < in.in.size() && in.in[k] != slot)
    ++k;
  return failUndefined(f, in, -1, std::string(what) + " is undefined", k);
}

/// Assigns the values in `from` (slots) to the slots `to`, through a copy so
/// that a terminator may pass a region's own arguments in another order.
void forward(Frame &f, const std::vector<uint32_t> &from, size_t skip,
             const std::vector<uint32_t> &to) {
  std::vector<Tile> vals;
  vals.reserve(from.size() - skip);
  for (size_t i = skip; i < from.size(); ++i)
    vals.push_back(f.get(from[i]));
  for (size_t i = 0; i < vals.size(); ++i)
    f.set(to[i], std::move(vals[i]));
}

bool noop(Frame &, const Instr &) {
  return true;
}

/// Returns false for a program stopped inside `loop`; when the step limit or
/// Ctrl-C stopped it, first notes which iteration (1-based) the loop was in,
/// innermost loop first.
bool stoppedInLoop(Frame &f, const Instr &loop, uint64_t iteration, const std::string &extra) {
  if (!f.trap || f.trap->kind != TrapKind::StepLimit)
    return false;
  Trap::Note n;
  ir::Location loc = loop.op->loc();
  const ir::Module &m = f.launch.kernel.module();
  if (loc.line != 0 && loc.file < m.files.size()) {
    n.file = m.files[loc.file];
    n.line = loc.line;
    n.col = loc.col;
    n.sourceLine = f.launch.kernel.sourceLine(loc.file, loc.line);
  }
  n.text = "in iteration " + std::to_string(iteration) + " of this loop" + extra;
  f.trap->notes.push_back(std::move(n));
  return false;
}

/// for (lb, ub, step, inits...) body(iv, iters...): iv runs lb, lb + step, ...
/// while iv < ub, computed without wrap-around (so the loop ends when the next
/// iv would pass ub). A step <= 0 with lb < ub never ends (the step limit ends it).
bool runFor(Frame &f, const Instr &in) {
  static const char *kWhat[] = {"the lower bound of a for loop", "the upper bound of a for loop",
                                "the step of a for loop"};
  for (unsigned i = 0; i < 3; ++i)
    if (!checkDefined(f, in, in.in[i], kWhat[i]))
      return false;
  DType t = in.dtype;
  __int128 lb = scalarInt(*f.get(in.in[0]), t), ub = scalarInt(*f.get(in.in[1]), t),
           step = scalarInt(*f.get(in.in[2]), t);
  const PBlock &body = in.regions[0];
  std::vector<uint32_t> iters(body.args.begin() + 1, body.args.end());
  forward(f, in.in, 3, iters);
  uint64_t iteration = 0;
  for (__int128 iv = lb; iv < ub; iv += step) {
    f.set(body.args[0], makeScalarInt(t, iv));
    ++iteration;
    if (!runBlock(f, body))
      return stoppedInLoop(f, in, iteration,
                           " (its counter is " +
                               (iv > INT64_MAX ? std::to_string(static_cast<uint64_t>(iv))
                                               : std::to_string(static_cast<int64_t>(iv))) +
                               ")");
    forward(f, body.ops.back().in, 0, iters);
  }
  forward(f, iters, 0, in.out);
  return true;
}

bool runIf(Frame &f, const Instr &in) {
  if (!checkDefined(f, in, in.in[0], "the condition of an if"))
    return false;
  const PBlock &b = in.regions[f.get(in.in[0])->as<uint8_t>()[0] ? 0 : 1];
  if (!runBlock(f, b))
    return false;
  forward(f, b.ops.back().in, 0, in.out);
  return true;
}

/// while (inits) before(args) -> condition(c, fwd...); after(fwd) -> yield(args).
bool runWhile(Frame &f, const Instr &in) {
  const PBlock &before = in.regions[0], &after = in.regions[1];
  forward(f, in.in, 0, before.args);
  for (uint64_t iteration = 1;; ++iteration) {
    if (!runBlock(f, before))
      return stoppedInLoop(f, in, iteration, "");
    const Instr &cond = before.ops.back();
    if (!checkDefined(f, cond, cond.in[0], "the condition of a loop"))
      return false;
    if (!f.get(cond.in[0])->as<uint8_t>()[0]) {
      forward(f, cond.in, 1, in.out);
      return true;
    }
    forward(f, cond.in, 1, after.args);
    if (!runBlock(f, after))
      return stoppedInLoop(f, in, iteration, "");
    forward(f, after.ops.back().in, 0, before.args);
  }
}

/// print <label> (values...): one line `[program (x, y, z)] label: v0, v1`.
/// Undefined lanes (masked off) print as `--`, followed by how many there are:
/// printing is how people look at a masked tile, so it never traps.
bool runPrint(Frame &f, const Instr &in) {
  std::string s = programPrefix(f) + in.label;
  for (size_t i = 0; i < in.in.size(); ++i) {
    const TileData &t = *f.get(in.in[i]);
    const ir::Type &type = in.op->operand(static_cast<unsigned>(i))->type();
    s += (i ? ", " : ": ") + formatValue(t, type);
    if (t.hasPoison()) {
      int64_t k = 0;
      for (int64_t j = 0; j < t.size(); ++j)
        k += t.isPoison(j);
      s += type.isScalar() ? " (undefined: masked off)"
                           : " (" + std::to_string(k) + " of " + std::to_string(t.size()) +
                                 " lanes undefined: masked off)";
    }
  }
  f.write(s + "\n");
  return true;
}

/// assert <message> (cond): the first lane, in row-major order, that is false
/// (assertion_failed) or poison (undefined_value) traps.
bool runAssert(Frame &f, const Instr &in) {
  const TileData &c = *f.get(in.in[0]);
  const uint8_t *v = c.as<uint8_t>();
  for (int64_t i = 0; i < c.size(); ++i) {
    if (c.isPoison(i))
      return failUndefined(f, in, i, "the condition of an assert is undefined" + atLane(in, i), 0);
    if (!v[i])
      return f.fail(TrapKind::AssertionFailed, in, i,
                    in.label + (in.scalar
                                    ? std::string()
                                    : " (" + laneText(mainType(*in.op).shape, i) + " is false)"));
  }
  return true;
}

} // namespace

bool prepareControlOp(const ir::Op &op, Instr &in, std::string &error) {
  ir::OpKind k = op.kind();
  if (k == ir::OpKind::For) {
    in.dtype = op.operand(0)->type().dtype;
    in.run = runFor;
  } else if (k == ir::OpKind::If) {
    in.run = runIf;
  } else if (k == ir::OpKind::While) {
    in.run = runWhile;
  } else if (k == ir::OpKind::Yield || k == ir::OpKind::Condition || k == ir::OpKind::Return) {
    in.run = noop; // the enclosing op reads the operands
  } else {
    error = "not a control-flow op: " + std::string(op.name());
    return false;
  }
  return true;
}

bool prepareDebugOp(const ir::Op &op, Instr &in, std::string &error) {
  auto str = [&](const char *name) {
    const ir::AttrValue *v = op.attr(name);
    return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : std::string();
  };
  ir::OpKind k = op.kind();
  if (k == ir::OpKind::Print) {
    in.label = str("label");
    in.run = runPrint;
  } else if (k == ir::OpKind::Assert) {
    in.label = str("message");
    in.run = runAssert;
  } else if (k == ir::OpKind::DebugBarrier) {
    in.run = noop; // programs share nothing a barrier would order
  } else {
    error = "not a debugging op: " + std::string(op.name());
    return false;
  }
  return true;
}

} // namespace tc::interp
