//===- LowerCall.cpp - AST to tile IR: builtins and helper inlining -------===//
//
// Builtins map to one op each (cdiv to three); helper functions are inlined:
// their parameters are bound to the converted arguments, their body lowered
// in place, and their final `return e;` gives the call's value.
//
//===----------------------------------------------------------------------===//
#include "frontend/LowerImpl.h"
#include "frontend/Sema.h"

#include <algorithm>

namespace tc::lower {

using namespace ast;
using ir::OpKind;
using ir::Shape;
using ir::Type;
using ir::Value;

namespace {

Type boolOf(const Shape &shape) {
  return Type{DType::Bool, false, shape};
}

/// The op of a one-op elementwise builtin; nullopt for the others.
std::optional<OpKind> elementwiseOp(Builtin b) {
  switch (b) {
  case Builtin::Exp: return OpKind::Exp;
  case Builtin::Exp2: return OpKind::Exp2;
  case Builtin::Log: return OpKind::Log;
  case Builtin::Log2: return OpKind::Log2;
  case Builtin::Sqrt: return OpKind::Sqrt;
  case Builtin::Rsqrt: return OpKind::Rsqrt;
  case Builtin::Sin: return OpKind::Sin;
  case Builtin::Cos: return OpKind::Cos;
  case Builtin::Abs: return OpKind::Abs;
  case Builtin::Floor: return OpKind::Floor;
  case Builtin::Ceil: return OpKind::Ceil;
  case Builtin::Fma: return OpKind::Fma;
  case Builtin::Min: return OpKind::Min;
  case Builtin::Max: return OpKind::Max;
  case Builtin::UMulHi: return OpKind::UMulHi;
  default: return std::nullopt;
  }
}

/// The `kind` attribute of an atomic read-modify-write builtin.
const char *atomicKind(Builtin b) {
  switch (b) {
  case Builtin::AtomicAdd: return "add";
  case Builtin::AtomicMax: return "max";
  case Builtin::AtomicMin: return "min";
  case Builtin::AtomicXchg: return "xchg";
  case Builtin::AtomicAnd: return "and";
  case Builtin::AtomicOr: return "or";
  case Builtin::AtomicXor: return "xor";
  default: return nullptr;
  }
}

/// Number of value arguments (before the optional mask) of each builtin with
/// a fixed arity; 0 for the variadic ones.
size_t arity(Builtin b) {
  switch (b) {
  case Builtin::None:
  case Builtin::Print: return 0;
  case Builtin::DebugBarrier: return 0;
  case Builtin::GetProgramId:
  case Builtin::GetNumPrograms:
  case Builtin::Exp:
  case Builtin::Exp2:
  case Builtin::Log:
  case Builtin::Log2:
  case Builtin::Sqrt:
  case Builtin::Rsqrt:
  case Builtin::Sin:
  case Builtin::Cos:
  case Builtin::Abs:
  case Builtin::Floor:
  case Builtin::Ceil:
  case Builtin::Assert: return 1;
  case Builtin::Min:
  case Builtin::Max:
  case Builtin::UMulHi:
  case Builtin::Cdiv:
  case Builtin::AtomicAdd:
  case Builtin::AtomicMax:
  case Builtin::AtomicMin:
  case Builtin::AtomicXchg:
  case Builtin::AtomicAnd:
  case Builtin::AtomicOr:
  case Builtin::AtomicXor: return 2;
  case Builtin::Fma:
  case Builtin::Select:
  case Builtin::Where:
  case Builtin::AtomicCas: return 3;
  }
  return 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

} // namespace

Value *FunctionLowerer::lowerCall(const CallExpr *e) {
  if (e->builtin != Builtin::None && e->builtin != Builtin::Print &&
      e->args.size() < arity(e->builtin))
    return unsupported(e->loc, "a call to '" + e->callee + "' with too few arguments", e->type);
  switch (e->builtin) {
  case Builtin::None: return inlineHelper(e);
  case Builtin::GetProgramId:
  case Builtin::GetNumPrograms: {
    const Expr *a = e->args[0].get();
    if (!a->constant)
      return unsupported(a->loc, "a program axis that is not a constant", e->type);
    int64_t axis = constantIntBits(*a->constant, DType::I64);
    OpKind k = e->builtin == Builtin::GetProgramId ? OpKind::GetProgramId : OpKind::GetNumPrograms;
    return emit(k, Type::scalar(DType::I32), {}, {{"axis", axis}});
  }
  case Builtin::Exp:
  case Builtin::Exp2:
  case Builtin::Log:
  case Builtin::Log2:
  case Builtin::Sqrt:
  case Builtin::Rsqrt:
  case Builtin::Sin:
  case Builtin::Cos:
  case Builtin::Abs:
  case Builtin::Floor:
  case Builtin::Ceil:
  case Builtin::Fma:
  case Builtin::Min:
  case Builtin::Max:
  case Builtin::Select:
  case Builtin::Where:
  case Builtin::UMulHi:
  case Builtin::Cdiv: return lowerElementwiseBuiltin(e);
  case Builtin::AtomicAdd:
  case Builtin::AtomicMax:
  case Builtin::AtomicMin:
  case Builtin::AtomicXchg:
  case Builtin::AtomicCas:
  case Builtin::AtomicAnd:
  case Builtin::AtomicOr:
  case Builtin::AtomicXor: return lowerAtomic(e);
  case Builtin::DebugBarrier: emitOp(OpKind::DebugBarrier, {}, {}); return nullptr;
  case Builtin::Print: return lowerPrint(e);
  case Builtin::Assert: return lowerAssert(e);
  }
  return unsupported(e->loc, "this builtin", e->type);
}

Value *FunctionLowerer::lowerElementwiseBuiltin(const CallExpr *e) {
  Type t{e->operandType.dtype, e->operandType.isPtr, e->type.shape};
  const auto &args = e->args;
  Value *r;
  if (e->builtin == Builtin::Select || e->builtin == Builtin::Where) {
    Value *c = lowerAs(args[0].get(), boolOf(t.shape));
    Value *a = lowerAs(args[1].get(), t);
    Value *b = lowerAs(args[2].get(), t);
    r = emit(OpKind::Select, t, {c, a, b});
  } else if (e->builtin == Builtin::Cdiv) {
    // The exact ceiling of a / b (as the constant fold and the grid's cdiv):
    // the truncated quotient, plus one where a remainder is left and the
    // exact quotient is positive (the remainder has b's sign). No `a + b - 1`:
    // that overflows near the type's maximum and is the floor for b < 0.
    Value *a = lowerAs(args[0].get(), t);
    Value *b = lowerAs(args[1].get(), t);
    Value *q = arith(BinaryOp::Div, a, b, e->loc);
    Value *rem = arith(BinaryOp::Rem, a, b, e->loc);
    Type bools = boolOf(t.shape);
    Value *zero = emitConstant(ConstValue::ofInt(0), t);
    Value *left = emit(OpKind::CmpNe, bools, {rem, zero});
    Value *sameSign =
        emit(OpKind::CmpEq, bools,
             {emit(OpKind::CmpGt, bools, {rem, zero}), emit(OpKind::CmpGt, bools, {b, zero})});
    Value *up = emit(OpKind::And, bools, {left, sameSign});
    Value *q1 = arith(BinaryOp::Add, q, emitConstant(ConstValue::ofInt(1), t), e->loc);
    r = emit(OpKind::Select, t, {up, q1, q});
  } else {
    std::vector<Value *> ops;
    for (size_t i = 0; i < arity(e->builtin); ++i)
      ops.push_back(lowerAs(args[i].get(), t));
    r = emit(*elementwiseOp(e->builtin), t, ops);
  }
  return convert(r, e->type);
}

Value *FunctionLowerer::lowerAtomic(const CallExpr *e) {
  const Shape &shape = e->type.shape;
  Value *p = lowerExpr(e->args[0].get());
  if (!p->type().isPtr)
    return unsupported(e->args[0]->loc, "an atomic on a non-pointer", e->type);
  p = convert(p, Type{p->type().dtype, true, shape});
  Type vt{p->type().dtype, false, shape};
  bool cas = e->builtin == Builtin::AtomicCas;
  size_t n = cas ? 3 : 2;
  std::vector<Value *> ops{p};
  for (size_t i = 1; i < n; ++i)
    ops.push_back(lowerAs(e->args[i].get(), vt));
  if (e->args.size() > n)
    ops.push_back(lowerAs(e->args[n].get(), boolOf(shape)));
  if (cas)
    return convert(emit(OpKind::AtomicCas, vt, ops), e->type);
  return convert(emit(OpKind::AtomicRMW, vt, ops, {{"kind", std::string(atomicKind(e->builtin))}}),
                 e->type);
}

Value *FunctionLowerer::lowerPrint(const CallExpr *e) {
  std::string label;
  size_t first = 0;
  if (!e->args.empty() && e->args[0]->kind == ExprKind::StringLiteral) {
    label = e->args[0]->as<StringLiteralExpr>()->value;
    first = 1;
  }
  std::vector<Value *> values;
  for (size_t i = first; i < e->args.size(); ++i)
    values.push_back(lowerExpr(e->args[i].get()));
  emitOp(OpKind::Print, {}, values, {{"label", label}});
  return nullptr;
}

Value *FunctionLowerer::lowerAssert(const CallExpr *e) {
  Value *c = lowerCond(e->args[0].get());
  std::string message;
  if (e->args.size() > 1 && e->args[1]->kind == ExprKind::StringLiteral)
    message = e->args[1]->as<StringLiteralExpr>()->value;
  else
    message = assertConditionText(e);
  if (message.empty())
    message = "assertion failed";
  emitOp(OpKind::Assert, {}, {c}, {{"message", message}});
  return nullptr;
}

std::string FunctionLowerer::assertConditionText(const CallExpr *e) const {
  // The condition as written, when the call is spelled on one line in a file.
  SourceLoc l = e->calleeLoc;
  if (!l.valid() || l.expansion != 0 || l.col == 0)
    return "";
  std::string_view line = sm_.lineText(l.file, l.line);
  size_t i = l.col - 1 + e->callee.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
    ++i;
  if (i >= line.size() || line[i] != '(')
    return "";
  size_t start = ++i;
  int depth = 0;
  for (; i < line.size(); ++i) {
    char ch = line[i];
    if (ch == '"' || ch == '\'') {
      for (++i; i < line.size() && line[i] != ch; ++i)
        if (line[i] == '\\')
          ++i;
      continue;
    }
    if (ch == '(' || ch == '[')
      ++depth;
    else if ((ch == ')' || ch == ']') && depth-- == 0)
      break;
    else if (ch == ',' && depth == 0)
      break;
  }
  if (i >= line.size())
    return "";
  return std::string(trim(line.substr(start, i - start)));
}

Value *FunctionLowerer::inlineHelper(const CallExpr *e) {
  const FunctionDecl *f = e->function;
  bool isVoid = !f || f->returnType.isVoid;
  auto fail = [&]() -> Value * { return isVoid ? nullptr : zeroOf(e->type); };
  if (tooLarge_)
    return fail();
  if (!f || !f->body) {
    unsupported(e->loc, "a call to '" + e->callee + "', which has no body", e->type);
    return fail();
  }
  if (std::find(inlining_.begin(), inlining_.end(), f) != inlining_.end()) {
    diags_.report(DiagId::err_lower_recursive_call, e->loc, {f->name});
    return fail();
  }
  if (inlining_.size() + 1 >= kMaxCallDepth ||
      (stackBase_ && stackUsedSince(stackBase_) > kMaxCallStackBytes)) {
    diags_.report(DiagId::err_sema_calls_too_deep, e->loc, {std::to_string(kMaxCallDepth)});
    return fail();
  }
  if (e->args.size() != f->params.size()) {
    unsupported(e->loc, "a call with the wrong number of arguments", e->type);
    return fail();
  }
  std::vector<Value *> args;
  for (size_t i = 0; i < e->args.size(); ++i)
    args.push_back(lowerAs(e->args[i].get(), f->params[i]->type));

  // The helper runs in its own scope: its parameters, locals, loops and
  // return flag; the caller's state comes back afterwards.
  auto savedEnv = env_;
  auto savedLoops = std::move(loops_);
  loops_.clear();
  const VarDecl *savedReturned = returned_, *savedResult = result_;
  inlining_.push_back(f);
  for (size_t i = 0; i < args.size(); ++i)
    bind(f->params[i].get(), args[i]);
  const std::vector<StmtPtr> &body = f->body->body;
  returned_ = nullptr;
  if (needsReturnFlag(body)) {
    returned_ = newFlag("returned");
    bind(returned_, constBool(false));
  }
  result_ = isVoid ? nullptr : newVar("result", f->resolvedReturn);
  if (result_)
    bind(result_, nullptr);
  lowerStmts(body, 0);
  Value *result = result_ ? valueOf(result_) : nullptr;
  inlining_.pop_back();
  env_ = std::move(savedEnv);
  loops_ = std::move(savedLoops);
  returned_ = savedReturned;
  result_ = savedResult;

  if (isVoid)
    return nullptr;
  return convert(result, e->type);
}

} // namespace tc::lower
