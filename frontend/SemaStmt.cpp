//===- SemaStmt.cpp - Statements and definite assignment -----------------===//
//
// Definite assignment (docs/semantics.md rule 12, Triton's scoping rule): a variable
// declared without initialiser must be assigned on every path before it is
// read. The analysis walks statements once, carrying the set of variables not
// yet definitely assigned (FlowState):
// - if/else: the state after is the join (union of unassigned) of both branches;
//   a missing else is an empty branch.
// - loops: the body and the step see the state at the loop's entry; after the
//   loop, the state is the one before the body (assignments in the body do not
//   count, even if the loop surely runs, as Triton's semantics page says). A loop that cannot
//   exit (no condition, or a constant true one) without a `break` makes what
//   follows unreachable.
// - break/continue/return make the rest of the block unreachable; reads in
//   unreachable code are not diagnosed.
// - in expressions, assignments in the right operand of && and || and in the
//   branches of ?: do not count after them (the branches are joined).
//
//===----------------------------------------------------------------------===//
#include "frontend/SemaInternal.h"

namespace tc::sema {

using namespace ast;

void FlowState::join(const FlowState &other) {
  if (other.unreachable)
    return;
  if (unreachable) {
    *this = other;
    return;
  }
  unassigned.insert(other.unassigned.begin(), other.unassigned.end());
}

void Sema::noteUnassigned(const VarDecl *v) { fn_->flow.unassigned.insert(v); }

void Sema::noteAssigned(const VarDecl *v) { fn_->flow.unassigned.erase(v); }

// A read of a variable that may be unassigned: an error with a note at the
// declaration, once per variable.
void Sema::noteRead(IdentExpr *e) {
  const VarDecl *v = e->decl;
  if (fn_->flow.unreachable || !fn_->flow.unassigned.count(v) || reportedUninit_.count(v))
    return;
  reportedUninit_.insert(v);
  reportAt(DiagId::err_sema_use_before_assign, e, {e->name});
  report(DiagId::note_sema_declared_here, v->loc, {v->name}, static_cast<uint32_t>(v->name.size()));
}

void Sema::checkStmt(Stmt *s) {
  if (!s || stackExhausted(s->loc))
    return;
  switch (s->kind) {
  case StmtKind::Decl:
    for (auto &v : s->as<DeclStmt>()->vars)
      if (v)
        checkLocalDecl(v.get());
    return;
  case StmtKind::Expr:
    checkExpr(s->as<ExprStmt>()->expr.get());
    return;
  case StmtKind::Compound: checkCompound(s->as<CompoundStmt>(), /*newScope=*/true); return;
  case StmtKind::If: checkIf(s->as<IfStmt>()); return;
  case StmtKind::For: checkFor(s->as<ForStmt>()); return;
  case StmtKind::While: checkWhile(s->as<WhileStmt>()); return;
  case StmtKind::DoWhile: checkDoWhile(s->as<DoWhileStmt>()); return;
  case StmtKind::Break: checkJump(s, /*isBreak=*/true); return;
  case StmtKind::Continue: checkJump(s, /*isBreak=*/false); return;
  case StmtKind::Return: checkReturn(s->as<ReturnStmt>()); return;
  case StmtKind::Empty: return;
  }
}

void Sema::checkCompound(CompoundStmt *s, bool newScope) {
  if (newScope)
    pushScope();
  for (auto &st : s->body)
    checkStmt(st.get());
  if (newScope)
    popScope();
}

// Conditions of if/while/for/do: scalars (numbers, bools); a tile condition
// gets the mask suggestion. Non-bool scalars are compared != 0 by lowering.
void Sema::checkCondition(Expr *e, const char *what) {
  if (!checkValue(e))
    return;
  if (e->type.isTile()) {
    reportAt(DiagId::err_sema_tile_condition, e, {what});
    e->typed = false;
    return;
  }
  if (e->type.isPtr) {
    reportAt(DiagId::err_sema_bad_condition, e, {what, typeStr(e)});
    e->typed = false;
    return;
  }
  checkMaterializable(e);
}

bool Sema::isAlwaysTrue(const Expr *cond) const {
  return !cond || (cond->typed && cond->constant && constTruth(*cond->constant));
}

void Sema::checkIf(IfStmt *s) {
  checkCondition(s->cond.get(), "if");
  FlowState before = fn_->flow;
  checkStmt(s->thenStmt.get());
  FlowState afterThen = fn_->flow;
  fn_->flow = before;
  checkStmt(s->elseStmt.get());
  fn_->flow.join(afterThen);
}

void Sema::checkFor(ForStmt *s) {
  pushScope();
  checkStmt(s->init.get());
  if (s->cond)
    checkCondition(s->cond.get(), "for");
  FlowState entry = fn_->flow;
  fn_->loops.emplace_back();
  checkStmt(s->body.get());
  FunctionContext::Loop loop = std::move(fn_->loops.back());
  fn_->loops.pop_back();
  for (const FlowState &c : loop.continues)
    fn_->flow.join(c);
  if (s->step)
    checkExpr(s->step.get());
  fn_->flow = entry;
  if (isAlwaysTrue(s->cond.get()) && !loop.hasBreak)
    fn_->flow.unreachable = true;
  popScope();
}

void Sema::checkWhile(WhileStmt *s) {
  checkCondition(s->cond.get(), "while");
  FlowState entry = fn_->flow;
  fn_->loops.emplace_back();
  checkStmt(s->body.get());
  bool hasBreak = fn_->loops.back().hasBreak;
  fn_->loops.pop_back();
  fn_->flow = entry;
  if (isAlwaysTrue(s->cond.get()) && !hasBreak)
    fn_->flow.unreachable = true;
}

// do-while: the condition sees the body's assignments (it runs after the
// body); after the loop only what was assigned before it counts (seed rule).
void Sema::checkDoWhile(DoWhileStmt *s) {
  FlowState entry = fn_->flow;
  fn_->loops.emplace_back();
  checkStmt(s->body.get());
  FunctionContext::Loop loop = std::move(fn_->loops.back());
  fn_->loops.pop_back();
  for (const FlowState &c : loop.continues)
    fn_->flow.join(c);
  checkCondition(s->cond.get(), "do");
  fn_->flow = entry;
  if (isAlwaysTrue(s->cond.get()) && !loop.hasBreak)
    fn_->flow.unreachable = true;
}

void Sema::checkJump(Stmt *s, bool isBreak) {
  if (fn_->loops.empty()) {
    report(DiagId::err_sema_jump_outside_loop, s->loc, {isBreak ? "break" : "continue"},
           isBreak ? 5 : 8);
    return;
  }
  if (isBreak)
    fn_->loops.back().hasBreak = true;
  else
    fn_->loops.back().continues.push_back(fn_->flow);
  fn_->flow.unreachable = true;
}

// `return;` in kernels and void helpers; `return expr;` in non-void helpers,
// only as the last statement of the body (helpers are inlined). The value is
// converted to the declared element type and keeps its own shape; all returns
// must agree on the shape.
void Sema::checkReturn(ReturnStmt *s) {
  FunctionDecl *fn = fn_->fn;
  bool wantsValue = !fn->isKernel && !fn->returnType.isVoid;
  uint32_t len = 6;
  if (s->value && !checkValue(s->value.get()))
    fn_->returnTypeValid = false;
  if (!wantsValue) {
    // (A kernel declared non-void already has its error.)
    if (s->value && (!fn->isKernel || fn->returnType.isVoid))
      report(fn->isKernel ? DiagId::err_sema_kernel_return_value : DiagId::err_sema_void_return_value,
             s->loc, {fn->name}, len);
    fn_->flow.unreachable = true;
    return;
  }
  fn_->flow.unreachable = true;
  if (!s->value) {
    report(DiagId::err_sema_missing_return_value, s->loc, {fn->name}, len);
    fn_->returnTypeValid = false;
    return;
  }
  const auto &body = fn->body->body;
  if (body.empty() || body.back().get() != s)
    report(DiagId::err_not_supported, s->loc,
           {"'return' before the end of helper '" + fn->name + "' (helpers are inlined)"}, len);
  Expr *v = s->value.get();
  if (!v->typed)
    return;
  ir::Type dest{fn->returnType.dtype, fn->returnType.isPtr, v->type.shape};
  if (!checkConvertible(v, dest)) {
    fn_->returnTypeValid = false;
    return;
  }
  if (!fn_->returnShape) {
    fn_->returnShape = v->type.shape;
    fn_->firstReturnLoc = s->loc;
  } else if (*fn_->returnShape != v->type.shape) {
    report(DiagId::err_sema_return_shape, s->loc,
           {fn->name, ir::shapeStr(v->type.shape), ir::shapeStr(*fn_->returnShape)}, len);
    report(DiagId::note_sema_previous_return, fn_->firstReturnLoc, {}, len);
  }
}

} // namespace tc::sema
