// Where an undefined value came from (DESIGN.md section 6): after an
// undefined_value trap, walk back from the undefined operand through the ops
// that carried the poison (their values are still in the program's slots) to
// the masked load that made it, and add one note per source location.
//
// Where a trapping lane's value came from the fallback of `m ? *p : other`:
// after a trap on a lane's value (a division by zero, an assert, ...), walk
// back from the operands that caused it, lane by lane, to a masked load whose
// mask is false at that lane, and say so. Both walks run only after a trap,
// so they cost nothing while the kernel runs.
//
// Which kernel parameters a pointer may be computed from (pointerSources):
// a memory op may reach only their buffers (Instr::from), and the race check
// learns which buffers a kernel may store to. Computed once per kernel.
#include "interp/Interpreter.h"

#include <cstring>
#include <set>
#include <unordered_set>

namespace tc::interp {

namespace {

/// "lane [37]", "lane [1, 5] (flat 37)" (tc::laneText); "" for a 0-d value.
std::string laneOf(const ir::Type &t, int64_t lane) {
  if (t.isScalar() || lane < 0)
    return "";
  return laneText(t.shape, lane);
}

const TileData *valueOf(const Frame &f, const ir::Value *v) {
  const PreparedFunction *p = f.launch.prepared;
  if (!p)
    return nullptr;
  auto it = p->slotOf.find(v);
  if (it == p->slotOf.end())
    return nullptr;
  return f.get(it->second).get();
}

bool poisoned(const Frame &f, const ir::Value *v) {
  const TileData *t = valueOf(f, v);
  return t && t->hasPoison();
}

} // namespace

void explainUndefined(Frame &f, const ir::Value *v, int64_t lane) {
  if (!f.trap)
    return;
  const ir::Module &m = f.launch.kernel.module();
  std::set<std::pair<uint32_t, uint32_t>> seenLines;
  auto note = [&](const ir::Op *op, std::string text) {
    Trap::Note n;
    ir::Location loc = op->loc();
    if (loc.line != 0 && loc.file < m.files.size()) {
      // One note per source line: the ops of one expression share it.
      if (!seenLines.insert({loc.file, loc.line}).second)
        return;
      n.file = m.files[loc.file];
      n.line = loc.line;
      n.col = loc.col;
      n.sourceLine = f.launch.kernel.sourceLine(loc.file, loc.line);
    }
    n.text = std::move(text);
    f.trap->notes.push_back(std::move(n));
  };
  for (int step = 0; step < 64 && v; ++step) {
    const TileData *t = valueOf(f, v);
    if (!t || !t->hasPoison())
      return;
    if (lane < 0 || lane >= t->size() || !t->isPoison(lane))
      lane = t->firstPoison();
    const ir::Op *op = v->definingOp();
    if (!op) { // a block argument: a loop-carried value or a parameter
      const ir::Block *b = v->ownerBlock();
      const ir::Op *parent = b ? b->parentOp() : nullptr;
      if (!parent)
        return;
      const ir::Value *next = nullptr;
      unsigned i = v->index();
      if (parent->kind() == ir::OpKind::For && i >= 1) {
        const ir::Op *yield = b->terminator();
        if (yield && i - 1 < yield->numOperands() && poisoned(f, yield->operand(i - 1)))
          next = yield->operand(i - 1);
        else if (3 + i - 1 < parent->numOperands())
          next = parent->operand(3 + i - 1);
      } else if (parent->kind() == ir::OpKind::While && i < parent->numOperands()) {
        next = parent->operand(i);
      }
      if (!next)
        return;
      note(parent, laneOf(v->type(), lane) + (lane >= 0 && !v->type().isScalar() ? " of " : "") +
                       "a value carried by this loop is undefined");
      v = next;
      continue;
    }
    std::string at = laneOf(v->type(), lane);
    std::string subject = at.empty() ? "the value" : at;
    ir::OpKind k = op->kind();
    if (k == ir::OpKind::Load) {
      note(op, subject + " of this load is masked off (its mask is false there) and the load "
                         "has no `other` value (`m ? *p : other`), so it is undefined");
      return;
    }
    if (k == ir::OpKind::Undef) {
      const ir::AttrValue *var = op->attr("var");
      std::string name = var && std::holds_alternative<std::string>(*var)
                             ? "'" + std::get<std::string>(*var) + "'"
                             : std::string("this tile");
      note(op, subject + " of " + name + " was never assigned: " + name +
                   " is declared here without an initialiser, and no assignment wrote that lane");
      return;
    }
    if (k == ir::OpKind::InsertSlice || k == ir::OpKind::ExtractSlice) {
      // Follow the lane into the tile operand (or, for insert_slice, into the
      // inserted value when the lane lies in the replaced slice).
      const ir::Value *src = op->operand(0);
      const ir::Type &st = src->type();
      int64_t axis = op->intAttr("axis");
      const TileData *it = valueOf(f, op->operand(1));
      int64_t idx = it && !it->hasPoison()
                        ? static_cast<int64_t>(scalarInt(*it, op->operand(1)->type().dtype))
                        : 0;
      int64_t inner = 1;
      for (size_t d = static_cast<size_t>(axis) + 1; d < st.rank(); ++d)
        inner *= st.shape[d];
      int64_t dim = st.shape[static_cast<size_t>(axis)];
      int64_t from = lane;
      if (k == ir::OpKind::ExtractSlice) {
        from = lane < 0 ? -1 : (lane / inner * dim + idx) * inner + lane % inner;
      } else if (lane >= 0 && (lane / inner) % dim == idx) {
        src = op->operand(2);
        from = lane / inner / dim * inner + lane % inner;
      }
      v = src;
      lane = from;
      continue;
    }
    if (k == ir::OpKind::AtomicRMW || k == ir::OpKind::AtomicCas) {
      note(op, subject + " of this atomic's result is masked off, so it is undefined");
      return;
    }
    if (k == ir::OpKind::Reduce) {
      const ir::Value *src = op->operand(0);
      const TileData *s = valueOf(f, src);
      int64_t from = s ? s->firstPoison() : -1;
      note(op, subject + " of this reduction is undefined: it combines " +
                   (from >= 0 && !src->type().isScalar() ? laneOf(src->type(), from)
                                                         : std::string("a lane")) +
                   " of its operand, which is undefined, with the defined lanes (one undefined "
                   "lane spreads to the whole result)");
      v = src;
      lane = from;
      continue;
    }
    if (k == ir::OpKind::If) {
      const ir::Value *next = nullptr;
      for (const auto &r : op->regions())
        if (const ir::Op *y = r->terminator();
            y && v->index() < y->numOperands() && poisoned(f, y->operand(v->index())))
          next = y->operand(v->index());
      if (!next)
        return;
      v = next;
      continue;
    }
    // Every other op: through its first undefined operand.
    const ir::Value *next = nullptr;
    bool sameLane = hasTrait(op->kind(), ir::Elementwise);
    for (const ir::Value *o : op->operands()) {
      const TileData *ot = valueOf(f, o);
      if (!ot || !ot->hasPoison())
        continue;
      if (sameLane && ot->size() == t->size() && ot->isPoison(lane)) {
        next = o;
        break;
      }
      if (!next)
        next = o;
    }
    if (!next)
      return;
    const TileData *nt = valueOf(f, next);
    int64_t from =
        sameLane && nt->size() == t->size() && nt->isPoison(lane) ? lane : nt->firstPoison();
    std::string src = laneOf(next->type(), from);
    note(op, subject + " of `" + std::string(op->name()) + "` here is undefined because " +
                 (src.empty() ? std::string("its operand") : src + " of its operand") +
                 " is undefined");
    v = next;
    lane = from;
  }
}

namespace {

/// A masked-off lane whose value is the fallback of `m ? *p : other`.
struct Fallback {
  const ir::Op *op = nullptr;   // the load (or the select of a widening masked load)
  const ir::Value *v = nullptr; // its result
  int64_t lane = -1;            // the lane of v
  bool direct = true;           // the trap's operand is that value (else computed from it)
};

/// The lane of `operand` that lane `lane` of `result` reads, for ops that
/// read one lane per result lane; -1 when it cannot tell.
int64_t operandLane(const ir::Value &operand, const ir::Value &result, int64_t lane) {
  if (operand.type().isScalar())
    return 0;
  if (operand.type().numElements() == result.type().numElements())
    return lane;
  return -1;
}

/// Lane `lane` of `v` (defined, in this program's slots) walked back to a
/// fallback lane, through elementwise ops, casts, selects, shape ops and ifs.
/// Loop-carried values and reductions end the walk: their slots may hold
/// another iteration's value. `seen` keeps a shared operand from being walked
/// twice (x * x * x ... would otherwise take exponential time).
class FallbackWalk {
public:
  explicit FallbackWalk(const Frame &f) : f_(f) {}
  bool find(const ir::Value *v, int64_t lane, bool direct, int depth, Fallback &out);

private:
  const Frame &f_;
  std::set<std::pair<const ir::Value *, int64_t>> seen_;
};

bool FallbackWalk::find(const ir::Value *v, int64_t lane, bool direct, int depth, Fallback &out) {
  const Frame &f = f_;
  const TileData *t = valueOf(f, v);
  if (depth > 512 || !t || lane < 0 || lane >= t->size() || t->isPoison(lane) ||
      !seen_.insert({v, lane}).second)
    return false;
  const ir::Op *op = v->definingOp();
  if (!op)
    return false;
  auto isFalse = [&](const ir::Value *mask, int64_t l) {
    const TileData *m = valueOf(f, mask);
    int64_t ml = operandLane(*mask, *v, l);
    return m && ml >= 0 && ml < m->size() && !m->isPoison(ml) && !m->as<uint8_t>()[ml];
  };
  switch (op->kind()) {
  case ir::OpKind::Load:
    if (op->numOperands() < 3 || !isFalse(op->operand(1), lane))
      return false;
    out = {op, v, lane, direct};
    return true;
  case ir::OpKind::Select: {
    const ir::Value *cond = op->operand(0);
    if (!isFalse(cond, lane)) {
      int64_t l = operandLane(*op->operand(1), *v, lane);
      return l >= 0 && find(op->operand(1), l, direct, depth + 1, out);
    }
    // `m ? *p : other` with a fallback wider than the pointee lowers to
    // select(m, cast(load(p, m)), other): the select's own lane is the fallback.
    const ir::Value *then = op->operand(1);
    while (then->definingOp() && then->definingOp()->kind() == ir::OpKind::Cast)
      then = then->definingOp()->operand(0);
    const ir::Op *load = then->definingOp();
    if (load && load->kind() == ir::OpKind::Load && load->numOperands() == 2 &&
        load->operand(1) == cond) {
      out = {op, v, lane, direct};
      return true;
    }
    int64_t l = operandLane(*op->operand(2), *v, lane);
    return l >= 0 && find(op->operand(2), l, direct, depth + 1, out);
  }
  case ir::OpKind::Splat: return find(op->operand(0), 0, direct, depth + 1, out);
  case ir::OpKind::ExpandDims:
  case ir::OpKind::Reshape: return find(op->operand(0), lane, direct, depth + 1, out);
  case ir::OpKind::Broadcast: {
    const ir::Shape &to = v->type().shape, &from = op->operand(0)->type().shape;
    if (to.size() != from.size())
      return false;
    int64_t rest = lane, src = 0, stride = 1;
    for (size_t d = to.size(); d-- > 0;) {
      int64_t i = rest % to[d];
      rest /= to[d];
      src += (from[d] == 1 ? 0 : i) * stride;
      stride *= from[d];
    }
    return find(op->operand(0), src, direct, depth + 1, out);
  }
  case ir::OpKind::If: {
    const TileData *c = valueOf(f, op->operand(0));
    if (!c || c->isPoison(0) || op->regions().size() < 2)
      return false;
    const ir::Op *y = op->regions()[c->as<uint8_t>()[0] ? 0 : 1]->terminator();
    if (!y || v->index() >= y->numOperands())
      return false;
    return find(y->operand(v->index()), lane, direct, depth + 1, out);
  }
  default: break;
  }
  if (!hasTrait(op->kind(), ir::Elementwise))
    return false;
  for (const ir::Value *o : op->operands()) {
    int64_t l = operandLane(*o, *v, lane);
    if (l >= 0 && find(o, l, false, depth + 1, out))
      return true;
  }
  return false;
}

/// The source text of the condition of `c ? a : b` whose `?` is at column
/// `col` (1-based) of `line`: back from the `?` to the `=`, `(`, `,`, `;`,
/// `?` or `:` that starts it, brackets balanced; "" when that is not on this line.
std::string conditionText(const std::string &line, uint32_t col) {
  if (col == 0 || col > line.size() || line[col - 1] != '?')
    return "";
  int depth = 0;
  size_t i = col - 1;
  while (i-- > 0) {
    char c = line[i];
    if (c == ')' || c == ']') {
      ++depth;
      continue;
    }
    if (c == '(' || c == '[') {
      if (depth-- == 0)
        break;
      continue;
    }
    if (depth > 0)
      continue;
    bool compare = c == '=' && ((i > 0 && std::strchr("=<>!", line[i - 1])) ||
                                (i + 1 < line.size() && line[i + 1] == '='));
    if ((c == '=' && !compare) || c == ',' || c == ';' || c == '?' || c == ':' || c == '{')
      break;
    if (i == 0)
      return ""; // the condition may begin on an earlier line
  }
  std::string text = line.substr(i + 1, col - 1 - (i + 1));
  size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

/// The operands of `op` whose lane values caused a trap of `kind`.
std::vector<unsigned> culprits(const ir::Op &op, TrapKind kind) {
  switch (op.kind()) {
  case ir::OpKind::Div:
  case ir::OpKind::Rem:
    if (kind == TrapKind::DivisionByZero)
      return {1};
    return {0, 1};
  case ir::OpKind::Shl:
  case ir::OpKind::Shr: return {1};
  case ir::OpKind::Load:
  case ir::OpKind::Store:
  case ir::OpKind::AtomicRMW:
  case ir::OpKind::AtomicCas: return {0}; // the address
  default: break;
  }
  std::vector<unsigned> all;
  for (unsigned i = 0; i < op.numOperands(); ++i)
    all.push_back(i);
  return all;
}

} // namespace

void explainFallback(Frame &f, const Instr &in, int64_t lane) {
  if (!f.trap)
    return;
  switch (f.trap->kind) {
  case TrapKind::OutOfBounds:
  case TrapKind::Misaligned:
  case TrapKind::DivisionByZero:
  case TrapKind::DivisionOverflow:
  case TrapKind::ShiftOutOfRange:
  case TrapKind::FloatToIntOutOfRange:
  case TrapKind::AssertionFailed: break;
  case TrapKind::UndefinedValue:
  case TrapKind::DataRace:
  case TrapKind::StepLimit:
  case TrapKind::InvalidLaunch: return;
  }
  const ir::Op &op = *in.op;
  const ir::Type &main = mainType(op);
  int64_t at = in.scalar ? 0 : lane;
  std::set<std::pair<const ir::Op *, int64_t>> seen;
  for (unsigned i : culprits(op, f.trap->kind)) {
    if (i >= op.numOperands())
      continue;
    const ir::Value *o = op.operand(i);
    int64_t l = o->type().isScalar() ? 0 : o->type().numElements() == main.numElements() ? at : -1;
    Fallback fb;
    if (l < 0 || !FallbackWalk(f).find(o, l, true, 0, fb) || !seen.insert({fb.op, fb.lane}).second)
      continue;
    const TileData &t = *valueOf(f, fb.v);
    std::string value =
        formatElement(fb.v->type().element(), static_cast<const uint8_t *>(t.raw()) +
                                                  static_cast<size_t>(fb.lane) * t.elemSize());
    const std::string &name = fb.v->nameHint();
    const ir::Value *mask = fb.op->operand(fb.op->kind() == ir::OpKind::Select ? 0 : 1);
    ir::Location loc = fb.op->loc();
    const ir::Module &m = f.launch.kernel.module();
    std::string source;
    if (loc.line != 0 && loc.file < m.files.size())
      source = f.launch.kernel.sourceLine(loc.file, loc.line);
    std::string maskText = conditionText(source, loc.col);
    if (maskText.empty())
      maskText = mask->nameHint();
    std::string text = (fb.v->type().isScalar() ? std::string("the value")
                                                : laneText(fb.v->type().shape, fb.lane)) +
                       (name.empty() ? std::string(" of this load") : " of '" + name + "'") +
                       " was masked off here (its mask" +
                       (maskText.empty() ? std::string() : " `" + maskText + "`") +
                       " is false there), so its value " + value +
                       " is the fallback of `m ? *p : other`, not a value loaded from memory" +
                       (fb.direct ? "" : "; the trap's operand is computed from it");
    Trap::Note n;
    if (loc.line != 0 && loc.file < m.files.size()) {
      n.file = m.files[loc.file];
      n.line = loc.line;
      n.col = loc.col;
      n.sourceLine = source;
    }
    n.text = std::move(text);
    f.trap->notes.push_back(std::move(n));
  }
}

bool failUndefined(Frame &f, const Instr &in, int64_t lane, std::string message, unsigned operand) {
  f.fail(TrapKind::UndefinedValue, in, lane, std::move(message));
  if (operand < in.op->numOperands())
    explainUndefined(f, in.op->operand(operand), in.scalar ? -1 : lane);
  return false;
}

bool pointerSources(const ir::Value *v, std::vector<const ir::Value *> &params) {
  // A walk back over every value `v` may be copied or offset from; a loop's
  // block argument leads to its initial value and to what the loop yields,
  // which leads back to the argument (the visited set makes it a fixed point).
  std::vector<const ir::Value *> work{v};
  std::unordered_set<const ir::Value *> seen{v};
  size_t before = params.size();
  bool known = true;
  auto push = [&](const ir::Value *x) {
    if (!x)
      known = false;
    else if (seen.insert(x).second)
      work.push_back(x);
  };
  // Operand `i` of the terminator of `b` (a yield or a while's condition).
  auto yielded = [](const ir::Block *b, size_t i) -> const ir::Value * {
    const ir::Op *t = b ? b->terminator() : nullptr;
    return t && i < t->numOperands() ? t->operand(static_cast<unsigned>(i)) : nullptr;
  };
  auto operand = [](const ir::Op *op, size_t i) -> const ir::Value * {
    return i < op->numOperands() ? op->operand(static_cast<unsigned>(i)) : nullptr;
  };
  auto region = [](const ir::Op *op, size_t i) -> const ir::Block * {
    return i < op->numRegions() ? op->region(static_cast<unsigned>(i)) : nullptr;
  };
  while (known && !work.empty()) {
    const ir::Value *x = work.back();
    work.pop_back();
    if (!x->type().isPtr) // a pointer made from an integer (bitcast)
      return false;
    size_t i = x->index();
    if (const ir::Op *d = x->definingOp()) {
      switch (d->kind()) {
      case ir::OpKind::AddPtr:
      case ir::OpKind::Splat:
      case ir::OpKind::Broadcast:
      case ir::OpKind::ExpandDims:
      case ir::OpKind::Reshape:
      case ir::OpKind::Trans:
      case ir::OpKind::Cast:
      case ir::OpKind::Bitcast:
      case ir::OpKind::ExtractSlice: push(operand(d, 0)); break;
      case ir::OpKind::Select:
        push(operand(d, 1));
        push(operand(d, 2));
        break;
      case ir::OpKind::InsertSlice:
        push(operand(d, 0));
        push(operand(d, 2));
        break;
      case ir::OpKind::Undef: break; // no address: its lanes trap as undefined
      case ir::OpKind::For:          // (lb, ub, step, inits...) -> iters
        push(operand(d, 3 + i));
        push(yielded(region(d, 0), i));
        break;
      case ir::OpKind::If:
        push(yielded(region(d, 0), i));
        push(yielded(region(d, 1), i));
        break;
      case ir::OpKind::While: push(yielded(region(d, 0), 1 + i)); break; // condition(c, fwd...)
      default: return false;
      }
      continue;
    }
    const ir::Block *b = x->ownerBlock();
    const ir::Op *p = b ? b->parentOp() : nullptr;
    if (b && !p) { // a kernel parameter
      params.push_back(x);
      continue;
    }
    if (p && p->kind() == ir::OpKind::For && i >= 1) { // body(iv, iters...)
      push(operand(p, 3 + i - 1));
      push(yielded(b, i - 1));
    } else if (p && p->kind() == ir::OpKind::While && b == region(p, 0)) { // before(args)
      push(operand(p, i));
      push(yielded(region(p, 1), i));
    } else if (p && p->kind() == ir::OpKind::While && b == region(p, 1)) { // after(fwd)
      push(yielded(region(p, 0), 1 + i));
    } else {
      return false;
    }
  }
  return known && params.size() > before; // (only undef: no parameter to name)
}

} // namespace tc::interp
