// Where an undefined value came from (DESIGN.md section 6): after an
// undefined_value trap, walk back from the undefined operand through the ops
// that carried the poison (their values are still in the program's slots) to
// the masked load that made it, and add one note per source location.
#include "interp/Interpreter.h"

#include <set>

namespace tc::interp {

namespace {

/// "lane 37", "lane [1, 5] (flat 37)"; "" for a 0-d value.
std::string laneOf(const ir::Type &t, int64_t lane) {
  if (t.isScalar() || lane < 0)
    return "";
  if (t.shape.size() <= 1)
    return "lane " + std::to_string(lane);
  return "lane " + tileIndexText(t.shape, lane) + " (flat " + std::to_string(lane) + ")";
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

std::string tileIndexText(const ir::Shape &shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

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

bool failUndefined(Frame &f, const Instr &in, int64_t lane, std::string message, unsigned operand) {
  f.fail(TrapKind::UndefinedValue, in, lane, std::move(message));
  if (operand < in.op->numOperands())
    explainUndefined(f, in.op->operand(operand), in.scalar ? -1 : lane);
  return false;
}

} // namespace tc::interp
