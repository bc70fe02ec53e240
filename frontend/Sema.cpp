//===- Sema.cpp - Semantic analysis: functions, scopes, declarations ----===//
//
// The entry point (tc::analyze), the function table (helpers are analysed on
// demand at their first call, which also finds recursion), C block scoping,
// declarations with their tile shapes (docs/language.md: dims are constant
// powers of two, at most 2^20 elements) and attributes.
//
//===----------------------------------------------------------------------===//
#include "frontend/Sema.h"
#include "frontend/SemaInternal.h"

#include <algorithm>

namespace tc {

bool analyze(ast::TranslationUnit &tu, DiagEngine &diags, const std::string &kernelName) {
  sema::Sema s(tu, diags, kernelName);
  return s.run();
}

} // namespace tc

namespace tc::sema {

using namespace ast;

void Sema::report(DiagId id, SourceLoc loc, std::vector<std::string> args, uint32_t length) {
  if (defaultSeverity(id) == Severity::Error)
    hadError_ = true;
  diags_.report(id, loc, std::move(args), length);
}

void Sema::reportAt(DiagId id, const Expr *e, std::vector<std::string> args) {
  report(id, e->loc, std::move(args), e->length);
}

bool Sema::run() {
  chooseImplicitKernel();
  char base;
  stackBase_ = &base;
  collectFunctions();
  // --kernel NAME naming a kernel of the source: only that kernel (and the
  // helpers it calls, analysed at their calls) is analysed and lowered; the
  // other functions were parsed but may use macros this compile lacks. An
  // unknown name analyses everything (the tools then list the kernels).
  const FunctionDecl *only = nullptr;
  if (!kernelName_.empty())
    for (auto &fn : tu_.functions)
      if (fn && fn->isKernel && fn->body && fn->name == kernelName_ && !lookupBuiltin(fn->name))
        only = fn.get();
  for (auto &fn : tu_.functions) {
    if (only && fn && fn.get() != only) {
      fn->skipped = fn->isKernel;
      continue;
    }
    if (!fn || !fn->body || lookupBuiltin(fn->name))
      continue;
    auto it = functions_.find(fn->name);
    if (it == functions_.end() || it->second != fn.get())
      continue; // a redefinition: already reported
    if (fnState_[fn.get()] == FnState::NotStarted)
      analyzeFunction(fn.get());
  }
  return !hadError_;
}

// The original's 2019-2020 kernels are plain `void f(...)` functions, and its
// runtime launched the first function of the source. When no function is
// `__global__`, the `void` function the tools name (--kernel), else the first
// `void` function with a body, becomes the kernel, with a note saying so.
// (A source without any kernel is an error of lowering: sema still checks its
// helpers.)
void Sema::chooseImplicitKernel() {
  FunctionDecl *first = nullptr, *named = nullptr;
  for (auto &fn : tu_.functions) {
    if (!fn)
      continue;
    if (fn->isKernel)
      return;
    if (!fn->body || !fn->returnType.isVoid || fn->returnType.isPtr || lookupBuiltin(fn->name))
      continue;
    if (!first)
      first = fn.get();
    if (!named && fn->name == kernelName_)
      named = fn.get();
  }
  FunctionDecl *pick = named ? named : first;
  if (!pick)
    return;
  pick->isKernel = true;
  report(DiagId::note_sema_implicit_kernel, pick->loc,
         {pick->name, named ? "--kernel names it" : "it is the first 'void' function"},
         static_cast<uint32_t>(pick->name.size()));
}

// Registers every function by name: builtin names and redefinitions are errors;
// a definition replaces an earlier body-less declaration.
void Sema::collectFunctions() {
  for (auto &fn : tu_.functions) {
    if (!fn)
      continue;
    if (lookupBuiltin(fn->name)) {
      report(DiagId::err_sema_builtin_redefinition, fn->loc, {fn->name},
             static_cast<uint32_t>(fn->name.size()));
      continue;
    }
    auto [it, inserted] = functions_.try_emplace(fn->name, fn.get());
    if (inserted)
      continue;
    if (!fn->body)
      continue; // a declaration after the definition (or another declaration)
    if (!it->second->body) {
      it->second = fn.get();
      continue;
    }
    report(DiagId::err_sema_redefinition, fn->loc, {fn->name}, static_cast<uint32_t>(fn->name.size()));
    report(DiagId::note_sema_previous_definition, it->second->loc);
  }
}

// Analyses one function body in a fresh context; nested analyses (a helper
// reached by a call) save and restore the caller's context.
void Sema::analyzeFunction(FunctionDecl *fn) {
  fnState_[fn] = FnState::InProgress;
  ++analysing_;
  FunctionContext ctx;
  ctx.fn = fn;
  FunctionContext *saved = fn_;
  fn_ = &ctx;
  pushScope();
  if (fn->isKernel && !fn->returnType.isVoid)
    report(DiagId::err_sema_kernel_return_type, fn->loc, {fn->name},
           static_cast<uint32_t>(fn->name.size()));
  for (auto &p : fn->params)
    if (p)
      checkParam(p.get(), fn->isKernel);
  if (fn->body)
    checkCompound(fn->body.get(), /*newScope=*/false);
  if (!fn->isKernel && !fn->returnType.isVoid)
    resolveHelperReturn(fn);
  popScope();
  callDepth_[fn] = ctx.calleeDepth + 1;
  fn_ = saved;
  --analysing_;
  fnState_[fn] = FnState::Done;
}

// A helper returning a value must end with `return expr;` (it is inlined);
// its type is the declared element type in the returned value's shape.
void Sema::resolveHelperReturn(FunctionDecl *fn) {
  const auto &body = fn->body->body;
  // (`return;` at the end has its own error: a value is missing.)
  bool endsWithReturn = !body.empty() && body.back() && body.back()->kind == StmtKind::Return;
  if (!endsWithReturn)
    report(DiagId::err_not_supported, fn->loc,
           {"helper '" + fn->name + "' must end with a 'return' statement"},
           static_cast<uint32_t>(fn->name.size()));
  if (fn_->returnShape && fn_->returnTypeValid)
    fn->resolvedReturn = ir::Type{fn->returnType.dtype, fn->returnType.isPtr, *fn_->returnShape};
  else
    badReturn_.insert(fn);
}

// Variables and parameters have a scalar element type or point to one.
bool Sema::checkNotVoid(const VarDecl *v) {
  if (!v->elem.isVoid)
    return true;
  report(v->elem.isPtr ? DiagId::err_sema_void_pointer : DiagId::err_sema_void_variable, v->loc,
         {v->name}, static_cast<uint32_t>(std::max<size_t>(v->name.size(), 1)));
  return false;
}

// Parameters: kernels take scalars and pointers to scalar dtypes; helpers may
// also take tiles (arguments broadcast to the declared shape).
void Sema::checkParam(VarDecl *p, bool inKernel) {
  bool valid = checkNotVoid(p);
  std::optional<ir::Shape> shape = evalShape(p->shape);
  if (!shape) {
    valid = false;
  } else if (inKernel && !shape->empty()) {
    report(DiagId::err_sema_kernel_param_tile, p->loc, {p->name},
           static_cast<uint32_t>(p->name.size()));
    valid = false;
  }
  if (valid)
    p->type = ir::Type{p->elem.dtype, p->elem.isPtr, *shape};
  else
    invalidDecls_.insert(p);
  checkAttributes(p);
  if (!p->name.empty())
    declare(p);
  if (p->init) // default arguments are not part of the language; type them anyway
    checkValue(p->init.get());
}

// A local declaration: the name is visible from its declarator on (C), so an
// initialiser that reads it reads an unassigned variable.
void Sema::checkLocalDecl(VarDecl *v) {
  bool valid = checkNotVoid(v);
  std::optional<ir::Shape> shape = evalShape(v->shape);
  if (!shape)
    valid = false;
  if (valid)
    v->type = ir::Type{v->elem.dtype, v->elem.isPtr, *shape};
  else
    invalidDecls_.insert(v);
  checkAttributes(v);
  if (!v->name.empty())
    declare(v);
  noteUnassigned(v);
  if (!v->init)
    return;
  if (checkValue(v->init.get()) && valid)
    checkConvertible(v->init.get(), v->type);
  noteAssigned(v);
}

// Evaluates tile dims: constant positive powers of two, at most 2^20 elements.
std::optional<ir::Shape> Sema::evalShape(std::vector<ExprPtr> &dims) {
  ir::Shape shape;
  bool ok = true;
  for (auto &d : dims) {
    std::optional<int64_t> v = evalDim(d.get());
    if (v)
      shape.push_back(*v);
    else
      ok = false;
  }
  if (!ok)
    return std::nullopt;
  __int128 total = 1;
  for (int64_t d : shape) {
    total *= d; // each d <= 2^20, so stopping past 2^100 avoids overflow
    if (total > (static_cast<__int128>(1) << 100))
      break;
  }
  if (total > kMaxTileElements) {
    report(DiagId::err_sema_tile_too_large, dims.front()->loc, {int128Str(total)},
           dims.front()->length);
    return std::nullopt;
  }
  return shape;
}

std::optional<int64_t> Sema::evalDim(Expr *dim) {
  if (!checkValue(dim))
    return std::nullopt;
  if (!dim->constant || dim->constant->kind != ConstValue::Kind::Int) {
    reportAt(DiagId::err_sema_dim_not_const, dim);
    return std::nullopt;
  }
  __int128 v = dim->constant->i;
  if (v <= 0) {
    reportAt(DiagId::err_sema_dim_not_positive, dim, {int128Str(v)});
    return std::nullopt;
  }
  if (v > kMaxTileElements) {
    reportAt(DiagId::err_sema_tile_too_large, dim, {int128Str(v)});
    return std::nullopt;
  }
  if ((v & (v - 1)) != 0) {
    reportAt(DiagId::err_sema_dim_not_pow2, dim, {int128Str(v)});
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

// Adds `v` to the innermost scope; a name declared twice in one scope is an error.
bool Sema::declare(VarDecl *v) {
  auto &scope = fn_->scopes.back();
  auto [it, inserted] = scope.try_emplace(v->name, v);
  if (inserted)
    return true;
  report(DiagId::err_sema_redefinition, v->loc, {v->name}, static_cast<uint32_t>(v->name.size()));
  report(DiagId::note_sema_previous_definition, it->second->loc);
  return false;
}

VarDecl *Sema::lookup(const std::string &name) const {
  for (auto it = fn_->scopes.rbegin(); it != fn_->scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return found->second;
  }
  return nullptr;
}

void Sema::checkAttributes(VarDecl *v) {
  for (Attribute &a : v->attrs)
    checkAttribute(a, v);
}

namespace {
/// `__multipleof__` and `multipleof` name the same attribute.
std::string attrName(const std::string &raw) {
  std::string n = raw;
  if (n.size() > 4 && n.starts_with("__") && n.ends_with("__"))
    n = n.substr(2, n.size() - 4);
  else if (n.size() > 2 && n.starts_with("__"))
    n = n.substr(2);
  return n;
}
} // namespace

// multipleof(N) / aligned(N): a positive constant (aligned: a power of two) on
// an integer or pointer parameter (aligned: pointer); noalias, readonly,
// writeonly: no argument, on pointer parameters; retune (the original's
// auto-tuning hint, `__retune`): no argument, accepted anywhere and ignored.
// Elsewhere: a warning.
void Sema::checkAttribute(Attribute &a, VarDecl *v) {
  std::string name = attrName(a.name);
  uint32_t len = static_cast<uint32_t>(a.name.size());
  bool takesValue = name == "multipleof" || name == "aligned";
  bool isFlag = name == "noalias" || name == "readonly" || name == "writeonly" || name == "retune";
  bool argsOk = true;
  for (auto &arg : a.args)
    argsOk = checkValue(arg.get()) && argsOk;
  if (!takesValue && !isFlag) {
    report(DiagId::warn_sema_unknown_attr, a.loc, {a.name}, len);
    return;
  }
  if (isFlag && !a.args.empty()) {
    report(DiagId::err_sema_attr_args, a.loc, {name, "no arguments"}, len);
    return;
  }
  if (name == "retune")
    return; // means nothing to the semantics or the code
  if (takesValue && !evalAttributeValue(a, name, argsOk))
    return;
  checkAttributeTarget(a, name, v);
}

// The argument of multipleof / aligned, stored in Attribute::value.
bool Sema::evalAttributeValue(Attribute &a, const std::string &name, bool argsOk) {
  const char *need = name == "aligned" ? "one positive power-of-two constant argument"
                                       : "one positive constant integer argument";
  if (a.args.size() != 1) {
    report(DiagId::err_sema_attr_args, a.loc, {name, need}, static_cast<uint32_t>(a.name.size()));
    return false;
  }
  if (!argsOk)
    return false;
  const Expr *arg = a.args[0].get();
  const std::optional<ConstValue> &c = arg->constant;
  bool good = c && c->kind == ConstValue::Kind::Int && c->i > 0 && c->i <= INT64_MAX &&
              (name != "aligned" || (c->i & (c->i - 1)) == 0);
  if (!good) {
    report(DiagId::err_sema_attr_args, arg->loc, {name, need}, arg->length);
    return false;
  }
  a.value = static_cast<int64_t>(c->i);
  return true;
}

// Attributes are hints about parameters: elsewhere they are ignored (a warning).
void Sema::checkAttributeTarget(const Attribute &a, const std::string &name, const VarDecl *v) {
  uint32_t len = static_cast<uint32_t>(a.name.size());
  if (!v->isParam) {
    report(DiagId::warn_sema_attr_ignored, a.loc, {name, "it applies to parameters only"}, len);
    return;
  }
  bool isPtr = v->elem.isPtr, isInteger = !v->elem.isPtr && isInt(v->elem.dtype);
  if (name == "multipleof" && !isPtr && !isInteger)
    report(DiagId::warn_sema_attr_ignored, a.loc,
           {name, "it applies to integer and pointer parameters"}, len);
  else if (name != "multipleof" && !isPtr)
    report(DiagId::warn_sema_attr_ignored, a.loc, {name, "it applies to pointer parameters"}, len);
}

} // namespace tc::sema
