// Preparation of a kernel (slot numbering, handler choice) and the walk over
// prepared blocks that runs one program.
#include "interp/Interpreter.h"
#include "support/Interrupt.h"

#include "interp/ExecElem.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace tc::interp {

namespace {

/// Numbers values in print order (as ir/Printer.cpp does) and prepares ops.
class Preparer {
public:
  explicit Preparer(std::string &error) : error_(error) {}

  bool prepareFunction(const ir::Function &fn, PreparedFunction &out) {
    const ir::Block &body = fn.body();
    for (size_t i = 0; i < body.numArgs(); ++i) {
      const ir::Value *v = body.arg(static_cast<unsigned>(i));
      out.body.args.push_back(slotOf(v));
      names_[v] = "%" + (v->nameHint().empty() ? "arg" + std::to_string(i) : v->nameHint());
    }
    if (!prepareOps(body, out.body))
      return false;
    countUses(body);
    fuseBlock(out.body);
    for (Instr &in : out.body.ops) { // splats of parameters: one value per launch
      if (in.op->kind() != ir::OpKind::Splat)
        continue;
      const ir::Value *v = in.op->operand(0);
      for (size_t i = 0; i < body.numArgs(); ++i)
        if (v == body.arg(static_cast<unsigned>(i))) {
          in.inner = in.run;
          in.run = &cachedOp;
        }
    }
    out.numSlots = static_cast<uint32_t>(slots_.size());
    out.slotOf = slots_;
    return true;
  }

private:
  static std::string numbered(unsigned n) {
    std::string s(1, '%');
    return s += std::to_string(n);
  }

  uint32_t slotOf(const ir::Value *v) {
    auto [it, inserted] = slots_.emplace(v, static_cast<uint32_t>(slots_.size()));
    return it->second;
  }

  bool prepareOps(const ir::Block &b, PBlock &out) {
    out.ops.reserve(b.ops().size());
    for (const auto &op : b.ops()) {
      out.ops.emplace_back();
      if (!prepareOp(*op, out.ops.back()))
        return false;
    }
    return true;
  }

  bool prepareOp(const ir::Op &op, Instr &in) {
    in.op = &op;
    for (const ir::Value *v : op.operands()) {
      if (!v || !slots_.count(v)) {
        error_ = "operand of '" + std::string(op.name()) + "' is not defined before its use";
        return false;
      }
      in.in.push_back(slots_[v]);
    }
    for (const auto &r : op.results()) {
      in.out.push_back(slotOf(r.get()));
      // --trace says the source variable's name where the value has one, else
      // the number `tritonc --emit=ir` gives it.
      std::string name = numbered(next_++);
      if (!r->nameHint().empty())
        name = r->nameHint();
      names_[r.get()] = name;
      in.names.push_back(name);
    }
    for (const auto &region : op.regions()) {
      PBlock &pb = in.regions.emplace_back();
      for (const auto &a : region->args()) {
        pb.args.push_back(slotOf(a.get()));
        names_[a.get()] = numbered(next_++);
      }
      if (!prepareOps(*region, pb))
        return false;
    }
    if (!checkSizes(op))
      return false;
    const ir::Type &main = mainType(op);
    in.n = main.numElements();
    in.scalar = main.isScalar();
    in.elemSize = elemSizeOf(main);
    in.dtype = main.dtype;
    return dispatch(op, in);
  }

  /// The interpreter holds every tile in memory: results and region
  /// arguments may have at most kMaxLanes lanes (the language allows 2^20).
  bool checkSizes(const ir::Op &op) {
    constexpr int64_t kMaxLanes = int64_t(1) << 24;
    auto ok = [&](const ir::Value *v) {
      int64_t n = 1;
      for (int64_t d : v->type().shape) {
        if (d <= 0 || d > kMaxLanes)
          return false;
        n *= d; // <= 2^24 * 2^24: no overflow
        if (n > kMaxLanes)
          return false;
      }
      return true;
    };
    for (const auto &r : op.results())
      if (!ok(r.get()))
        return tooLarge(op);
    for (const auto &region : op.regions())
      for (const auto &a : region->args())
        if (!ok(a.get()))
          return tooLarge(op);
    return true;
  }

  bool tooLarge(const ir::Op &op) {
    error_ = "a value of '" + std::string(op.name()) + "' has more than 2^24 lanes";
    return false;
  }

  bool dispatch(const ir::Op &op, Instr &in) {
    switch (op.kind()) {
    case ir::OpKind::Constant:
    case ir::OpKind::Range:
    case ir::OpKind::GetProgramId:
    case ir::OpKind::GetNumPrograms:
    case ir::OpKind::Undef: return prepareValueOp(op, in, error_);
    case ir::OpKind::Splat:
    case ir::OpKind::Broadcast:
    case ir::OpKind::ExpandDims:
    case ir::OpKind::Reshape:
    case ir::OpKind::Trans:
    case ir::OpKind::ExtractSlice:
    case ir::OpKind::InsertSlice: return prepareShapeOp(op, in, error_);
    case ir::OpKind::Cast:
    case ir::OpKind::Bitcast: return prepareCast(op, in, error_);
    case ir::OpKind::Neg:
    case ir::OpKind::Not:
    case ir::OpKind::Abs:
    case ir::OpKind::Exp:
    case ir::OpKind::Exp2:
    case ir::OpKind::Log:
    case ir::OpKind::Log2:
    case ir::OpKind::Sqrt:
    case ir::OpKind::Rsqrt:
    case ir::OpKind::Sin:
    case ir::OpKind::Cos:
    case ir::OpKind::Floor:
    case ir::OpKind::Ceil:
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul:
    case ir::OpKind::Div:
    case ir::OpKind::Rem:
    case ir::OpKind::And:
    case ir::OpKind::Or:
    case ir::OpKind::Xor:
    case ir::OpKind::Shl:
    case ir::OpKind::Shr:
    case ir::OpKind::Min:
    case ir::OpKind::Max:
    case ir::OpKind::UMulHi:
    case ir::OpKind::CmpEq:
    case ir::OpKind::CmpNe:
    case ir::OpKind::CmpLt:
    case ir::OpKind::CmpLe:
    case ir::OpKind::CmpGt:
    case ir::OpKind::CmpGe:
    case ir::OpKind::AddPtr:
    case ir::OpKind::Fma:
    case ir::OpKind::Select: return prepareElementwise(op, in, error_);
    case ir::OpKind::Reduce: return prepareReduce(op, in, error_);
    case ir::OpKind::Dot: return prepareDot(op, in, error_);
    case ir::OpKind::Load:
    case ir::OpKind::Store:
    case ir::OpKind::AtomicRMW:
    case ir::OpKind::AtomicCas: return prepareMemoryOp(op, in, error_);
    case ir::OpKind::Print:
    case ir::OpKind::Assert:
    case ir::OpKind::DebugBarrier: return prepareDebugOp(op, in, error_);
    case ir::OpKind::For:
    case ir::OpKind::If:
    case ir::OpKind::While:
    case ir::OpKind::Yield:
    case ir::OpKind::Condition:
    case ir::OpKind::Return: return prepareControlOp(op, in, error_);
    }
    error_ = "unknown op";
    return false;
  }

  void countUses(const ir::Block &b) {
    for (const auto &op : b.ops()) {
      for (const ir::Value *v : op->operands())
        ++uses_[v];
      for (const auto &r : op->regions())
        countUses(*r);
    }
  }

  int uses(const ir::Value *v) const {
    auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second;
  }

  /// Ops that may write memory (or run ops that may): a load's view must be
  /// read before any of them.
  static bool mayWrite(const ir::Op &op) {
    ir::OpKind k = op.kind();
    return k == ir::OpKind::Store || k == ir::OpKind::AtomicRMW || k == ir::OpKind::AtomicCas ||
           !op.regions().empty();
  }

  /// Elementwise ops whose handlers read their operands into a fresh result
  /// (never share an operand's tile as select, bitcast and the shape ops may).
  static bool readsIntoFresh(const ir::Op &op) {
    using K = ir::OpKind;
    switch (op.kind()) {
    case K::Neg:
    case K::Not:
    case K::Abs:
    case K::Exp:
    case K::Exp2:
    case K::Log:
    case K::Log2:
    case K::Sqrt:
    case K::Rsqrt:
    case K::Sin:
    case K::Cos:
    case K::Floor:
    case K::Ceil:
    case K::Add:
    case K::Sub:
    case K::Mul:
    case K::Div:
    case K::Rem:
    case K::And:
    case K::Or:
    case K::Xor:
    case K::Shl:
    case K::Shr:
    case K::Min:
    case K::Max:
    case K::UMulHi:
    case K::CmpEq:
    case K::CmpNe:
    case K::CmpLt:
    case K::CmpLe:
    case K::CmpGt:
    case K::CmpGe:
    case K::Fma:
    case K::Cast: return true;
    default: return false;
    }
  }

  /// Marks the fusions of Interpreter.h in `b` and the blocks inside it: a
  /// load whose one use U is a readsIntoFresh op of the same block with no
  /// mayWrite op in between returns views; an elementwise binary op whose
  /// one use is the store right after it, as its value, is fused into it.
  void fuseBlock(PBlock &b) {
    for (Instr &in : b.ops)
      for (PBlock &r : in.regions)
        fuseBlock(r);
    for (size_t i = 0; i < b.ops.size(); ++i) {
      Instr &load = b.ops[i];
      if (load.op->kind() != ir::OpKind::Load || uses(load.op->result()) != 1)
        continue;
      const ir::Value *v = load.op->result();
      for (size_t j = i + 1; j < b.ops.size(); ++j) {
        const ir::Op &u = *b.ops[j].op;
        const auto &o = u.operands();
        if (std::find(o.begin(), o.end(), v) != o.end()) {
          load.view = readsIntoFresh(u);
          break;
        }
        if (mayWrite(u))
          break;
      }
    }
    for (size_t i = 1; i < b.ops.size(); ++i) {
      Instr &e = b.ops[i - 1], &st = b.ops[i];
      if (st.op->kind() != ir::OpKind::Store || !e.into || e.out.size() != 1 ||
          uses(e.op->result()) != 1 || st.op->operand(1) != e.op->result())
        continue;
      Handler h = fusedStoreHandler(st.elemSize, st.dtype == DType::Bool);
      if (!h)
        continue;
      e.inner = e.run;
      e.run = &deferredOp;
      st.inner = st.run;
      st.run = h;
    }
  }

  std::string &error_;
  std::unordered_map<const ir::Value *, int> uses_;
  std::unordered_map<const ir::Value *, uint32_t> slots_;
  std::unordered_map<const ir::Value *, std::string> names_;
  unsigned next_ = 0;
};

/// An address as `X+4` (element 4 of the buffer of parameter X, in elements of
/// `elemSize` bytes); as hex when it is outside every buffer or not on an
/// element boundary.
std::string addressText(const Memory &mem, uint64_t a, unsigned elemSize) {
  const Region *r = mem.find(a, 1);
  if (!r || r->names.empty() || elemSize == 0 || (a - r->base) % elemSize != 0)
    return hexAddr(a);
  return r->names[0] + "+" + std::to_string((a - r->base) / elemSize);
}

/// Writes the --trace line of an executed op (terminators are skipped):
///   [program (0, 0, 0)] file.tc:7:22: x = add : tile<1024xf32> min=0. max=2. first=[...]
/// one `name = op : type summary` per result (summarizeValue), `; `-separated;
/// the name is the source variable's (`x`), else the IR's number (`%5`);
/// addresses are `X+4` (addressText). An op without results prints its
/// mnemonic alone. Control-flow ops print after the ops of their regions.
void traceOp(Frame &f, const Instr &in) {
  if (hasTrait(in.op->kind(), ir::Terminator))
    return;
  const ir::Module &m = f.launch.kernel.module();
  ir::Location loc = in.op->loc();
  std::string s = programPrefix(f);
  if (loc.line != 0 && loc.file < m.files.size())
    s += m.files[loc.file] + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": ";
  for (size_t i = 0; i < in.out.size(); ++i) {
    const ir::Type &t = in.op->result(static_cast<unsigned>(i))->type();
    s += (i ? "; " : "") + in.names[i] + " = ";
    if (i == 0)
      s += std::string(in.op->name()) + " ";
    AddressText addr;
    if (t.isPtr)
      addr = [&f, size = byteSize(t.dtype)](uint64_t a) {
        return addressText(f.launch.memory, a, size);
      };
    s += ": " + t.str() + " " + summarizeValue(*f.get(in.out[i]), t, addr);
  }
  if (in.out.empty())
    s += std::string(in.op->name());
  f.write(s + "\n");
}

} // namespace

bool prepareFunction(const ir::Function &fn, PreparedFunction &out, std::string &error) {
  Preparer p(error);
  return p.prepareFunction(fn, out);
}

const ir::Type &mainType(const ir::Op &op) {
  static const ir::Type kScalar = ir::Type::scalar(DType::I32);
  return op.numResults()    ? op.result(0)->type()
         : op.numOperands() ? op.operand(0)->type()
                            : kScalar;
}

std::string atLane(const Instr &in, int64_t lane) {
  return in.scalar ? std::string() : " at " + laneText(mainType(*in.op).shape, lane);
}

std::string programPrefix(const Frame &f) {
  return "[program (" + std::to_string(f.pid[0]) + ", " + std::to_string(f.pid[1]) + ", " +
         std::to_string(f.pid[2]) + ")] ";
}

bool Frame::fail(TrapKind kind, const Instr &in, int64_t lane, std::string message) {
  Trap t;
  t.kind = kind;
  t.kernel = launch.kernel.name();
  t.programId = pid;
  t.hasProgram = true;
  ir::Location loc = in.op->loc();
  const ir::Module &m = launch.kernel.module();
  if (loc.line != 0 && loc.file < m.files.size()) {
    t.file = m.files[loc.file];
    t.line = loc.line;
    t.col = loc.col;
    t.sourceLine = launch.kernel.sourceLine(loc.file, loc.line);
  }
  t.lane = in.scalar ? -1 : lane;
  if (t.lane >= 0)
    t.laneShape = mainType(*in.op).shape;
  t.message = std::move(message);
  trap = std::move(t);
  if (lane >= 0 || in.scalar)
    explainFallback(*this, in, lane);
  return false;
}

void Frame::restart(int64_t programIndex) {
  index = programIndex;
  steps = 0;
  trap.reset();
  stopped = false;
  abandoned = false;
  abandonedAt = nullptr;
  budget = 0;
  interrupted = false;
  lastLoad = 0;
  lastLoadOp = nullptr;
  buffered.clear();
  vc.clear();
  clock = 1;
}

void Frame::write(const std::string &s) {
  if (direct)
    *direct << s;
  else
    buffered += s;
}

uint64_t LaunchContext::waitBudget(uint64_t ops) {
  uint64_t budget = 0;
  if (__builtin_mul_overflow(ops, 4, &budget) || __builtin_add_overflow(budget, 1000000, &budget))
    return UINT64_MAX;
  return budget;
}

uint64_t LaunchContext::budgetBelowTrap(uint64_t steps) const {
  uint64_t ops = opsAtTrap.load(std::memory_order_relaxed), sum = 0;
  if (__builtin_add_overflow(ops, steps, &sum))
    sum = UINT64_MAX;
  return std::min(waitBudget(sum), maxSteps);
}

bool Frame::tickSlow(const Instr &in) {
  if (steps >= launch.maxSteps) {
    // Below a later program's trap the step limit is part of the budget
    // (LaunchContext::opsAtTrap): the program is given up, the trap stands.
    int64_t above = launch.stopAbove.load(std::memory_order_relaxed);
    if (above != INT64_MAX && index < above) {
      abandoned = true;
      abandonedAt = in.op;
      return false;
    }
    return fail(TrapKind::StepLimit, in, -1,
                "the program executed more than " + std::to_string(launch.maxSteps) +
                    " ops (the step limit)");
  }
  ++steps;
  if ((ticks & 1023) == 0) { // tick() counted this op
    if (interruptRequested() ||
        (launch.opts.cancel && launch.opts.cancel->load(std::memory_order_relaxed))) {
      interrupted = true;
      return fail(TrapKind::StepLimit, in, -1,
                  "interrupted (Ctrl-C) after " + std::to_string(steps) + " ops");
    }
    int64_t above = launch.stopAbove.load(std::memory_order_acquire);
    if (index > above) {
      stopped = true;
      return false;
    }
    if (above != INT64_MAX && index < above) { // a later program trapped
      if (budget == 0)
        budget = launch.budgetBelowTrap(steps);
      if (steps >= budget) {
        abandoned = true;
        abandonedAt = in.op;
        return false;
      }
    }
    if (launch.hasDeadline && std::chrono::steady_clock::now() > launch.deadline)
      return fail(TrapKind::StepLimit, in, -1,
                  "the launch ran longer than its time limit of " +
                      std::to_string(launch.opts.maxSeconds) + " s");
  }
  return true;
}

bool cachedOp(Frame &f, const Instr &in) {
  Tile &c = f.cached[in.out[0]];
  if (c) {
    f.set(in.out[0], c);
    return true;
  }
  if (!in.inner(f, in))
    return false;
  c = f.get(in.out[0]);
  return true;
}

bool runBlock(Frame &f, const PBlock &b) {
  bool trace = f.launch.opts.trace;
  for (const Instr &in : b.ops) {
    if (!f.tick(in) || !in.run(f, in))
      return false;
    if (trace)
      traceOp(f, in);
  }
  return true;
}

bool runProgram(Frame &f, const PreparedFunction &fn) {
  // Parameters as constants (runConstant): the frame's own copies.
  for (size_t i = 0; i < fn.body.args.size(); ++i) {
    Tile &c = f.cached[fn.body.args[i]];
    if (!c) [[unlikely]]
      c = threadCopy(*f.launch.params[i]);
    f.set(fn.body.args[i], c);
  }
  bool ok = runBlock(f, fn.body);
  for (Tile &t : f.slots)
    t.reset();
  return ok;
}

//===----------------------------------------------------------------------===//
// Helpers shared by the handlers
//===----------------------------------------------------------------------===//

void mergePoison(TileData &r, const TileData &a) {
  r.setPoison(a.poisonMask());
}

void mergePoison(TileData &r, const TileData &a, const TileData &b) {
  if (!b.hasPoison() || a.poisonMask() == b.poisonMask()) {
    r.setPoison(a.poisonMask());
  } else if (!a.hasPoison()) {
    r.setPoison(b.poisonMask());
  } else {
    uint8_t *p = r.newPoison();
    const uint8_t *x = a.poison(), *y = b.poison();
    for (int64_t i = 0; i < r.size(); ++i)
      p[i] = x[i] | y[i];
  }
}

void mergePoison(TileData &r, const TileData &a, const TileData &b, const TileData &c) {
  mergePoison(r, a, b);
  if (!c.hasPoison() || r.poisonMask() == c.poisonMask())
    return;
  if (!r.hasPoison()) {
    r.setPoison(c.poisonMask());
    return;
  }
  std::shared_ptr<const PoisonMask> ab = r.poisonMask();
  uint8_t *p = r.newPoison();
  for (int64_t i = 0; i < r.size(); ++i)
    p[i] = (*ab)[static_cast<size_t>(i)] | c.poison()[i];
}

__int128 scalarInt(const TileData &t, DType dtype) {
  return dispatchDType(dtype, [&](auto d) -> __int128 {
    constexpr DType D = decltype(d)::value;
    if constexpr (kIsFloat<D>)
      return 0;
    else
      return static_cast<__int128>(t.as<St<D>>()[0]);
  });
}

Tile makeScalarInt(DType t, __int128 v) {
  TilePtr r = makeTile(1, byteSize(t));
  uint64_t bits = num::wrapInt(t, v);
  std::memcpy(r->raw(), &bits, byteSize(t)); // little-endian host
  return r;
}

} // namespace tc::interp
