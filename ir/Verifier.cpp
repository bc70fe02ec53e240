//===- Verifier.cpp - Structural and type checks of the tile IR -----------===//
//
// Walks every function in print order, keeping the set of values visible at
// each point (parameters, earlier results of the enclosing blocks, region
// arguments), and checks each op against the rule of its kind. All failures
// are collected.
//
//===----------------------------------------------------------------------===//
#include "ir/Verifier.h"

#include "ir/Printer.h"

#include <algorithm>
#include <unordered_set>

namespace tc::ir {

namespace {

/// Operand count range of an op kind; max < 0 means unbounded.
struct Arity {
  int min, max;
};

Arity operandArity(OpKind k) {
  int n = tableNumOperands(k);
  if (n >= 0)
    return {n, n};
  if (k == OpKind::Load)
    return {1, 3};
  if (k == OpKind::Store || k == OpKind::AtomicRMW)
    return {2, 3};
  if (k == OpKind::AtomicCas)
    return {3, 4};
  if (k == OpKind::For)
    return {3, -1};
  if (k == OpKind::If)
    return {1, 1};
  return {0, -1}; // while, print, yield, condition: checked by their rules
}

std::string arityText(Arity a) {
  if (a.min == a.max)
    return std::to_string(a.min);
  if (a.max < 0)
    return "at least " + std::to_string(a.min);
  return std::to_string(a.min) + " to " + std::to_string(a.max);
}

/// The dtype classes an elementwise op accepts.
enum class DClass { Any, NonPtr, IntOrFloat, IntOrBool, Int, Float };

bool inClass(const Type &t, DClass c) {
  switch (c) {
  case DClass::Any: return true;
  case DClass::NonPtr: return !t.isPtr;
  case DClass::IntOrFloat: return !t.isPtr && (isInt(t.dtype) || isFloat(t.dtype));
  case DClass::IntOrBool: return !t.isPtr && (isInt(t.dtype) || isBool(t.dtype));
  case DClass::Int: return !t.isPtr && isInt(t.dtype);
  case DClass::Float: return !t.isPtr && isFloat(t.dtype);
  }
  return false;
}

const char *className(DClass c) {
  switch (c) {
  case DClass::Any: return "any type";
  case DClass::NonPtr: return "a non-pointer type";
  case DClass::IntOrFloat: return "an integer or float type";
  case DClass::IntOrBool: return "an integer or bool type";
  case DClass::Int: return "an integer type";
  case DClass::Float: return "a float type";
  }
  return "";
}

/// Whether `v` fits integer (or bool) dtype `t` in the attribute encoding.
bool intFits(int64_t v, DType t) {
  if (t == DType::Bool)
    return v == 0 || v == 1;
  unsigned w = bitWidth(t);
  if (isSignedInt(t))
    return w == 64 || (v >= -(int64_t(1) << (w - 1)) && v < (int64_t(1) << (w - 1)));
  return w == 64 || (v >= 0 && v < (int64_t(1) << w));
}

/// Element bit width for bitcast (pointers are 64-bit addresses).
unsigned elementBits(const Type &t) {
  return t.isPtr ? 64 : bitWidth(t.dtype);
}

/// Rule 10: the result dtype of `reduce {kind}` over `in`.
DType reduceResultDType(const std::string &kind, DType in) {
  if (kind == "argmax" || kind == "argmin")
    return DType::I32;
  if (kind == "add" && bitWidth(in) < 32 && !isFloat(in))
    return isSignedInt(in) ? DType::I32 : DType::U32;
  return in;
}

/// Rule 11: the result dtype of `dot` on operands of `in`, if supported.
std::optional<DType> dotResultDType(DType in) {
  if (in == DType::F16 || in == DType::BF16 || in == DType::F32)
    return DType::F32;
  if (in == DType::I8)
    return DType::I32;
  if (in == DType::F64)
    return DType::F64;
  return std::nullopt;
}

bool isPermutation(const std::vector<int64_t> &perm, size_t rank) {
  if (perm.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[static_cast<size_t>(p)])
      return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

/// Element count, or -1 on overflow.
int64_t safeNumElements(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d <= 0 || n > INT64_MAX / d)
      return -1;
    n *= d;
  }
  return n;
}

class Verifier {
public:
  Verifier(const Function &f, std::vector<VerifyFailure> &out) : fn_(f), out_(out) {}
  void run();

private:
  void fail(const Op &op, std::string msg);
  void verifyBlock(const Block &b);
  void verifyStructure(const Op &op, const Block &b, bool isLast);
  bool verifyOperandsVisible(const Op &op);
  bool verifyCounts(const Op &op);
  void verifyTypesOf(const Op &op);
  void verifyOp(const Op &op);

  // Helpers that report and return false on mismatch.
  bool expectOperand(const Op &op, unsigned i, const Type &want);
  bool expectResult(const Op &op, unsigned i, const Type &want);
  bool expectClass(const Op &op, const Type &t, DClass c, const std::string &what);
  const int64_t *intAttr(const Op &op, const char *name);
  const std::string *strAttr(const Op &op, const char *name);
  const std::vector<int64_t> *intsAttr(const Op &op, const char *name);
  const Op *terminatorOf(const Op &op, unsigned region, OpKind want);
  void expectTypes(const Op &op, const std::string &what, const std::vector<Type> &got,
                   const std::vector<Type> &want);

  void verifyConstant(const Op &op);
  void verifyRange(const Op &op);
  void verifyProgramQuery(const Op &op);
  void verifySplat(const Op &op);
  void verifyBroadcast(const Op &op);
  void verifyExpandDims(const Op &op);
  void verifyReshape(const Op &op);
  void verifyTrans(const Op &op);
  void verifySlice(const Op &op);
  void verifyUndef(const Op &op);
  void verifyCast(const Op &op);
  void verifyElementwise(const Op &op, DClass c);
  void verifyCompare(const Op &op);
  void verifyAddPtr(const Op &op);
  void verifySelect(const Op &op);
  void verifyReduce(const Op &op);
  void verifyDot(const Op &op);
  void verifyLoad(const Op &op);
  void verifyStore(const Op &op);
  void verifyAtomic(const Op &op);
  void verifyPrint(const Op &op);
  void verifyAssert(const Op &op);
  void verifyFor(const Op &op);
  void verifyIf(const Op &op);
  void verifyWhile(const Op &op);

  const Function &fn_;
  std::vector<VerifyFailure> &out_;
  std::unordered_set<const Value *> visible_;
};

void Verifier::fail(const Op &op, std::string msg) {
  out_.push_back(VerifyFailure{std::move(msg), fn_.name(), opToString(op), op.loc(), &op});
}

void Verifier::run() {
  for (const auto &a : fn_.body().args())
    visible_.insert(a.get());
  verifyBlock(fn_.body());
  const auto &ops = fn_.body().ops();
  if (ops.empty() || ops.back()->kind() != OpKind::Return) {
    if (ops.empty())
      out_.push_back(
          VerifyFailure{"function body must end in 'return'", fn_.name(), "", fn_.loc()});
    else
      fail(*ops.back(), "function body must end in 'return'");
  }
}

void Verifier::verifyBlock(const Block &b) {
  const auto &ops = b.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op &op = *ops[i];
    verifyStructure(op, b, i + 1 == ops.size());
    bool operandsOk = verifyOperandsVisible(op);
    if (verifyCounts(op) && operandsOk)
      verifyOp(op);
    verifyTypesOf(op);
    for (const auto &region : op.regions()) {
      for (const auto &a : region->args())
        visible_.insert(a.get());
      verifyBlock(*region);
      for (const auto &a : region->args())
        visible_.erase(a.get());
    }
    for (const auto &r : op.results())
      visible_.insert(r.get());
  }
  for (const auto &op : ops)
    for (const auto &r : op->results())
      visible_.erase(r.get());
}

// Parent links, terminator placement, and `return` only at the end of the body.
void Verifier::verifyStructure(const Op &op, const Block &b, bool isLast) {
  if (op.parentBlock() != &b)
    fail(op, "op's parent block link does not point at the block that holds it");
  for (size_t i = 0; i < op.numRegions(); ++i)
    if (op.region(static_cast<unsigned>(i))->parentOp() != &op)
      fail(op, "region " + std::to_string(i) + "'s parent op link does not point at its op");
  for (size_t i = 0; i < op.numResults(); ++i) {
    const Value *r = op.result(static_cast<unsigned>(i));
    if (r->definingOp() != &op || r->index() != i)
      fail(op, "result " + std::to_string(i) + "'s defining op or index is wrong");
  }
  OpKind k = op.kind();
  if (hasTrait(k, Terminator) && !isLast)
    fail(op, "terminator '" + std::string(op.name()) + "' must be the last op of its block");
  bool inBody = b.parentOp() == nullptr;
  if (k == OpKind::Return && !inBody)
    fail(op, "'return' is only allowed at the end of the function body");
  if ((k == OpKind::Yield || k == OpKind::Condition) && inBody)
    fail(op, "'" + std::string(op.name()) + "' outside of a region");
}

bool Verifier::verifyOperandsVisible(const Op &op) {
  bool ok = true;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    const Value *v = op.operand(static_cast<unsigned>(i));
    if (!v) {
      fail(op, "operand " + std::to_string(i) + " is null");
      ok = false;
    } else if (!visible_.count(v)) {
      fail(op, "operand " + std::to_string(i) + " does not dominate this use");
    }
  }
  return ok;
}

/// "1 operand", "2 results", "1 to 3 operands".
std::string countText(Arity a, const char *noun) {
  bool one = a.min == 1 && a.max == 1;
  return arityText(a) + " " + noun + (one ? "" : "s");
}

bool Verifier::verifyCounts(const Op &op) {
  std::string name(op.name());
  auto check = [&](Arity want, size_t got, const char *noun) {
    int n = static_cast<int>(got);
    if (n >= want.min && (want.max < 0 || n <= want.max))
      return true;
    fail(op, "'" + name + "' expects " + countText(want, noun) + ", got " + std::to_string(got));
    return false;
  };
  int res = tableNumResults(op.kind()), reg = tableNumRegions(op.kind());
  bool ok = check(operandArity(op.kind()), op.numOperands(), "operand");
  ok &= res < 0 || check(Arity{res, res}, op.numResults(), "result");
  ok &= check(Arity{reg, reg}, op.numRegions(), "region");
  return ok;
}

// Every defined type has positive dimensions.
void Verifier::verifyTypesOf(const Op &op) {
  auto check = [&](const Type &t, const std::string &what) {
    if (safeNumElements(t.shape) < 0)
      fail(op, what + " has type " + t.str() + " with a non-positive or too large dimension");
  };
  for (size_t i = 0; i < op.numResults(); ++i)
    check(op.result(static_cast<unsigned>(i))->type(), "result " + std::to_string(i));
  for (size_t r = 0; r < op.numRegions(); ++r)
    for (size_t i = 0; i < op.region(static_cast<unsigned>(r))->numArgs(); ++i)
      check(op.region(static_cast<unsigned>(r))->arg(static_cast<unsigned>(i))->type(),
            "region " + std::to_string(r) + " argument " + std::to_string(i));
}

void Verifier::verifyOp(const Op &op) {
  switch (op.kind()) {
  case OpKind::Constant: return verifyConstant(op);
  case OpKind::Range: return verifyRange(op);
  case OpKind::GetProgramId:
  case OpKind::GetNumPrograms: return verifyProgramQuery(op);
  case OpKind::Splat: return verifySplat(op);
  case OpKind::Broadcast: return verifyBroadcast(op);
  case OpKind::ExpandDims: return verifyExpandDims(op);
  case OpKind::Reshape: return verifyReshape(op);
  case OpKind::Trans: return verifyTrans(op);
  case OpKind::ExtractSlice:
  case OpKind::InsertSlice: return verifySlice(op);
  case OpKind::Undef: return verifyUndef(op);
  case OpKind::Cast:
  case OpKind::Bitcast: return verifyCast(op);
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Rem: return verifyElementwise(op, DClass::IntOrFloat);
  case OpKind::Not:
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor: return verifyElementwise(op, DClass::IntOrBool);
  case OpKind::Shl:
  case OpKind::Shr:
  case OpKind::UMulHi: return verifyElementwise(op, DClass::Int);
  case OpKind::Min:
  case OpKind::Max: return verifyElementwise(op, DClass::NonPtr);
  case OpKind::Exp:
  case OpKind::Exp2:
  case OpKind::Log:
  case OpKind::Log2:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Fma: return verifyElementwise(op, DClass::Float);
  case OpKind::CmpEq:
  case OpKind::CmpNe:
  case OpKind::CmpLt:
  case OpKind::CmpLe:
  case OpKind::CmpGt:
  case OpKind::CmpGe: return verifyCompare(op);
  case OpKind::AddPtr: return verifyAddPtr(op);
  case OpKind::Select: return verifySelect(op);
  case OpKind::Reduce: return verifyReduce(op);
  case OpKind::Dot: return verifyDot(op);
  case OpKind::Load: return verifyLoad(op);
  case OpKind::Store: return verifyStore(op);
  case OpKind::AtomicRMW:
  case OpKind::AtomicCas: return verifyAtomic(op);
  case OpKind::Print: return verifyPrint(op);
  case OpKind::Assert: return verifyAssert(op);
  case OpKind::DebugBarrier: return;
  case OpKind::For: return verifyFor(op);
  case OpKind::If: return verifyIf(op);
  case OpKind::While: return verifyWhile(op);
  case OpKind::Yield:
  case OpKind::Condition:
  case OpKind::Return: return; // checked by the enclosing op / verifyStructure
  }
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool Verifier::expectOperand(const Op &op, unsigned i, const Type &want) {
  const Type &got = op.operand(i)->type();
  if (got == want)
    return true;
  fail(op, "operand " + std::to_string(i) + " has type " + got.str() + ", expected " + want.str());
  return false;
}

bool Verifier::expectResult(const Op &op, unsigned i, const Type &want) {
  const Type &got = op.result(i)->type();
  if (got == want)
    return true;
  fail(op, "result " + std::to_string(i) + " has type " + got.str() + ", expected " + want.str());
  return false;
}

bool Verifier::expectClass(const Op &op, const Type &t, DClass c, const std::string &what) {
  if (inClass(t, c))
    return true;
  fail(op, "'" + std::string(op.name()) + "' needs " + className(c) + ", but " + what +
               " has type " + t.str());
  return false;
}

const int64_t *Verifier::intAttr(const Op &op, const char *name) {
  const AttrValue *v = op.attr(name);
  if (!v)
    fail(op, "missing attribute '" + std::string(name) + "'");
  else if (!std::holds_alternative<int64_t>(*v))
    fail(op, "attribute '" + std::string(name) + "' must be an integer");
  else
    return &std::get<int64_t>(*v);
  return nullptr;
}

const std::string *Verifier::strAttr(const Op &op, const char *name) {
  const AttrValue *v = op.attr(name);
  if (!v)
    fail(op, "missing attribute '" + std::string(name) + "'");
  else if (!std::holds_alternative<std::string>(*v))
    fail(op, "attribute '" + std::string(name) + "' must be a string");
  else
    return &std::get<std::string>(*v);
  return nullptr;
}

const std::vector<int64_t> *Verifier::intsAttr(const Op &op, const char *name) {
  const AttrValue *v = op.attr(name);
  if (!v)
    fail(op, "missing attribute '" + std::string(name) + "'");
  else if (!std::holds_alternative<std::vector<int64_t>>(*v))
    fail(op, "attribute '" + std::string(name) + "' must be a list of integers");
  else
    return &std::get<std::vector<int64_t>>(*v);
  return nullptr;
}

/// The terminator ending region `region` of `op` if it is of kind `want`.
const Op *Verifier::terminatorOf(const Op &op, unsigned region, OpKind want) {
  const Block *b = op.region(region);
  if (!b->ops().empty() && b->ops().back()->kind() == want)
    return b->ops().back().get();
  fail(op, "region " + std::to_string(region) + " of '" + std::string(op.name()) +
               "' must end in '" + std::string(mnemonic(want)) + "'");
  return nullptr;
}

std::string typeList(const std::vector<Type> &ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i)
    s += (i ? ", " : "") + ts[i].str();
  return s + ")";
}

std::vector<Type> typesOf(const std::vector<Value *> &vs) {
  std::vector<Type> ts;
  for (const Value *v : vs)
    ts.push_back(v ? v->type() : Type{});
  return ts;
}

template <typename Owned> std::vector<Type> typesOfOwned(const Owned &vs) {
  std::vector<Type> ts;
  for (const auto &v : vs)
    ts.push_back(v->type());
  return ts;
}

void Verifier::expectTypes(const Op &op, const std::string &what, const std::vector<Type> &got,
                           const std::vector<Type> &want) {
  if (got != want)
    fail(op, what + " have types " + typeList(got) + ", expected " + typeList(want));
}

//===----------------------------------------------------------------------===//
// Per-op rules
//===----------------------------------------------------------------------===//

// constant {value}: an int that fits the dtype, or a float for float dtypes.
void Verifier::verifyConstant(const Op &op) {
  const Type &t = op.result()->type();
  if (t.isPtr) {
    fail(op, "constant of pointer type " + t.str());
    return;
  }
  const AttrValue *v = op.attr("value");
  if (!v) {
    fail(op, "missing attribute 'value'");
  } else if (isFloat(t.dtype)) {
    if (!std::holds_alternative<double>(*v))
      fail(op, "attribute 'value' must be a float for type " + t.str());
  } else if (!std::holds_alternative<int64_t>(*v)) {
    fail(op, "attribute 'value' must be an integer for type " + t.str());
  } else if (!intFits(std::get<int64_t>(*v), t.dtype)) {
    fail(op, "value " + std::to_string(std::get<int64_t>(*v)) + " does not fit type " +
                 std::string(irName(t.dtype)));
  }
}

// range {start, end}: tile<(end-start)xi32>, end > start, a power-of-two size.
void Verifier::verifyRange(const Op &op) {
  const int64_t *start = intAttr(op, "start"), *end = intAttr(op, "end");
  if (!start || !end)
    return;
  if (*start < INT32_MIN || *end > int64_t(INT32_MAX) + 1 || *end <= *start) {
    fail(op, "range bounds [" + std::to_string(*start) + ", " + std::to_string(*end) +
                 ") must satisfy start < end within i32");
    return;
  }
  int64_t size = *end - *start;
  if ((size & (size - 1)) != 0)
    fail(op, "range size " + std::to_string(size) + " is not a power of two");
  expectResult(op, 0, Type::tile(DType::I32, {size}));
}

// get_program_id / get_num_programs {axis}: axis 0..2, i32 result.
void Verifier::verifyProgramQuery(const Op &op) {
  if (const int64_t *axis = intAttr(op, "axis"); axis && (*axis < 0 || *axis > 2))
    fail(op, "axis " + std::to_string(*axis) + " is not 0, 1 or 2");
  expectResult(op, 0, Type::scalar(DType::I32));
}

void Verifier::verifySplat(const Op &op) {
  const Type &in = op.operand(0)->type(), &out = op.result()->type();
  if (!in.isScalar())
    fail(op, "splat operand has type " + in.str() + ", expected a scalar");
  else if (!out.isTile())
    fail(op, "splat result has type " + out.str() + ", expected a tile");
  else
    expectResult(op, 0, in.withShape(out.shape));
}

void Verifier::verifyBroadcast(const Op &op) {
  const Type &in = op.operand(0)->type(), &out = op.result()->type();
  if (in.element() != out.element() || in.rank() != out.rank()) {
    fail(op, "cannot broadcast " + in.str() + " to " + out.str() +
                 " (element types and ranks must match)");
    return;
  }
  for (size_t i = 0; i < in.rank(); ++i)
    if (in.shape[i] != out.shape[i] && in.shape[i] != 1)
      fail(op, "cannot broadcast " + in.str() + " to " + out.str() + " (axis " + std::to_string(i) +
                   ")");
}

void Verifier::verifyExpandDims(const Op &op) {
  const int64_t *axis = intAttr(op, "axis");
  if (!axis)
    return;
  const Type &in = op.operand(0)->type();
  if (*axis < 0 || static_cast<size_t>(*axis) > in.rank()) {
    fail(op,
         "axis " + std::to_string(*axis) + " out of range for rank " + std::to_string(in.rank()));
    return;
  }
  Shape s = in.shape;
  s.insert(s.begin() + *axis, 1);
  expectResult(op, 0, in.withShape(std::move(s)));
}

void Verifier::verifyReshape(const Op &op) {
  const Type &in = op.operand(0)->type(), &out = op.result()->type();
  if (in.element() != out.element())
    fail(op, "reshape changes the element type from " + in.str() + " to " + out.str());
  else if (safeNumElements(in.shape) != safeNumElements(out.shape))
    fail(op, "reshape from " + in.str() + " to " + out.str() + " changes the element count");
}

// extract_slice (tile, index) and insert_slice (tile, index, value): a
// scalar integer index; the slice's type is the tile's with `axis` removed.
void Verifier::verifySlice(const Op &op) {
  const int64_t *axis = intAttr(op, "axis");
  if (!axis)
    return;
  const Type &in = op.operand(0)->type(), &idx = op.operand(1)->type();
  if (*axis < 0 || static_cast<size_t>(*axis) >= in.rank()) {
    fail(op,
         "axis " + std::to_string(*axis) + " out of range for rank " + std::to_string(in.rank()));
    return;
  }
  if (!idx.isScalar() || idx.isPtr || !isInt(idx.dtype)) {
    fail(op, "the slice index must be a scalar integer, not " + idx.str());
    return;
  }
  Shape s = in.shape;
  s.erase(s.begin() + *axis);
  Type slice = in.withShape(std::move(s));
  if (op.kind() == OpKind::ExtractSlice) {
    expectResult(op, 0, slice);
    return;
  }
  if (op.operand(2)->type() != slice)
    fail(op, "the inserted value has type " + op.operand(2)->type().str() + ", expected " +
                 slice.str());
  expectResult(op, 0, in);
}

void Verifier::verifyUndef(const Op &op) {
  if (op.result()->type().isScalar())
    fail(op, "undef makes a tile, not a scalar");
}

void Verifier::verifyTrans(const Op &op) {
  const std::vector<int64_t> *perm = intsAttr(op, "perm");
  if (!perm)
    return;
  const Type &in = op.operand(0)->type();
  if (!isPermutation(*perm, in.rank())) {
    fail(op, "perm is not a permutation of the " + std::to_string(in.rank()) + " axes");
    return;
  }
  Shape s;
  for (int64_t p : *perm)
    s.push_back(in.shape[static_cast<size_t>(p)]);
  expectResult(op, 0, in.withShape(std::move(s)));
}

// cast: same shape, both pointers or neither; bitcast: same shape and bit width.
void Verifier::verifyCast(const Op &op) {
  const Type &in = op.operand(0)->type(), &out = op.result()->type();
  if (in.shape != out.shape) {
    fail(op, "'" + std::string(op.name()) + "' changes the shape from " + in.str() + " to " +
                 out.str());
  } else if (op.kind() == OpKind::Cast && in.isPtr != out.isPtr) {
    fail(op, "cast between pointer and non-pointer types " + in.str() + " and " + out.str());
  } else if (op.kind() == OpKind::Bitcast && elementBits(in) != elementBits(out)) {
    fail(op, "bitcast between types of different bit widths " + in.str() + " and " + out.str());
  }
}

// Unary, binary and ternary elementwise ops: operands of the result's type.
void Verifier::verifyElementwise(const Op &op, DClass c) {
  const Type &t = op.result()->type();
  if (!expectClass(op, t, c, "the result"))
    return;
  for (size_t i = 0; i < op.numOperands(); ++i)
    expectOperand(op, static_cast<unsigned>(i), t);
}

void Verifier::verifyCompare(const Op &op) {
  const Type &a = op.operand(0)->type();
  if (expectOperand(op, 1, a))
    expectResult(op, 0, Type::tile(DType::Bool, a.shape));
}

void Verifier::verifyAddPtr(const Op &op) {
  const Type &t = op.result()->type(), &off = op.operand(1)->type();
  if (!t.isPtr) {
    fail(op, "addptr result has type " + t.str() + ", expected a pointer");
    return;
  }
  expectOperand(op, 0, t);
  if (off.isPtr || !isInt(off.dtype) || off.shape != t.shape)
    fail(op, "addptr offset has type " + off.str() + ", expected an integer of shape " +
                 shapeStr(t.shape));
}

void Verifier::verifySelect(const Op &op) {
  const Type &t = op.result()->type();
  expectOperand(op, 0, Type::tile(DType::Bool, t.shape));
  expectOperand(op, 1, t);
  expectOperand(op, 2, t);
}

// reduce {kind, axis}: result shape drops the axis; dtype per rule 10.
void Verifier::verifyReduce(const Op &op) {
  const std::string *kind = strAttr(op, "kind");
  const int64_t *axis = intAttr(op, "axis");
  const Type &in = op.operand(0)->type();
  if (!kind || !axis || !expectClass(op, in, DClass::NonPtr, "the operand"))
    return;
  static const char *kKinds[] = {"add", "max", "min", "argmax", "argmin", "and", "or", "xor"};
  if (std::find(std::begin(kKinds), std::end(kKinds), *kind) == std::end(kKinds)) {
    fail(op, "unknown reduction kind '" + *kind + "'");
    return;
  }
  bool bitwise = *kind == "and" || *kind == "or" || *kind == "xor";
  if (bitwise && !expectClass(op, in, DClass::IntOrBool, "the operand"))
    return;
  if (*axis < 0 || static_cast<size_t>(*axis) >= in.rank()) {
    fail(op,
         "axis " + std::to_string(*axis) + " out of range for rank " + std::to_string(in.rank()));
    return;
  }
  Shape s = in.shape;
  s.erase(s.begin() + *axis);
  expectResult(op, 0, Type::tile(reduceResultDType(*kind, in.dtype), std::move(s)));
}

// dot (a, b, acc): [M,K] x [K,N] (+ a leading batch axis), acc = result, rule 11.
void Verifier::verifyDot(const Op &op) {
  const Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
  const Type &out = op.result()->type();
  if (a.isPtr || b.isPtr || a.dtype != b.dtype) {
    fail(op, "dot operands " + a.str() + " and " + b.str() + " must have one non-pointer dtype");
    return;
  }
  std::optional<DType> rd = dotResultDType(a.dtype);
  if (!rd) {
    fail(op, "dot of " + std::string(irName(a.dtype)) + " operands is not supported");
    return;
  }
  size_t r = a.rank();
  bool shapesOk = (r == 2 || r == 3) && b.rank() == r && a.shape[r - 1] == b.shape[r - 2] &&
                  (r == 2 || a.shape[0] == b.shape[0]);
  if (!shapesOk) {
    fail(op,
         "dot operand shapes " + shapeStr(a.shape) + " and " + shapeStr(b.shape) + " do not agree");
    return;
  }
  Shape s = a.shape;
  s[r - 1] = b.shape[r - 1];
  if (expectResult(op, 0, Type::tile(*rd, std::move(s))))
    expectOperand(op, 2, out);
}

// load (ptr [, mask [, other]]): result = pointee of the pointer's shape.
void Verifier::verifyLoad(const Op &op) {
  const Type &p = op.operand(0)->type();
  if (!p.isPtr) {
    fail(op, "load pointer has type " + p.str() + ", expected a pointer");
    return;
  }
  Type value = Type::tile(p.dtype, p.shape);
  expectResult(op, 0, value);
  if (op.numOperands() > 1)
    expectOperand(op, 1, Type::tile(DType::Bool, p.shape));
  if (op.numOperands() > 2)
    expectOperand(op, 2, value);
}

// store (ptr, value [, mask])
void Verifier::verifyStore(const Op &op) {
  const Type &p = op.operand(0)->type();
  if (!p.isPtr) {
    fail(op, "store pointer has type " + p.str() + ", expected a pointer");
    return;
  }
  expectOperand(op, 1, Type::tile(p.dtype, p.shape));
  if (op.numOperands() > 2)
    expectOperand(op, 2, Type::tile(DType::Bool, p.shape));
}

// atomic_rmw {kind} (ptr, value [, mask]); atomic_cas (ptr, cmp, value [, mask]).
void Verifier::verifyAtomic(const Op &op) {
  const Type &p = op.operand(0)->type();
  if (op.kind() == OpKind::AtomicRMW) {
    static const char *kKinds[] = {"add", "max", "min", "xchg", "and", "or", "xor"};
    const std::string *kind = strAttr(op, "kind");
    if (kind && std::find(std::begin(kKinds), std::end(kKinds), *kind) == std::end(kKinds))
      fail(op, "unknown atomic kind '" + *kind + "'");
  }
  if (!p.isPtr) {
    fail(op, "atomic pointer has type " + p.str() + ", expected a pointer");
    return;
  }
  Type value = Type::tile(p.dtype, p.shape);
  size_t numValues = op.kind() == OpKind::AtomicRMW ? 1 : 2;
  for (size_t i = 1; i <= numValues; ++i)
    expectOperand(op, static_cast<unsigned>(i), value);
  if (op.numOperands() > numValues + 1)
    expectOperand(op, static_cast<unsigned>(numValues + 1), Type::tile(DType::Bool, p.shape));
  expectResult(op, 0, value);
}

void Verifier::verifyPrint(const Op &op) {
  strAttr(op, "label");
}

void Verifier::verifyAssert(const Op &op) {
  strAttr(op, "message");
  const Type &c = op.operand(0)->type();
  if (c.isPtr || c.dtype != DType::Bool)
    fail(op, "assert condition has type " + c.str() + ", expected i1");
}

// for (lb, ub, step, inits...) body(iv, iters...) -> iters
void Verifier::verifyFor(const Op &op) {
  const Type &lb = op.operand(0)->type();
  bool boundsOk = true;
  for (unsigned i = 0; i < 3; ++i) {
    const Type &t = op.operand(i)->type();
    if (!t.isScalar() || t.isPtr || !isInt(t.dtype)) {
      fail(op, "for bound " + std::to_string(i) + " has type " + t.str() +
                   ", expected a scalar integer");
      boundsOk = false;
    }
  }
  if (boundsOk) {
    expectOperand(op, 1, lb);
    expectOperand(op, 2, lb);
  }
  std::vector<Value *> initVals(op.operands().begin() + 3, op.operands().end());
  std::vector<Type> inits = typesOf(initVals);
  expectTypes(op, "results", typesOfOwned(op.results()), inits);
  std::vector<Type> bodyArgs = inits;
  bodyArgs.insert(bodyArgs.begin(), lb);
  expectTypes(op, "body arguments", typesOfOwned(op.region(0)->args()), bodyArgs);
  if (const Op *y = terminatorOf(op, 0, OpKind::Yield))
    expectTypes(op, "yielded values", typesOf(y->operands()), inits);
}

// if (cond) then, else -> yielded values
void Verifier::verifyIf(const Op &op) {
  const Type &c = op.operand(0)->type();
  if (c != Type::scalar(DType::Bool))
    fail(op, "if condition has type " + c.str() + ", expected i1");
  std::vector<Type> results = typesOfOwned(op.results());
  for (unsigned r = 0; r < 2; ++r) {
    if (op.region(r)->numArgs())
      fail(op, "region " + std::to_string(r) + " of 'if' must have no arguments");
    if (const Op *y = terminatorOf(op, r, OpKind::Yield))
      expectTypes(op, "values yielded by region " + std::to_string(r), typesOf(y->operands()),
                  results);
  }
}

// while (inits) before(args) -> condition(c, fwd...); after(fwd) -> yield(inits)
void Verifier::verifyWhile(const Op &op) {
  std::vector<Type> inits = typesOf(op.operands());
  expectTypes(op, "before-region arguments", typesOfOwned(op.region(0)->args()), inits);
  const Op *cond = terminatorOf(op, 0, OpKind::Condition);
  if (cond) {
    if (cond->numOperands() == 0 || !cond->operand(0)) {
      fail(op, "'condition' needs a condition operand");
      cond = nullptr;
    } else if (cond->operand(0)->type() != Type::scalar(DType::Bool)) {
      fail(op, "while condition has type " + cond->operand(0)->type().str() + ", expected i1");
    }
  }
  if (cond) {
    std::vector<Value *> fwdVals(cond->operands().begin() + 1, cond->operands().end());
    std::vector<Type> fwd = typesOf(fwdVals);
    expectTypes(op, "after-region arguments", typesOfOwned(op.region(1)->args()), fwd);
    expectTypes(op, "results", typesOfOwned(op.results()), fwd);
  }
  if (const Op *y = terminatorOf(op, 1, OpKind::Yield))
    expectTypes(op, "values yielded by the after-region", typesOf(y->operands()), inits);
}

} // namespace

std::vector<VerifyFailure> verifyModule(const Module &m) {
  std::vector<VerifyFailure> failures;
  for (const auto &f : m.functions) {
    Verifier v(*f, failures);
    v.run();
  }
  return failures;
}

std::string formatFailures(const Module &m, const std::vector<VerifyFailure> &failures) {
  std::string out;
  for (const VerifyFailure &f : failures) {
    out += "error: verifier: " + f.message + "\n  in function @" + f.function;
    if (!f.opText.empty())
      out += ": " + f.opText;
    if (f.loc.line != 0 && f.loc.file < m.files.size())
      out += " loc(\"" + m.files[f.loc.file] + "\":" + std::to_string(f.loc.line) + ":" +
             std::to_string(f.loc.col) + ")";
    out += "\n";
  }
  return out;
}

} // namespace tc::ir
