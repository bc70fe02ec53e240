//===- SemaBuiltins.cpp - Builtin and helper-function calls --------------===//
//
// Builtins are recognised by name (a function may not take a builtin's name).
// Elementwise builtins (fma, min, max, select/where, umulhi, cdiv) promote and
// broadcast their arguments like binary operators; their `operandType` is the
// promoted dtype and broadcast shape. Atomics convert the value(s) to the
// pointee dtype and broadcast them to the pointer's shape, like a store.
// Helper calls convert each argument to its parameter's type as assignment
// does; helpers are analysed at their first call, so a call that reaches a
// function still being analysed is recursion (not supported: helpers are
// inlined).
//
//===----------------------------------------------------------------------===//
#include "frontend/SemaInternal.h"
#include "support/EditDistance.h"

#include <cmath>
#include <cstdint>

namespace tc::sema {

using namespace ast;
using CKind = ConstValue::Kind;

namespace {
struct BuiltinName {
  std::string_view name;
  Builtin builtin;
};

constexpr BuiltinName kBuiltins[] = {
    {"get_program_id", Builtin::GetProgramId},
    {"get_num_programs", Builtin::GetNumPrograms},
    {"exp", Builtin::Exp},
    {"exp2", Builtin::Exp2},
    {"log", Builtin::Log},
    {"log2", Builtin::Log2},
    {"sqrt", Builtin::Sqrt},
    {"rsqrt", Builtin::Rsqrt},
    {"sin", Builtin::Sin},
    {"cos", Builtin::Cos},
    {"abs", Builtin::Abs},
    {"floor", Builtin::Floor},
    {"ceil", Builtin::Ceil},
    {"fma", Builtin::Fma},
    {"min", Builtin::Min},
    {"max", Builtin::Max},
    {"select", Builtin::Select},
    {"where", Builtin::Where},
    {"umulhi", Builtin::UMulHi},
    {"cdiv", Builtin::Cdiv},
    {"atomic_add", Builtin::AtomicAdd},
    {"atomic_max", Builtin::AtomicMax},
    {"atomic_min", Builtin::AtomicMin},
    {"atomic_xchg", Builtin::AtomicXchg},
    {"atomic_cas", Builtin::AtomicCas},
    {"atomic_and", Builtin::AtomicAnd},
    {"atomic_or", Builtin::AtomicOr},
    {"atomic_xor", Builtin::AtomicXor},
    {"__debug_barrier", Builtin::DebugBarrier},
    {"print", Builtin::Print},
    {"assert", Builtin::Assert},
    // C's float math names (<math.h>), aliases of the builtins above.
    {"expf", Builtin::Exp},
    {"exp2f", Builtin::Exp2},
    {"logf", Builtin::Log},
    {"log2f", Builtin::Log2},
    {"sqrtf", Builtin::Sqrt},
    {"rsqrtf", Builtin::Rsqrt},
    {"sinf", Builtin::Sin},
    {"cosf", Builtin::Cos},
    {"fabsf", Builtin::Abs},
    {"fabs", Builtin::Abs},
    {"floorf", Builtin::Floor},
    {"ceilf", Builtin::Ceil},
    {"fmaf", Builtin::Fma},
    {"fminf", Builtin::Min},
    {"fmaxf", Builtin::Max},
    {"fmin", Builtin::Min},
    {"fmax", Builtin::Max},
};

/// A note for a reduction written as in Triton's Python DSL (`sum(x)`,
/// `max(x)`), or "" when `callee` is no such name.
std::string reductionHint(std::string_view callee) {
  std::string_view op;
  if (callee == "sum")
    op = "+";
  else if (callee == "max" || callee == "fmax" || callee == "fmaxf")
    op = "max";
  else if (callee == "min" || callee == "fmin" || callee == "fminf")
    op = "min";
  else
    return "";
  std::string o(op);
  return "a reduction is a subscript in Triton-C: x[" + o + "] reduces a 1-D tile, x[:, " + o +
         "] the second axis of a 2-D one" +
         (op == "+" ? "" : "; " + std::string(callee) + "(a, b) is elementwise");
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// "1 argument", "2 or 3 arguments", "at least 1 argument".
std::string arityStr(size_t min, size_t max) {
  if (min == max)
    return plural(min, "argument");
  if (max == SIZE_MAX)
    return "at least " + plural(min, "argument");
  if (max == min + 1)
    return std::to_string(min) + " or " + plural(max, "argument");
  return std::to_string(min) + " to " + plural(max, "argument");
}
} // namespace

std::optional<Builtin> lookupBuiltin(std::string_view name) {
  for (const BuiltinName &b : kBuiltins)
    if (b.name == name)
      return b.builtin;
  return std::nullopt;
}

// Calls of __debug_barrier, print, assert and void helpers have no value: they
// are typed (for the contract) with a default type that means nothing, and
// checkValue rejects them wherever a value is needed.
bool Sema::isVoidCall(const Expr *e) const {
  if (!e || e->kind != ExprKind::Call)
    return false;
  const auto *c = e->as<CallExpr>();
  switch (c->builtin) {
  case Builtin::DebugBarrier:
  case Builtin::Print:
  case Builtin::Assert: return true;
  case Builtin::None: return c->function && c->function->returnType.isVoid;
  default: return false;
  }
}

bool Sema::checkCall(CallExpr *e) {
  if (std::optional<Builtin> b = lookupBuiltin(e->callee)) {
    e->builtin = *b;
    return checkBuiltinCall(e);
  }
  return checkHelperCall(e);
}

bool Sema::checkAllArgs(CallExpr *e) {
  bool ok = true;
  for (auto &a : e->args)
    ok = checkValue(a.get()) && ok;
  return ok;
}

// Reports a wrong number of arguments (the arguments are still analysed).
bool Sema::checkArgCount(CallExpr *e, size_t min, size_t max) {
  size_t n = e->args.size();
  if (n >= min && n <= max)
    return true;
  report(DiagId::err_sema_arg_count, e->calleeLoc, {e->callee, arityStr(min, max), std::to_string(n)},
         static_cast<uint32_t>(e->callee.size()));
  // max(x) / min(x) of one tile: Triton's Python DSL reduces; Triton-C subscripts.
  if (n == 1 && min == 2)
    if (std::string hint = reductionHint(e->callee); !hint.empty())
      report(DiagId::note_sema_python_habit, e->calleeLoc, {hint},
             static_cast<uint32_t>(e->callee.size()));
  for (auto &a : e->args)
    if (a && a->kind != ExprKind::StringLiteral)
      checkValue(a.get());
  return false;
}

bool Sema::checkBuiltinCall(CallExpr *e) {
  switch (e->builtin) {
  case Builtin::GetProgramId:
  case Builtin::GetNumPrograms: return checkAxisBuiltin(e);
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
  case Builtin::Ceil: return checkMathBuiltin(e);
  case Builtin::Fma:
  case Builtin::Min:
  case Builtin::Max:
  case Builtin::UMulHi:
  case Builtin::Cdiv: return checkElementwiseBuiltin(e);
  case Builtin::Select:
  case Builtin::Where: return checkSelectBuiltin(e);
  case Builtin::AtomicAdd:
  case Builtin::AtomicMax:
  case Builtin::AtomicMin:
  case Builtin::AtomicXchg:
  case Builtin::AtomicCas:
  case Builtin::AtomicAnd:
  case Builtin::AtomicOr:
  case Builtin::AtomicXor: return checkAtomicBuiltin(e);
  case Builtin::DebugBarrier:
    if (!checkArgCount(e, 0, 0))
      return false;
    e->typed = true; // void
    return true;
  case Builtin::Print: return checkPrintBuiltin(e);
  case Builtin::Assert: return checkAssertBuiltin(e);
  case Builtin::None: break;
  }
  assert(false && "not a builtin");
  return false;
}

// get_program_id(axis), get_num_programs(axis): a constant axis 0..2; int32.
bool Sema::checkAxisBuiltin(CallExpr *e) {
  if (!checkArgCount(e, 1, 1) || !checkValue(e->args[0].get()))
    return false;
  const Expr *a = e->args[0].get();
  if (!a->constant || a->constant->kind != CKind::Int || a->constant->i < 0 || a->constant->i > 2) {
    reportAt(DiagId::err_sema_builtin_axis, a, {e->callee});
    return false;
  }
  e->type = ir::Type::scalar(DType::I32);
  e->operandType = e->type;
  e->typed = true;
  return true;
}

// exp, log, sqrt, ...: floating-point arguments (an int is an error that
// suggests a cast); abs also takes integers. The result has the argument's type.
bool Sema::checkMathBuiltin(CallExpr *e) {
  if (!checkArgCount(e, 1, 1) || !checkValue(e->args[0].get()))
    return false;
  Expr *a = e->args[0].get();
  bool isAbs = e->builtin == Builtin::Abs;
  if (a->type.isPtr || (isAbs && a->type.dtype == DType::Bool)) {
    reportAt(DiagId::err_sema_builtin_arg, a,
             {typeStr(a), e->callee, isAbs ? "expects a number" : "expects a floating-point number"});
    return false;
  }
  if (!isAbs && !isFloat(a->type.dtype)) {
    reportAt(DiagId::err_sema_math_int, a, {e->callee, typeStr(a)});
    return false;
  }
  if (isAbs && a->constant) {
    const ConstValue &v = *a->constant;
    return setConstant(e, v.kind == CKind::Float ? ConstValue::ofFloat(std::fabs(v.f))
                                                 : ConstValue::ofInt(v.i < 0 ? -v.i : v.i));
  }
  if (!checkMaterializable(a))
    return false;
  e->type = a->type;
  e->operandType = a->type;
  e->typed = true;
  return true;
}

// fma(a, b, c), min/max(a, b), umulhi(a, b), cdiv(a, b): promoted and broadcast
// like binary operators. min, max and cdiv of constants fold.
bool Sema::checkElementwiseBuiltin(CallExpr *e) {
  size_t n = e->builtin == Builtin::Fma ? 3 : 2;
  if (!checkArgCount(e, n, n) || !checkAllArgs(e))
    return false;
  std::vector<Expr *> ops;
  bool allConst = true;
  for (auto &a : e->args) {
    if (a->type.isPtr) {
      reportAt(DiagId::err_sema_builtin_arg, a.get(), {typeStr(a.get()), e->callee, "expects numbers"});
      return false;
    }
    ops.push_back(a.get());
    allConst = allConst && a->constant;
  }
  if (std::optional<bool> folded = allConst ? foldElementwiseBuiltin(e) : std::nullopt)
    return *folded;
  std::optional<DType> d = promoteOperands(ops);
  if (!d || !checkElementwiseDType(e, *d))
    return false;
  std::optional<ir::Shape> s = ir::Shape{};
  for (Expr *op : ops)
    if (s)
      s = broadcast(*s, op->type.shape, e);
  if (!s)
    return false;
  e->operandType = ir::Type::tile(*d, *s);
  e->type = e->operandType;
  e->typed = true;
  return true;
}

// min, max and cdiv of constants: the folded result (true), an error (false),
// or nullopt when the builtin does not fold.
std::optional<bool> Sema::foldElementwiseBuiltin(CallExpr *e) {
  const ConstValue &a = *e->args[0]->constant, &b = *e->args[1]->constant;
  if (e->builtin == Builtin::Min || e->builtin == Builtin::Max)
    return setConstant(e, foldMinMax(e->builtin == Builtin::Max, a, b));
  if (e->builtin != Builtin::Cdiv || a.kind != ConstValue::Kind::Int ||
      b.kind != ConstValue::Kind::Int)
    return std::nullopt;
  FoldResult r = foldCdiv(a, b);
  if (!reportFoldIssue(r, e, BinaryOp::Div))
    return false;
  return setConstant(e, *r.value);
}

// The promoted dtype each elementwise builtin accepts.
bool Sema::checkElementwiseDType(CallExpr *e, DType d) {
  std::string dn(langName(d));
  if (e->builtin == Builtin::Fma && !isFloat(d)) {
    reportAt(DiagId::err_sema_math_int, e, {e->callee, dn});
    return false;
  }
  if (e->builtin == Builtin::UMulHi && !(isInt(d) && bitWidth(d) >= 32)) {
    reportAt(DiagId::err_sema_builtin_arg, e, {dn, e->callee, "expects 32- or 64-bit integers"});
    return false;
  }
  if (e->builtin == Builtin::Cdiv && !isInt(d)) {
    reportAt(DiagId::err_sema_builtin_arg, e, {dn, e->callee, "expects integers"});
    return false;
  }
  return true;
}

// select(c, a, b) / where(c, a, b): c becomes bool; a and b promote (or are
// pointers to one dtype); all three broadcast.
bool Sema::checkSelectBuiltin(CallExpr *e) {
  if (!checkArgCount(e, 3, 3))
    return false;
  bool c = checkValue(e->args[0].get()) && convertToBool(e->args[0], e->callee.c_str());
  bool ok = checkValue(e->args[1].get());
  ok = checkValue(e->args[2].get()) && ok;
  if (!c || !ok)
    return false;
  Expr *a = e->args[1].get(), *b = e->args[2].get();
  std::optional<ir::Shape> s = broadcast(e->args[0]->type.shape, a->type.shape, e);
  if (s)
    s = broadcast(*s, b->type.shape, e);
  if (!s)
    return false;
  if (a->type.isPtr || b->type.isPtr) {
    if (!a->type.isPtr || !b->type.isPtr || a->type.dtype != b->type.dtype) {
      reportAt(DiagId::err_sema_builtin_arg, a->type.isPtr ? b : a,
               {typeStr(a->type.isPtr ? b : a), e->callee,
                "both values must be numbers or pointers to the same type"});
      return false;
    }
    e->operandType = ir::Type::ptrTile(a->type.dtype, *s);
  } else {
    std::optional<DType> d = promoteOperands({a, b});
    if (!d)
      return false;
    e->operandType = ir::Type::tile(*d, *s);
  }
  e->type = e->operandType;
  e->typed = true;
  return true;
}

// atomic_OP(ptr, value[, mask]) and atomic_cas(ptr, cmp, value[, mask]): the
// value(s) convert to the pointee dtype and broadcast to the pointer's shape;
// the mask is bool of a shape that broadcasts to it; the result is the old
// values (pointee dtype, pointer shape).
bool Sema::checkAtomicBuiltin(CallExpr *e) {
  size_t nv = e->builtin == Builtin::AtomicCas ? 2 : 1;
  if (!checkArgCount(e, nv + 1, nv + 2) || !checkAllArgs(e))
    return false;
  Expr *p = e->args[0].get();
  if (!p->type.isPtr) {
    reportAt(DiagId::err_sema_builtin_arg, p, {typeStr(p), e->callee, "the first argument must be a pointer"});
    return false;
  }
  DType t = p->type.dtype;
  bool bitwise = e->builtin == Builtin::AtomicAnd || e->builtin == Builtin::AtomicOr ||
                 e->builtin == Builtin::AtomicXor;
  if (t == DType::Bool || (bitwise && !isInt(t))) {
    reportAt(DiagId::err_sema_builtin_arg, p,
             {typeStr(p), e->callee, bitwise ? "expects a pointer to integers" : "expects a pointer to numbers"});
    return false;
  }
  ir::Type val = ir::Type::tile(t, p->type.shape);
  bool ok = true;
  for (size_t i = 1; i <= nv; ++i)
    ok = checkConvertible(e->args[i].get(), val) && ok;
  if (e->args.size() == nv + 2)
    ok = checkMask(e->args[nv + 1], p->type.shape) && ok;
  if (!ok)
    return false;
  e->type = val;
  e->operandType = val;
  e->typed = true;
  return true;
}

// print("label", values...): a string literal first; any values after it.
bool Sema::checkPrintBuiltin(CallExpr *e) {
  if (!checkArgCount(e, 1, SIZE_MAX))
    return false;
  bool ok = true;
  Expr *label = e->args[0].get();
  if (label && label->kind == ExprKind::StringLiteral) {
    label->typed = true;
  } else {
    if (label && checkValue(label))
      reportAt(DiagId::err_sema_print_label, label);
    ok = false;
  }
  for (size_t i = 1; i < e->args.size(); ++i)
    ok = checkValue(e->args[i].get()) && checkMaterializable(e->args[i].get()) && ok;
  if (!ok)
    return false;
  e->typed = true; // void
  return true;
}

// assert(cond[, "message"]): cond becomes bool (scalar or tile).
bool Sema::checkAssertBuiltin(CallExpr *e) {
  if (!checkArgCount(e, 1, 2))
    return false;
  bool ok = checkValue(e->args[0].get()) && convertToBool(e->args[0], "assert");
  if (e->args.size() == 2) {
    Expr *msg = e->args[1].get();
    if (msg && msg->kind == ExprKind::StringLiteral) {
      msg->typed = true;
    } else {
      if (msg && checkValue(msg))
        reportAt(DiagId::err_sema_assert_message, msg);
      ok = false;
    }
  }
  if (!ok)
    return false;
  e->typed = true; // void
  return true;
}

// A helper call: defined (in any order), not a kernel, not recursive; each
// argument converts to its parameter's type; the type is the helper's return.
bool Sema::checkHelperCall(CallExpr *e) {
  FunctionDecl *f = resolveHelper(e);
  if (!f) {
    checkAllArgs(e);
    return false;
  }
  uint32_t len = static_cast<uint32_t>(e->callee.size());
  // Analysed on demand, so a chain of calls is a chain of nested analyses: stop
  // it at the limit (a chain that deep is an error anyway).
  if (fnState_[f] == FnState::NotStarted &&
      (analysing_ >= kMaxCallDepth ||
       (stackBase_ && stackUsedSince(stackBase_) > kMaxCallStackBytes))) {
    report(DiagId::err_sema_calls_too_deep, e->calleeLoc, {std::to_string(kMaxCallDepth)}, len);
    return false;
  }
  if (fnState_[f] == FnState::NotStarted)
    analyzeFunction(f);
  unsigned depth = callDepth_[f];
  if (depth + 1 > kMaxCallDepth) {
    if (depth <= kMaxCallDepth) // once, at the call that first goes over
      report(DiagId::err_sema_calls_too_deep, e->calleeLoc, {std::to_string(kMaxCallDepth)}, len);
    fn_->calleeDepth = kMaxCallDepth + 1; // its callers are over too: no second error
    return false;
  }
  fn_->calleeDepth = std::max(fn_->calleeDepth, depth);
  e->function = f;
  if (!checkArgCount(e, f->params.size(), f->params.size()))
    return false;
  bool ok = true;
  for (size_t i = 0; i < e->args.size(); ++i) {
    bool argOk = checkValue(e->args[i].get());
    VarDecl *p = f->params[i].get();
    if (argOk && p && !invalidDecls_.count(p))
      argOk = checkConvertible(e->args[i].get(), p->type);
    ok = argOk && ok;
  }
  if (!ok)
    return false;
  if (!f->returnType.isVoid) {
    if (badReturn_.count(f))
      return false; // the helper's own errors explain it
    e->type = f->resolvedReturn;
  }
  e->typed = true; // void helpers: see isVoidCall
  return true;
}

// The helper a call names, or null after a diagnostic: unknown, a kernel, not
// defined, or being analysed (recursion).
FunctionDecl *Sema::resolveHelper(CallExpr *e) {
  uint32_t len = static_cast<uint32_t>(e->callee.size());
  auto it = functions_.find(e->callee);
  FunctionDecl *f = it == functions_.end() ? nullptr : it->second;
  if (!f) {
    std::vector<std::string> names;
    for (const BuiltinName &b : kBuiltins)
      names.emplace_back(b.name);
    for (const auto &[name, decl] : functions_)
      names.push_back(name);
    // Reductions are subscripts: no did-you-mean for Python's names of them.
    std::string hint = reductionHint(e->callee);
    report(DiagId::err_sema_undeclared_function, e->calleeLoc,
           {e->callee, hint.empty() ? didYouMean(e->callee, names) : ""}, len);
    if (!hint.empty())
      report(DiagId::note_sema_python_habit, e->calleeLoc, {hint}, len);
  } else if (f->isKernel) {
    report(DiagId::err_sema_kernel_called, e->calleeLoc, {e->callee}, len);
  } else if (!f->body) {
    report(DiagId::err_sema_function_not_defined, e->calleeLoc, {e->callee}, len);
    report(DiagId::note_sema_declared_here, f->loc, {f->name}, static_cast<uint32_t>(f->name.size()));
  } else if (fnState_[f] == FnState::InProgress) {
    report(DiagId::err_sema_recursive_call, e->calleeLoc, {}, len);
  } else {
    return f;
  }
  return nullptr;
}

} // namespace tc::sema
