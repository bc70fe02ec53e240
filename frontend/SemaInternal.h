//===- SemaInternal.h - Semantic analysis, private declarations ---------===//
//
// Sema is split over several files:
//   ConstEval.cpp     compile-time constants (pure functions, no diagnostics)
//   Sema.cpp          entry point, functions, scopes, declarations, attributes
//   SemaStmt.cpp      statements and definite assignment
//   SemaExpr.cpp      expressions: operators, casts, ranges, subscripts
//   SemaTypes.cpp     promotion (rules 1, 2), broadcasting (rule 3), conversions
//   SemaBuiltins.cpp  builtin calls and helper-function calls
//
// Conventions: every check* function on an expression returns `e->typed`. An
// expression that fails is left untyped after exactly one diagnostic; parents
// with an untyped child fail silently (no cascaded errors). Null children (the
// parser's recovery may leave them) count as untyped children.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tc::sema {

//===----------------------------------------------------------------------===//
// Constants (ConstEval.cpp)
//===----------------------------------------------------------------------===//

/// Decimal spelling of a 128-bit integer.
std::string int128Str(__int128 v);
/// Spelling of a constant in diagnostics: `300`, `-1`, `1.5`, `true`.
std::string constStr(const ast::ConstValue &v);
/// The promotion kind of a constant (bool < int < float).
DKind constKind(const ast::ConstValue &v);
/// The natural dtype (AST.h contract): bool; the first of int32 < uint32 <
/// int64 < uint64 that holds an int (nullopt if none does); f32 for floats, or
/// f64 when the value is finite and beyond f32's range.
std::optional<DType> naturalDType(const ast::ConstValue &v);
/// True if integer `v` is in the range of integer dtype `t`.
bool intFits(__int128 v, DType t);
/// `v` wrapped (two's complement) into integer dtype `t`.
__int128 wrapInt(__int128 v, DType t);
double constToDouble(const ast::ConstValue &v);
/// C truth value (x != 0; NaN is true).
bool constTruth(const ast::ConstValue &v);

/// Converts a constant to dtype `t` as an assignment would (docs/semantics.md rule 13):
/// ints wrap, floats round to nearest even, float -> int truncates, to bool is
/// `!= 0`. Returns nullopt for a float that is NaN or out of `t`'s range when
/// converted to an integer type (a trap at run time, rule 7).
std::optional<ast::ConstValue> convertConst(const ast::ConstValue &v, DType t);

/// Why folding a constant operator failed or needs a warning.
enum class FoldIssue {
  None,
  Overflow,       // error: beyond 128 bits
  DivByZero,      // error: integer / or % by zero
  NegativeShift,  // error
  FloorDiv,       // warning: floor division differs from C's truncation
  PythonMod,      // warning: Python modulo differs from C's
  FloatDivByZero, // warning: IEEE result (inf or nan)
};

struct FoldResult {
  std::optional<ast::ConstValue> value; // unset on an error
  FoldIssue issue = FoldIssue::None;
  ast::ConstValue cResult; // FloorDiv / PythonMod: what C would give
};

/// Folds `a op b` for two constants: integers in 128 bits with floor division
/// and Python modulo (Triton's rule for constants), floats in double, bools as
/// 0/1 in arithmetic. Comparisons and && || give bool; & | ^ of two bools give
/// bool. The caller has rejected operand kinds the operator does not accept
/// (floats in bitwise operators and shifts) and MatMul.
FoldResult foldBinary(ast::BinaryOp op, const ast::ConstValue &a, const ast::ConstValue &b);

/// Folds `op a` for Neg, Plus, BitNot, LogicalNot. `-` and `+` of a bool give an
/// int (as in C and Python); `~` of a bool is logical not (bool), matching `~`
/// on runtime bool tiles. The caller has rejected `~` on floats.
FoldResult foldUnary(ast::UnaryOp op, const ast::ConstValue &a);

/// Ceiling division of two integer constants (cdiv); DivByZero / Overflow issues.
FoldResult foldCdiv(const ast::ConstValue &a, const ast::ConstValue &b);
/// min/max of two constants, compared by value; the chosen operand is returned.
ast::ConstValue foldMinMax(bool isMax, const ast::ConstValue &a, const ast::ConstValue &b);
/// `v` (one of `a`, `b`) in their common kind: a float when either is one.
ast::ConstValue widenConst(const ast::ConstValue &v, const ast::ConstValue &a,
                           const ast::ConstValue &b);

//===----------------------------------------------------------------------===//
// The analyser
//===----------------------------------------------------------------------===//

/// Builtin by name, or nullopt.
std::optional<ast::Builtin> lookupBuiltin(std::string_view name);
using ast::binaryOpSpelling;
std::string_view unaryOpSpelling(ast::UnaryOp op);
std::string_view reduceOpSpelling(ast::ReduceOp op);

/// Definite-assignment state at a program point: the variables declared
/// without initialiser and not assigned on every path to here.
struct FlowState {
  bool unreachable = false;
  std::set<const ast::VarDecl *> unassigned;
  /// Joins the state of another path into this one (a variable is unassigned
  /// if it is on any reachable path).
  void join(const FlowState &other);
};

/// State of one function being analysed (helpers are analysed on demand at
/// their first call, which nests one context inside another).
struct FunctionContext {
  ast::FunctionDecl *fn = nullptr;
  std::vector<std::map<std::string, ast::VarDecl *>> scopes;
  FlowState flow;
  struct Loop {
    std::vector<FlowState> continues;
    bool hasBreak = false;
  };
  std::vector<Loop> loops;
  unsigned calleeDepth = 0;             // the deepest chain of helper calls below this function
  std::optional<ir::Shape> returnShape; // shape of the first `return expr`
  SourceLoc firstReturnLoc;
  bool returnTypeValid = true;
};

/// The result of typing a binary operator.
struct BinaryTyping {
  ir::Type type;
  ir::Type operandType;
};

class Sema {
public:
  Sema(ast::TranslationUnit &tu, DiagEngine &diags, std::string kernelName)
      : tu_(tu), diags_(diags), kernelName_(std::move(kernelName)) {}
  /// Analyses the whole unit; false if sema reported an error.
  bool run();

private:
  // --- diagnostics (Sema.cpp) ---
  void report(DiagId id, SourceLoc loc, std::vector<std::string> args = {}, uint32_t length = 1);
  void reportAt(DiagId id, const ast::Expr *e, std::vector<std::string> args = {});

  // --- functions, scopes, declarations (Sema.cpp) ---
  void chooseImplicitKernel();
  void collectFunctions();
  void analyzeFunction(ast::FunctionDecl *fn);
  void resolveHelperReturn(ast::FunctionDecl *fn);
  void checkParam(ast::VarDecl *p, bool inKernel);
  void checkLocalDecl(ast::VarDecl *v);
  bool checkNotVoid(const ast::VarDecl *v);
  std::optional<ir::Shape> evalShape(std::vector<ast::ExprPtr> &dims);
  std::optional<int64_t> evalDim(ast::Expr *dim);
  bool declare(ast::VarDecl *v);
  ast::VarDecl *lookup(const std::string &name) const;
  void pushScope() { fn_->scopes.emplace_back(); }
  void popScope() { fn_->scopes.pop_back(); }
  void checkAttributes(ast::VarDecl *v);
  void checkAttribute(ast::Attribute &a, ast::VarDecl *v);
  bool evalAttributeValue(ast::Attribute &a, const std::string &name, bool argsOk);
  void checkAttributeTarget(const ast::Attribute &a, const std::string &name, const ast::VarDecl *v);

  // --- statements, definite assignment (SemaStmt.cpp) ---
  void checkStmt(ast::Stmt *s);
  void checkCompound(ast::CompoundStmt *s, bool newScope);
  void checkIf(ast::IfStmt *s);
  void checkFor(ast::ForStmt *s);
  void checkWhile(ast::WhileStmt *s);
  void checkDoWhile(ast::DoWhileStmt *s);
  void checkJump(ast::Stmt *s, bool isBreak);
  void checkReturn(ast::ReturnStmt *s);
  void checkCondition(ast::Expr *e, const char *what);
  bool isAlwaysTrue(const ast::Expr *cond) const;
  void noteRead(ast::IdentExpr *e);
  void noteAssigned(const ast::VarDecl *v);
  void noteUnassigned(const ast::VarDecl *v);

  // --- expressions (SemaExpr.cpp) ---
  bool checkExpr(ast::Expr *e);
  /// checkExpr, plus: a void call is an error (its value is used).
  bool checkValue(ast::Expr *e);
  bool checkLiteral(ast::Expr *e);
  bool checkIdent(ast::IdentExpr *e, bool isRead);
  bool checkUnary(ast::UnaryExpr *e);
  bool checkIncDec(ast::UnaryExpr *e);
  bool checkDeref(ast::UnaryExpr *e);
  bool checkMaskedDeref(ast::MaskedDerefExpr *e);
  bool checkMask(ast::ExprPtr &mask, const ir::Shape &ptrShape);
  bool checkBinary(ast::BinaryExpr *e);
  bool foldBinaryExpr(ast::BinaryExpr *e);
  std::optional<BinaryTyping> typeBinary(ast::BinaryOp op, ast::Expr *lhs, ast::Expr *rhs,
                                         const ast::Expr *at);
  std::optional<BinaryTyping> typePointerBinary(ast::BinaryOp op, ast::Expr *lhs, ast::Expr *rhs,
                                                const ast::Expr *at);
  std::optional<BinaryTyping> typeMatMul(ast::Expr *lhs, ast::Expr *rhs, const ast::Expr *at);
  bool checkAssign(ast::AssignExpr *e);
  std::optional<ir::Type> checkLValue(ast::Expr *lhs, bool isRead);
  bool checkConditional(ast::ConditionalExpr *e);
  bool checkCast(ast::CastExpr *e);
  bool checkBitcast(ast::BitcastExpr *e);
  bool checkRange(ast::RangeExpr *e);
  bool checkSubscript(ast::SubscriptExpr *e);
  bool checkSubscriptItems(ast::SubscriptExpr *e);
  std::optional<ir::Type> checkSliceLValue(ast::SubscriptExpr *e);
  std::optional<DType> subscriptDType(const ast::SubscriptExpr *e);
  bool setConstant(ast::Expr *e, const ast::ConstValue &v);
  bool reportFoldIssue(const FoldResult &r, const ast::Expr *at, ast::BinaryOp op);

  // --- types and conversions (SemaTypes.cpp) ---
  /// Broadcasts two shapes; reports rule 3's error at `at` on failure.
  std::optional<ir::Shape> broadcast(const ir::Shape &a, const ir::Shape &b, const ast::Expr *at);
  /// Rules 1 and 2 over value operands (no pointers): the dtype they are all
  /// converted to. Reports constants that do not fit it.
  std::optional<DType> promoteOperands(const std::vector<ast::Expr *> &ops);
  /// Converts `src` to `dest` as assignment does (rule 13): pointer
  /// compatibility, shape broadcast to dest's shape, constant range warnings.
  bool checkConvertible(ast::Expr *src, const ir::Type &dest);
  /// The type part of checkConvertible, reporting at `at`.
  bool checkTypeConvertible(const ir::Type &src, const ir::Type &dest, const ast::Expr *at);
  /// A constant used as a value in its natural type must have one.
  bool checkMaterializable(ast::Expr *e);
  /// Wraps a non-bool numeric condition `e` into `e != 0` (typed). Returns false
  /// (after a diagnostic) for pointers.
  bool convertToBool(ast::ExprPtr &e, const char *what);
  std::string typeStr(const ast::Expr *e) const { return e->type.langStr(); }
  bool checkConstFitsStrict(ast::Expr *c, DType t);
  bool checkConstConversion(ast::Expr *c, DType t);

  // --- calls (SemaBuiltins.cpp) ---
  bool checkCall(ast::CallExpr *e);
  bool checkHelperCall(ast::CallExpr *e);
  ast::FunctionDecl *resolveHelper(ast::CallExpr *e);
  bool checkBuiltinCall(ast::CallExpr *e);
  bool checkArgCount(ast::CallExpr *e, size_t min, size_t max);
  bool checkAllArgs(ast::CallExpr *e);
  bool checkAxisBuiltin(ast::CallExpr *e);
  bool checkMathBuiltin(ast::CallExpr *e);
  bool checkElementwiseBuiltin(ast::CallExpr *e);
  std::optional<bool> foldElementwiseBuiltin(ast::CallExpr *e);
  bool checkElementwiseDType(ast::CallExpr *e, DType d);
  bool checkSelectBuiltin(ast::CallExpr *e);
  bool checkAtomicBuiltin(ast::CallExpr *e);
  bool checkPrintBuiltin(ast::CallExpr *e);
  bool checkAssertBuiltin(ast::CallExpr *e);
  bool isVoidCall(const ast::Expr *e) const;

  ast::TranslationUnit &tu_;
  DiagEngine &diags_;
  std::string kernelName_; // --kernel, for a source with no `__global__` function
  bool hadError_ = false;
  bool reportedStack_ = false; // "nesting too deep" for the thread's stack, once
  bool stackExhausted(SourceLoc loc);
  std::map<std::string, ast::FunctionDecl *> functions_;
  enum class FnState { NotStarted, InProgress, Done };
  std::map<const ast::FunctionDecl *, FnState> fnState_;
  std::map<const ast::FunctionDecl *, unsigned> callDepth_; // functions on its longest call chain
  unsigned analysing_ = 0; // analyzeFunction calls in progress (helpers analysed on demand)
  const char *stackBase_ = nullptr; // a local of run(): see kMaxCallStackBytes
  std::set<const ast::FunctionDecl *> badReturn_; // helpers whose return type is unknown
  FunctionContext *fn_ = nullptr;
  std::set<const ast::VarDecl *> invalidDecls_;
  std::set<const ast::VarDecl *> reportedUninit_;
};

/// The largest number of elements of a tile (2^20).
inline constexpr int64_t kMaxTileElements = int64_t(1) << 20;

} // namespace tc::sema
