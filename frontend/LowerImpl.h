//===- LowerImpl.h - Private state of the AST -> tile IR lowering ---------===//
//
// Shared by Lower.cpp (kernels, statements, control flow), LowerExpr.cpp
// (expressions, assignments) and LowerCall.cpp (builtins, helper inlining).
//
// Variables are SSA: `env_` maps each VarDecl to its current ir::Value
// (nullptr while declared but not yet assigned). Structured control flow
// merges them: an `if` yields every variable (bound before it) that either
// branch changed; a `while` carries every variable bound before it that the
// loop assigns. break / continue / return become i1 flag variables (synthetic
// VarDecls owned here) carried the same way; statements after a jump that may
// have been taken are wrapped in `if (!flag)`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Lower.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tc::lower {

/// The jumps that can leave a statement (break/continue of an enclosing loop,
/// return from the kernel or the inlined helper).
struct Exits {
  bool brk = false, cont = false, ret = false;
  bool any() const { return brk || cont || ret; }
};

/// Which jumps escape `s` (break/continue inside nested loops do not).
Exits exitsOf(const ast::Stmt *s);
/// Appends every variable assigned (=, op=, ++, --) in `s` / `e` to `out`
/// (helper bodies excluded: a helper cannot assign its caller's variables).
void collectAssigned(const ast::Stmt *s, std::vector<const ast::VarDecl *> &out);
void collectAssigned(const ast::Expr *e, std::vector<const ast::VarDecl *> &out);
/// True if `s` contains a return statement anywhere.
bool containsReturn(const ast::Stmt *s);

/// The dtype of `reduce <op>` applied to `in` (docs/semantics.md rule 10).
DType reduceResultDType(ast::ReduceOp op, DType in);
/// The attribute spelling of a reduction kind ("add", "argmax", ...).
const char *reduceKindName(ast::ReduceOp op);
/// `c` as the int64 bits of dtype `t` (wrapped to its width, extended by its
/// signedness); floats convert as C does.
int64_t constantIntBits(const ast::ConstValue &c, DType t);
/// `c` rounded once to float dtype `t`.
double constantFloatValue(const ast::ConstValue &c, DType t);

/// The IR location of `loc` (macro-expanded code points at the expansion site).
ir::Location toLocation(const SourceManager &sm, ir::Module &module, SourceLoc loc);

/// The most ops one kernel may lower to (helpers calling helpers twice each
/// grow exponentially when inlined).
inline constexpr size_t kMaxOpsPerKernel = size_t{1} << 20;

/// Lowers one kernel into an ir::Function.
class FunctionLowerer {
public:
  FunctionLowerer(const SourceManager &sm, DiagEngine &diags, ir::Module &module, ir::Function &fn);
  /// Adds the parameters and lowers the body, ending it with `return`.
  void lowerKernel(const ast::FunctionDecl &kernel);
  /// The IR location of `loc` in this module.
  ir::Location location(SourceLoc loc);

private:
  using Env = std::unordered_map<const ast::VarDecl *, ir::Value *>;

  /// The flags of the innermost loop's break / continue, when it has them.
  struct LoopCtx {
    const ast::VarDecl *broke = nullptr;
    const ast::VarDecl *cont = nullptr;
  };
  /// A `while` op being built.
  struct PendingLoop {
    ir::Op *op = nullptr;
    ir::Block *parent = nullptr;
    Exits ex;    // the jumps that leave the body
    LoopCtx ctx; // its break / continue flags
    std::vector<const ast::VarDecl *> carried;
    Env saved; // the variables before the loop
  };
  /// An `if` being built: its then-region is filled first, then its else-region.
  struct PendingIf {
    ir::Op *op = nullptr;
    ir::Block *parent = nullptr;
    std::optional<ir::Type> resultType;
    Env before, thenEnv;
    ir::Value *thenValue = nullptr;
  };
  /// An assignable place: a variable, `*p`, `*?(m) p` or a slice `v[i, :]` of
  /// a variable (`slices`: (axis of the variable, index) in ascending axis order).
  struct LValue {
    const ast::VarDecl *var = nullptr;
    ir::Value *ptr = nullptr, *mask = nullptr;
    std::vector<std::pair<int64_t, ir::Value *>> slices;
    ir::Type type; // the value type stored there
  };
  /// Sets the builder's location for the lifetime of the scope.
  class LocScope {
  public:
    LocScope(FunctionLowerer &l, SourceLoc loc) : l_(l), saved_(l.builder_.loc()) {
      if (loc.valid())
        l_.builder_.setLoc(l_.location(loc));
    }
    ~LocScope() { l_.builder_.setLoc(saved_); }
    LocScope(const LocScope &) = delete;
    LocScope &operator=(const LocScope &) = delete;

  private:
    FunctionLowerer &l_;
    ir::Location saved_;
  };

  // ----- Lower.cpp: statements -----
  void lowerStmt(const ast::Stmt *s);
  /// Lowers stmts[from..]; after a statement whose jump may have been taken the
  /// rest is wrapped in `if (!flags)`.
  void lowerStmts(const std::vector<ast::StmtPtr> &stmts, size_t from);
  void lowerDecl(const ast::DeclStmt *s);
  void lowerIf(const ast::IfStmt *s);
  /// Sets the flag of a break / continue / return (and a helper's result).
  void lowerJump(const ast::Stmt *s);
  /// True if a return nested in one of `stmts` needs a flag (a top-level
  /// `return` simply ends the block).
  static bool needsReturnFlag(const std::vector<ast::StmtPtr> &stmts);

  // ----- Lower.cpp: structured control flow -----
  /// Creates `if cond` (scalar i1) and moves into its then-region.
  PendingIf beginIf(ir::Value *cond, const std::optional<ir::Type> &resultType);
  /// Ends the then-region (yielding `thenValue`) and moves into the else-region.
  void beginElse(PendingIf &pi, ir::Value *thenValue);
  /// Ends the else-region: variables bound before the `if` and changed by a
  /// branch become results; returns the value result (nullptr without one).
  ir::Value *finishIf(PendingIf &pi, ir::Value *elseValue);
  /// beginIf + thenFn + beginElse + elseFn + finishIf. Each branch function
  /// returns the value to yield (ignored when `resultType` is nullopt).
  ir::Value *emitIf(ir::Value *cond, const std::optional<ir::Type> &resultType,
                    const std::function<ir::Value *()> &thenFn,
                    const std::function<ir::Value *()> &elseFn);
  /// `while (cond) body` with an optional step after the body (for loops).
  void lowerWhileLoop(const ast::Expr *cond, const ast::Stmt *body, const ast::Expr *step);
  void lowerDoWhile(const ast::DoWhileStmt *s);
  /// Creates the loop's flags and the `while` op carrying its variables.
  PendingLoop beginLoop(const ast::Stmt *body, const ast::Expr *cond, const ast::Expr *step);
  /// Moves into region 0 (before) or 1 (after), binding the carried variables
  /// to its arguments.
  void enterLoopRegion(PendingLoop &pl, unsigned region);
  /// Lowers the body with the loop's break/continue context.
  void lowerLoopBody(PendingLoop &pl, const ast::Stmt *body);
  /// Ends the current region with `condition cond, vars...` or `yield vars...`.
  void endLoopRegion(PendingLoop &pl, ir::OpKind terminator, ir::Value *cond);
  /// Binds the carried variables to the loop's results after it.
  void finishLoop(PendingLoop &pl);
  /// The carried variables of a loop: bound before it and assigned in it, plus flags.
  std::vector<const ast::VarDecl *> loopCarried(const ast::Stmt *body, const ast::Expr *cond,
                                                const ast::Expr *step, const LoopCtx &ctx,
                                                const Exits &ex);
  /// `!broke && !returned && cond` as an i1 (short-circuit); cond may be null.
  ir::Value *loopCondition(const ast::Expr *cond, const LoopCtx &ctx, const Exits &ex);
  /// `!(flag1 || flag2 ...)` for the flags of the jumps in `ex`; nullptr if none.
  ir::Value *notTaken(const Exits &ex, const LoopCtx *ctx);

  // ----- Lower.cpp: variables -----
  void bind(const ast::VarDecl *v, ir::Value *value);
  /// Gives `value` the source name of `v` (ir::Value::nameHint) unless it has one.
  void nameValue(const ast::VarDecl *v, ir::Value *value);
  /// The current value of `v`; a zero constant if it is still undefined.
  ir::Value *valueOf(const ast::VarDecl *v);
  /// Sorts variables by the order they were first bound (deterministic output).
  void sortByOrdinal(std::vector<const ast::VarDecl *> &vars) const;
  /// Creates a synthetic variable (a jump flag, a helper's result), unbound.
  const ast::VarDecl *newVar(const char *name, const ir::Type &type);
  const ast::VarDecl *newFlag(const char *name) {
    return newVar(name, ir::Type::scalar(DType::Bool));
  }

  // ----- LowerExpr.cpp: ops, constants, conversions -----
  /// Creates one op at the insertion point and returns its first result (or nullptr).
  ir::Value *emit(ir::OpKind k, std::optional<ir::Type> result, std::vector<ir::Value *> operands,
                  std::vector<ir::NamedAttr> attrs = {});
  ir::Op *emitOp(ir::OpKind k, std::vector<ir::Type> results, std::vector<ir::Value *> operands,
                 std::vector<ir::NamedAttr> attrs = {}, unsigned numRegions = 0);
  /// One `constant` of type `t` (pointers: the bitcast of an i64 constant).
  ir::Value *emitConstant(const ast::ConstValue &c, const ir::Type &t);
  ir::Value *zeroOf(const ir::Type &t);
  ir::Value *constBool(bool b, const ir::Shape &shape = {});
  /// Converts `v` to `t`: cast (dtype), then splat / expand_dims + broadcast (shape).
  ir::Value *convert(ir::Value *v, const ir::Type &t);
  ir::Value *negatedOffset(ir::Value *i);
  /// `v != 0` as bool (returns v if it is bool already).
  ir::Value *toBool(ir::Value *v);
  /// Reports an unsupported construct; returns a zero placeholder of `t`.
  ir::Value *unsupported(SourceLoc loc, const std::string &what, const ir::Type &t);

  // ----- LowerExpr.cpp: expressions -----
  /// Lowers `e` to a value of `e->type` (constants: one `constant` op).
  ir::Value *lowerExpr(const ast::Expr *e);
  /// Lowers `e` for its effects; nullptr for a call that returns nothing.
  ir::Value *lowerExprOrVoid(const ast::Expr *e);
  /// Lowers `e` converted to `t` (constants are emitted directly as `t`).
  ir::Value *lowerAs(const ast::Expr *e, const ir::Type &t);
  /// Lowers a scalar condition to i1 (non-bool: `cmp_ne` against 0).
  ir::Value *lowerCond(const ast::Expr *e);
  ir::Value *lowerLiteral(const ast::Expr *e);
  ir::Value *lowerUnary(const ast::UnaryExpr *e);
  ir::Value *lowerIncDec(const ast::UnaryExpr *e);
  ir::Value *lowerBinary(const ast::BinaryExpr *e);
  /// The elementwise op `op` on two values of one type (bools: via int32).
  ir::Value *arith(ast::BinaryOp op, ir::Value *a, ir::Value *b, SourceLoc loc);
  ir::Value *lowerLogical(const ast::BinaryExpr *e);
  ir::Value *lowerPointerArith(const ast::BinaryExpr *e);
  /// dot(a, b, acc); a zero accumulator of the result type when `acc` is null.
  ir::Value *lowerMatMul(const ast::BinaryExpr *e, ir::Value *acc);
  ir::Value *lowerConditional(const ast::ConditionalExpr *e);
  ir::Value *lowerMaskedLoad(const ast::ConditionalExpr *e);
  ir::Value *lowerMaskedDeref(const ast::MaskedDerefExpr *e);
  ir::Value *lowerSubscript(const ast::SubscriptExpr *e);
  /// extract_slice / insert_slice of `tile` along `axis` at `index`, naming `var`.
  ir::Value *extractSlice(ir::Value *tile, int64_t axis, ir::Value *index, const std::string &var);
  ir::Value *insertSlice(ir::Value *tile, int64_t axis, ir::Value *index, ir::Value *value,
                         const std::string &var);
  ir::Value *lowerAssign(const ast::AssignExpr *e);
  LValue lowerLValue(const ast::Expr *e);
  ir::Value *readLValue(const LValue &lv);
  /// Writes `v` (converted to the place's type); returns the converted value.
  ir::Value *writeLValue(const LValue &lv, ir::Value *v);

  // ----- LowerCall.cpp: builtins and helper inlining -----
  ir::Value *lowerCall(const ast::CallExpr *e);
  ir::Value *lowerElementwiseBuiltin(const ast::CallExpr *e);
  ir::Value *lowerAtomic(const ast::CallExpr *e);
  ir::Value *lowerPrint(const ast::CallExpr *e);
  ir::Value *lowerAssert(const ast::CallExpr *e);
  ir::Value *inlineHelper(const ast::CallExpr *e);
  /// The source text of an assert's condition (the call's first argument), or "".
  std::string assertConditionText(const ast::CallExpr *e) const;

  const SourceManager &sm_;
  DiagEngine &diags_;
  ir::Module &module_;
  ir::Function &fn_;
  ir::Builder builder_;
  const ast::FunctionDecl *kernel_ = nullptr;

  Env env_;                                                    // variable -> current value
  std::unordered_map<const ast::VarDecl *, unsigned> ordinal_; // first-bound order
  unsigned nextOrdinal_ = 0;
  std::vector<std::unique_ptr<ast::VarDecl>> synthetic_; // flags and helper results
  std::unordered_set<const ast::VarDecl *> isSynthetic_; // the same, for lookups

  std::vector<LoopCtx> loops_; // innermost last
  // The return flag of the kernel or of the helper being inlined (when a
  // return may leave the body early), and the helper's result variable.
  const ast::VarDecl *returned_ = nullptr;
  const ast::VarDecl *result_ = nullptr;
  std::vector<const ast::FunctionDecl *> inlining_; // helpers being inlined (recursion check)
  const char *stackBase_ = nullptr; // a local of lowerKernel: see kMaxCallStackBytes
  size_t numOps_ = 0;               // ops created so far (inlining can blow up)
  bool reportedStack_ = false;      // "nesting too deep" for the thread's stack, once
  bool stackExhausted(SourceLoc loc);
  bool tooLarge_ = false;           // the op budget ran out: stop lowering statements
};

} // namespace tc::lower
