//===- Lower.cpp - AST to tile IR: kernels, statements, control flow ------===//
//
// One ir::Function per kernel. Variables are SSA values tracked in an
// environment; `if` and `while` ops merge and carry them (see LowerImpl.h).
// Loops always become `while`: `for (init; cond; step) body` is init followed
// by while(before: cond; after: body, step), and `do body while (cond)` is a
// while whose before-region runs the body and whose after-region only yields.
//
//===----------------------------------------------------------------------===//
#include "frontend/LowerImpl.h"

#include <algorithm>

namespace tc {

using namespace ast;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

/// Attribute names as written, with the `__` decorations of the predefined
/// macros removed (`__multipleof` and `multipleof` are the same).
std::string_view attrBaseName(std::string_view n) {
  while (n.starts_with("_"))
    n.remove_prefix(1);
  while (n.ends_with("_"))
    n.remove_suffix(1);
  return n;
}

ir::ParamAttrs paramAttrs(const VarDecl &v) {
  ir::ParamAttrs pa;
  for (const Attribute &a : v.attrs) {
    std::string_view n = attrBaseName(a.name);
    if (n == "multipleof")
      pa.multipleOf = a.value;
    else if (n == "aligned")
      pa.aligned = a.value;
    else if (n == "noalias")
      pa.noalias = true;
    else if (n == "readonly")
      pa.readonly = true;
    else if (n == "writeonly")
      pa.writeonly = true;
  }
  return pa;
}

} // namespace

namespace lower {

FunctionLowerer::FunctionLowerer(const SourceManager &sm, DiagEngine &diags, ir::Module &module,
                                 ir::Function &fn)
    : sm_(sm), diags_(diags), module_(module), fn_(fn), builder_(&fn.body()) {}

ir::Location toLocation(const SourceManager &sm, ir::Module &module, SourceLoc loc) {
  if (!loc.valid())
    return {};
  SourceLoc o = sm.outermost(loc);
  if (!o.valid() || o.file >= sm.numFiles())
    return {};
  return ir::Location{module.fileIndex(sm.name(o.file)), o.line, o.col};
}

ir::Location FunctionLowerer::location(SourceLoc loc) {
  return toLocation(sm_, module_, loc);
}

void FunctionLowerer::lowerKernel(const FunctionDecl &kernel) {
  char base;
  stackBase_ = &base;
  kernel_ = &kernel;
  builder_.setInsertionPointToEnd(&fn_.body());
  LocScope ls(*this, kernel.loc);
  for (const auto &p : kernel.params)
    bind(p.get(), fn_.addParam(p->name, p->type, paramAttrs(*p)));
  const std::vector<StmtPtr> &stmts = kernel.body->body;
  if (needsReturnFlag(stmts)) {
    returned_ = newFlag("returned");
    bind(returned_, constBool(false));
  }
  lowerStmts(stmts, 0);
  LocScope end(*this, kernel.body->rbraceLoc);
  emitOp(OpKind::Return, {}, {});
}

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

void FunctionLowerer::bind(const VarDecl *v, Value *value) {
  if (!ordinal_.count(v))
    ordinal_[v] = nextOrdinal_++;
  env_[v] = value;
  nameValue(v, value);
}

void FunctionLowerer::nameValue(const VarDecl *v, Value *value) {
  // The first variable a value is bound to names it (--trace shows it); the
  // printer ignores the hint (it numbers values), so IR text is unchanged.
  if (!value || !value->nameHint().empty() || v->name.empty())
    return;
  if (isSynthetic_.count(v)) // control-flow flags and helper results
    return;
  value->setNameHint(v->name);
}

Value *FunctionLowerer::valueOf(const VarDecl *v) {
  auto it = env_.find(v);
  if (it != env_.end() && it->second)
    return it->second;
  // Declared without an initialiser and not yet assigned on this path: sema
  // guarantees the value is never read, but merges still need one.
  return zeroOf(v->type);
}

void FunctionLowerer::sortByOrdinal(std::vector<const VarDecl *> &vars) const {
  auto ord = [&](const VarDecl *v) {
    auto it = ordinal_.find(v);
    return it == ordinal_.end() ? ~0u : it->second;
  };
  std::sort(vars.begin(), vars.end(),
            [&](const VarDecl *a, const VarDecl *b) { return ord(a) < ord(b); });
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
}

const VarDecl *FunctionLowerer::newVar(const char *name, const Type &type) {
  auto v = std::make_unique<VarDecl>();
  v->name = name;
  v->elem.dtype = type.dtype;
  v->elem.isPtr = type.isPtr;
  v->type = type;
  isSynthetic_.insert(v.get());
  synthetic_.push_back(std::move(v));
  return synthetic_.back().get();
}

bool FunctionLowerer::needsReturnFlag(const std::vector<StmtPtr> &stmts) {
  return std::any_of(stmts.begin(), stmts.end(), [](const StmtPtr &s) {
    return s->kind != StmtKind::Return && containsReturn(s.get());
  });
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void FunctionLowerer::lowerStmts(const std::vector<StmtPtr> &stmts, size_t from) {
  // Guards nest in the IR but not on the C++ stack: each one stays open until
  // the end of the block.
  std::vector<PendingIf> guards;
  for (size_t i = from; i < stmts.size() && !tooLarge_; ++i) {
    const Stmt *s = stmts[i].get();
    lowerStmt(s);
    if (diags_.shouldStop())
      break;
    StmtKind k = s->kind;
    if (k == StmtKind::Break || k == StmtKind::Continue || k == StmtKind::Return)
      break; // the rest of the block is unreachable
    Exits ex = exitsOf(s);
    if (!ex.any() || i + 1 == stmts.size())
      continue;
    LocScope ls(*this, stmts[i + 1]->loc);
    if (Value *guard = notTaken(ex, loops_.empty() ? nullptr : &loops_.back()))
      guards.push_back(beginIf(guard, std::nullopt));
  }
  for (auto it = guards.rbegin(); it != guards.rend(); ++it) {
    beginElse(*it, nullptr);
    finishIf(*it, nullptr);
  }
}

void FunctionLowerer::lowerStmt(const Stmt *s) {
  if (stackExhausted(s->loc))
    return;
  LocScope ls(*this, s->loc);
  switch (s->kind) {
  case StmtKind::Decl: return lowerDecl(s->as<DeclStmt>());
  case StmtKind::Expr: {
    const Expr *e = s->as<ExprStmt>()->expr.get();
    if (e && !e->constant)
      lowerExprOrVoid(e);
    return;
  }
  case StmtKind::Compound: return lowerStmts(s->as<CompoundStmt>()->body, 0);
  case StmtKind::If: return lowerIf(s->as<IfStmt>());
  case StmtKind::For: {
    const ForStmt *f = s->as<ForStmt>();
    if (f->init)
      lowerStmt(f->init.get());
    return lowerWhileLoop(f->cond.get(), f->body.get(), f->step.get());
  }
  case StmtKind::While:
    return lowerWhileLoop(s->as<WhileStmt>()->cond.get(), s->as<WhileStmt>()->body.get(), nullptr);
  case StmtKind::DoWhile: return lowerDoWhile(s->as<DoWhileStmt>());
  case StmtKind::Break:
  case StmtKind::Continue:
  case StmtKind::Return: return lowerJump(s);
  case StmtKind::Empty: return;
  }
}

void FunctionLowerer::lowerDecl(const DeclStmt *s) {
  for (const auto &v : s->vars) {
    LocScope ls(*this, v->loc);
    if (v->init)
      bind(v.get(), lowerAs(v->init.get(), v->type));
    else if (v->sliceAssigned &&
             !v->type.isScalar()) // filled slice by slice: lanes start undefined
      bind(v.get(), emit(OpKind::Undef, v->type, {}, {{"var", v->name}}));
    else
      bind(v.get(), nullptr);
  }
}

void FunctionLowerer::lowerIf(const IfStmt *s) {
  Value *cond = lowerCond(s->cond.get());
  emitIf(
      cond, std::nullopt,
      [&]() -> Value * {
        lowerStmt(s->thenStmt.get());
        return nullptr;
      },
      [&]() -> Value * {
        if (s->elseStmt)
          lowerStmt(s->elseStmt.get());
        return nullptr;
      });
}

void FunctionLowerer::lowerJump(const Stmt *s) {
  if (s->kind == StmtKind::Return) {
    const ReturnStmt *r = s->as<ReturnStmt>();
    if (r->value && result_)
      bind(result_, lowerAs(r->value.get(), result_->type));
    else if (r->value && inlining_.empty())
      unsupported(r->value->loc, "a kernel returning a value", Type::scalar(DType::I32));
    if (returned_)
      bind(returned_, constBool(true));
    return;
  }
  if (loops_.empty()) {
    unsupported(s->loc,
                s->kind == StmtKind::Break ? "'break' outside a loop" : "'continue' outside a loop",
                Type::scalar(DType::Bool));
    return;
  }
  const LoopCtx &ctx = loops_.back();
  const VarDecl *flag = s->kind == StmtKind::Break ? ctx.broke : ctx.cont;
  if (flag)
    bind(flag, constBool(true));
}

//===----------------------------------------------------------------------===//
// Structured control flow
//===----------------------------------------------------------------------===//

FunctionLowerer::PendingIf FunctionLowerer::beginIf(Value *cond,
                                                    const std::optional<Type> &resultType) {
  PendingIf pi;
  pi.parent = builder_.block();
  pi.resultType = resultType;
  pi.op = emitOp(OpKind::If, {}, {cond}, {}, 2);
  pi.before = env_;
  builder_.setInsertionPointToEnd(pi.op->region(0));
  return pi;
}

void FunctionLowerer::beginElse(PendingIf &pi, Value *thenValue) {
  pi.thenValue = thenValue;
  pi.thenEnv = std::move(env_);
  env_ = pi.before;
  builder_.setInsertionPointToEnd(pi.op->region(1));
}

Value *FunctionLowerer::finishIf(PendingIf &pi, Value *elseValue) {
  Env elseEnv = std::move(env_);
  std::vector<const VarDecl *> changed;
  for (const auto &[var, value] : pi.before)
    if (pi.thenEnv.at(var) != value || elseEnv.at(var) != value)
      changed.push_back(var);
  sortByOrdinal(changed);

  std::vector<Type> varTypes;
  Env *branchEnv[2] = {&pi.thenEnv, &elseEnv};
  Value *yielded[2] = {pi.thenValue, elseValue};
  for (unsigned i = 0; i < 2; ++i) {
    builder_.setInsertionPointToEnd(pi.op->region(i));
    env_ = std::move(*branchEnv[i]);
    std::vector<Value *> ys;
    if (pi.resultType)
      ys.push_back(yielded[i] ? yielded[i] : zeroOf(*pi.resultType));
    for (const VarDecl *v : changed)
      ys.push_back(valueOf(v));
    if (i == 0)
      for (size_t k = pi.resultType ? 1 : 0; k < ys.size(); ++k)
        varTypes.push_back(ys[k]->type());
    emitOp(OpKind::Yield, {}, ys);
  }
  Value *result = pi.resultType ? pi.op->addResult(*pi.resultType) : nullptr;
  env_ = std::move(pi.before);
  for (size_t k = 0; k < changed.size(); ++k) {
    env_[changed[k]] = pi.op->addResult(varTypes[k]);
    nameValue(changed[k], env_[changed[k]]);
  }
  builder_.setInsertionPointToEnd(pi.parent);
  return result;
}

Value *FunctionLowerer::emitIf(Value *cond, const std::optional<Type> &resultType,
                               const std::function<Value *()> &thenFn,
                               const std::function<Value *()> &elseFn) {
  PendingIf pi = beginIf(cond, resultType);
  beginElse(pi, thenFn());
  return finishIf(pi, elseFn());
}

std::vector<const VarDecl *> FunctionLowerer::loopCarried(const Stmt *body, const Expr *cond,
                                                          const Expr *step, const LoopCtx &ctx,
                                                          const Exits &ex) {
  std::vector<const VarDecl *> assigned, carried;
  collectAssigned(body, assigned);
  if (cond)
    collectAssigned(cond, assigned);
  if (step)
    collectAssigned(step, assigned);
  for (const VarDecl *v : assigned)
    if (env_.count(v)) // declared before the loop
      carried.push_back(v);
  if (ctx.broke)
    carried.push_back(ctx.broke);
  if (ex.ret && returned_)
    carried.push_back(returned_);
  if (ex.ret && result_ && env_.count(result_))
    carried.push_back(result_);
  sortByOrdinal(carried);
  return carried;
}

Value *FunctionLowerer::notTaken(const Exits &ex, const LoopCtx *ctx) {
  std::vector<Value *> flags;
  if (ex.brk && ctx && ctx->broke)
    flags.push_back(valueOf(ctx->broke));
  if (ex.cont && ctx && ctx->cont)
    flags.push_back(valueOf(ctx->cont));
  if (ex.ret && returned_)
    flags.push_back(valueOf(returned_));
  if (flags.empty())
    return nullptr;
  Value *any = flags[0];
  for (size_t i = 1; i < flags.size(); ++i)
    any = emit(OpKind::Or, any->type(), {any, flags[i]});
  return emit(OpKind::Xor, any->type(), {any, constBool(true)});
}

Value *FunctionLowerer::loopCondition(const Expr *cond, const LoopCtx &ctx, const Exits &ex) {
  Exits leave;
  leave.brk = ex.brk;
  leave.ret = ex.ret;
  Value *guard = notTaken(leave, &ctx);
  bool alwaysTrue = !cond || (cond->constant && constantIntBits(*cond->constant, DType::Bool));
  if (alwaysTrue) {
    if (guard)
      return guard;
    LocScope ls(*this, cond ? cond->loc : SourceLoc{});
    return constBool(true);
  }
  if (!guard)
    return lowerCond(cond);
  return emitIf(
      guard, Type::scalar(DType::Bool), [&] { return lowerCond(cond); },
      [&] { return constBool(false); });
}

FunctionLowerer::PendingLoop FunctionLowerer::beginLoop(const Stmt *body, const Expr *cond,
                                                        const Expr *step) {
  PendingLoop pl;
  pl.ex = exitsOf(body);
  if (pl.ex.brk) {
    pl.ctx.broke = newFlag("broke");
    bind(pl.ctx.broke, constBool(false));
  }
  if (pl.ex.cont)
    pl.ctx.cont = newFlag("continued"); // bound at the start of each iteration
  pl.carried = loopCarried(body, cond, step, pl.ctx, pl.ex);
  std::vector<Value *> inits;
  std::vector<Type> types;
  for (const VarDecl *v : pl.carried) {
    inits.push_back(valueOf(v));
    types.push_back(inits.back()->type());
  }
  pl.parent = builder_.block();
  pl.op = emitOp(OpKind::While, types, inits, {}, 2);
  for (unsigned r = 0; r < 2; ++r)
    for (const Type &t : types)
      pl.op->region(r)->addArgument(t);
  pl.saved = env_;
  return pl;
}

void FunctionLowerer::enterLoopRegion(PendingLoop &pl, unsigned region) {
  env_ = pl.saved;
  ir::Block *b = pl.op->region(region);
  builder_.setInsertionPointToEnd(b);
  for (size_t i = 0; i < pl.carried.size(); ++i) {
    env_[pl.carried[i]] = b->arg(static_cast<unsigned>(i));
    nameValue(pl.carried[i], b->arg(static_cast<unsigned>(i)));
  }
}

void FunctionLowerer::lowerLoopBody(PendingLoop &pl, const Stmt *body) {
  loops_.push_back(pl.ctx);
  if (pl.ctx.cont)
    bind(pl.ctx.cont, constBool(false));
  lowerStmt(body);
  loops_.pop_back();
}

void FunctionLowerer::endLoopRegion(PendingLoop &pl, OpKind terminator, Value *cond) {
  std::vector<Value *> values;
  if (cond)
    values.push_back(cond);
  for (const VarDecl *v : pl.carried)
    values.push_back(valueOf(v));
  emitOp(terminator, {}, values);
}

void FunctionLowerer::finishLoop(PendingLoop &pl) {
  env_ = std::move(pl.saved);
  for (size_t i = 0; i < pl.carried.size(); ++i) {
    env_[pl.carried[i]] = pl.op->result(static_cast<unsigned>(i));
    nameValue(pl.carried[i], pl.op->result(static_cast<unsigned>(i)));
  }
  builder_.setInsertionPointToEnd(pl.parent);
}

void FunctionLowerer::lowerWhileLoop(const Expr *cond, const Stmt *body, const Expr *step) {
  PendingLoop pl = beginLoop(body, cond, step);
  // before: evaluate the condition, forward the variables.
  enterLoopRegion(pl, 0);
  endLoopRegion(pl, OpKind::Condition, loopCondition(cond, pl.ctx, pl.ex));
  // after: the body, then the step unless a break/return was taken.
  enterLoopRegion(pl, 1);
  lowerLoopBody(pl, body);
  if (step && !step->constant) {
    Exits leave;
    leave.brk = pl.ex.brk;
    leave.ret = pl.ex.ret;
    if (Value *guard = notTaken(leave, &pl.ctx)) {
      PendingIf pi = beginIf(guard, std::nullopt);
      lowerExprOrVoid(step);
      beginElse(pi, nullptr);
      finishIf(pi, nullptr);
    } else {
      lowerExprOrVoid(step);
    }
  }
  endLoopRegion(pl, OpKind::Yield, nullptr);
  finishLoop(pl);
}

void FunctionLowerer::lowerDoWhile(const DoWhileStmt *s) {
  PendingLoop pl = beginLoop(s->body.get(), s->cond.get(), nullptr);
  // before: the body, then the condition.
  enterLoopRegion(pl, 0);
  lowerLoopBody(pl, s->body.get());
  endLoopRegion(pl, OpKind::Condition, loopCondition(s->cond.get(), pl.ctx, pl.ex));
  // after: nothing to do but loop back.
  enterLoopRegion(pl, 1);
  endLoopRegion(pl, OpKind::Yield, nullptr);
  finishLoop(pl);
}

} // namespace lower

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::unique_ptr<ir::Module> lowerToIR(const TranslationUnit &tu, const SourceManager &sm,
                                      DiagEngine &diags) {
  auto module = std::make_unique<ir::Module>();
  unsigned errorsBefore = diags.numErrors();
  bool anyKernel = false;
  for (const auto &f : tu.functions)
    anyKernel = anyKernel || (f && f->isKernel && f->body);
  if (!anyKernel) {
    diags.report(tu.functions.empty() ? DiagId::err_sema_no_function : DiagId::err_sema_no_kernel,
                 SourceLoc{tu.mainFile, 1, 1, 0}, {}, 1);
    return nullptr;
  }
  for (const auto &f : tu.functions) {
    if (!f->isKernel || !f->body || f->skipped)
      continue;
    ir::Function *fn = module->addFunction(f->name, lower::toLocation(sm, *module, f->loc));
    lower::FunctionLowerer(sm, diags, *module, *fn).lowerKernel(*f);
    if (diags.shouldStop())
      break;
  }
  if (diags.numErrors() != errorsBefore)
    return nullptr;
  return module;
}

} // namespace tc
