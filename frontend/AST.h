//===- AST.h - The abstract syntax tree of Triton-C -----------------------===//
//
// The parser builds it; sema annotates it (types, shapes, constant values,
// resolved names and builtins); lowering turns it into tile IR. Every node
// keeps the location of the token that names it, for diagnostics.
//
// Ownership: parents own children through std::unique_ptr. Kinds are plain
// enums with an `isa`-style check (`e->kind == ExprKind::Binary`) and
// `static_cast`; the `as<T>()` helpers assert the kind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"
#include "support/SourceManager.h"

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

//===----------------------------------------------------------------------===//
// The sema -> lowering contract (what sema guarantees when analyze() succeeds)
//
// - Every Expr has `typed == true` and `type` = its result type (dtype, isPtr,
//   shape; empty shape = scalar). Expressions whose value is a compile-time
//   constant also have `constant` set; lowering emits a `constant` op
//   directly in the dtype the context requires (never re-lowers the operands),
//   rounding floats once from the exact double value.
// - A constant's own `type` is its natural type: bool for bools, the first of
//   int32 < uint32 < int64 < uint64 that holds an int, float (f32) for floats.
// - BinaryExpr arithmetic/bitwise/shift: `operandType` = promoted dtype and the
//   broadcast shape; lowering casts each operand to operandType.dtype and
//   broadcasts it to operandType.shape; `type` == operandType.
// - Comparisons: operandType as above; `type` = bool with that shape.
// - && || : operands are converted to bool (x != 0); on scalars they
//   short-circuit (C), on tiles they are elementwise.
// - Pointer arithmetic `p + i`, `i + p`, `p - i`: `type` is the pointer tile of
//   the broadcast shape; operandType.dtype is the integer offset's own dtype
//   (no promotion); lowering broadcasts both and emits addptr (negating for -).
// - MatMul `a @ b`: operandType.dtype = promote(a, b) (both operands are cast
//   to it), `type` = the result per rule 11 (f16/bf16 -> f32, i8 -> i32, f32,
//   f64), shape [M, N] (or [B, M, N]).
// - Assign: the rhs is converted to the lhs's type (variable: its declared
//   dtype and shape; `*p`: the pointee dtype and the pointer's shape). For
//   compound assignment, `operandType` is the type `lhs op rhs` is computed in,
//   then converted back.
// - ConditionalExpr: cond is bool (scalar or tile); `type` is the promoted
//   type of the branches broadcast with cond's shape. With a scalar cond, only
//   the chosen branch is evaluated (an `if`); with a tile cond both are, and a
//   `select` picks. `isMaskedLoad` (then-branch is `*p` or `(*p)`): a masked load
//   with the else-branch as fallback; nothing is loaded in masked-off lanes.
// - Subscript: items already checked (their count equals rank + #newaxis);
//   `type` is the result; reductions follow rule 10 for their result dtype.
//   An Index item (an integer scalar) selects one slice of its axis, which
//   disappears; as an assignment target (`a[i, :] = v`) the base is a tile
//   variable and the items are ':' and indices only.
// - CallExpr: `builtin` resolved; for elementwise builtins `operandType` holds
//   the promoted dtype and broadcast shape the arguments are converted to.
// - IdentExpr::decl points at the VarDecl (parameter or local).
// - VarDecl::type is the declared element type with the evaluated shape.
// - Attribute::value holds the evaluated argument.
// - Conditions of if/while/for/do are scalars; sema has checked it.
//===----------------------------------------------------------------------===//

namespace tc::ast {

struct Expr;
struct Stmt;
struct VarDecl;
struct FunctionDecl;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

/// `__attribute__((name(args...)))`, e.g. multipleof(8), aligned(16), noalias.
struct Attribute {
  std::string name;
  std::vector<ExprPtr> args; // constant expressions, evaluated by sema
  SourceLoc loc;
  int64_t value = 0; // sema: the evaluated first argument (0 if none)
};

/// A written element type: `float`, `unsigned char`, `TYPE*` (after macros), `void`.
struct TypeSpec {
  DType dtype = DType::I32;
  bool isPtr = false;
  bool isVoid = false;
  SourceLoc loc;
};

/// A compile-time constant in the "scalar" sense of Triton's semantics page: arbitrary-width integer
/// (__int128 holds every value of every integer dtype, and overflow beyond it
/// is a diagnostic), a double, or a bool.
struct ConstValue {
  enum class Kind { Bool, Int, Float } kind = Kind::Int;
  __int128 i = 0; // Bool: 0/1; Int: the value
  double f = 0;   // Float
  static ConstValue ofBool(bool b) { return {Kind::Bool, b ? 1 : 0, 0}; }
  static ConstValue ofInt(__int128 v) { return {Kind::Int, v, 0}; }
  static ConstValue ofFloat(double v) { return {Kind::Float, 0, v}; }
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

enum class ExprKind {
  IntLiteral,   // 42, 0x10, 7u (suffixes accepted, ignored: literals are untyped constants)
  FloatLiteral, // 1.5, 1e-3f
  BoolLiteral,  // true, false
  StringLiteral, // "label" (print/assert arguments only)
  Ident,        // a variable or parameter
  Unary,        // -x +x ~x !x ^x (transpose) *p (load) ++x --x x++ x--
  MaskedDeref,  // *?(mask) p
  Binary,       // a op b, incl. @ and && ||
  Assign,       // lhs = rhs, lhs op= rhs (lhs: Ident, *p, *?(m) p)
  Conditional,  // c ? a : b  (c ? *p : v is a masked load with fallback)
  Cast,         // (T)e, (T[shape])e
  Bitcast,      // bitcast<T>(e)
  Range,        // a ... b
  Subscript,    // x[:, newaxis], x[+, :]
  Call,         // builtins and helper functions
};

enum class UnaryOp { Neg, Plus, BitNot, LogicalNot, Transpose, Deref, PreInc, PreDec, PostInc, PostDec };
enum class BinaryOp {
  Mul, Div, Rem, Add, Sub, Shl, Shr, Lt, Gt, Le, Ge, Eq, Ne, BitAnd, BitXor, BitOr,
  LogicalAnd, LogicalOr, MatMul
};
/// The spelling of a binary operator ("+", "@", "&&").
std::string_view binaryOpSpelling(BinaryOp op);
/// Reduction operators allowed in a subscript.
enum class ReduceOp { Add, Max, Min, ArgMax, ArgMin, And, Or, Xor };

struct Expr {
  ExprKind kind;
  SourceLoc loc;       // the operator / first token
  uint32_t length = 1; // columns to highlight in diagnostics
  // --- set by sema ---
  ir::Type type;                      // dtype, pointer-ness and shape
  std::optional<ConstValue> constant; // set when the value is a compile-time constant
  bool typed = false;                 // sema succeeded for this node

  explicit Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
  template <typename T> T *as() {
    assert(kind == T::Kind && "wrong expression kind");
    return static_cast<T *>(this);
  }
  template <typename T> const T *as() const {
    assert(kind == T::Kind && "wrong expression kind");
    return static_cast<const T *>(this);
  }
  template <typename T> bool is() const { return kind == T::Kind; }
};

struct IntLiteralExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::IntLiteral;
  std::string spelling;
  unsigned __int128 value = 0;
  IntLiteralExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct FloatLiteralExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::FloatLiteral;
  std::string spelling;
  double value = 0;
  FloatLiteralExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct BoolLiteralExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::BoolLiteral;
  bool value = false;
  BoolLiteralExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct StringLiteralExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::StringLiteral;
  std::string value; // unescaped
  StringLiteralExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct IdentExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Ident;
  std::string name;
  VarDecl *decl = nullptr; // sema: the declaration it refers to
  IdentExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct UnaryExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Unary;
  UnaryOp op;
  ExprPtr operand;
  UnaryExpr(SourceLoc l, UnaryOp o, ExprPtr e) : Expr(Kind, l), op(o), operand(std::move(e)) {}
};
struct MaskedDerefExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::MaskedDeref;
  ExprPtr mask, pointer;
  MaskedDerefExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct BinaryExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Binary;
  BinaryOp op;
  ExprPtr lhs, rhs;
  // sema: the promoted operand type both sides are converted to (dtype and
  // element pointer-ness; shapes are broadcast to `type.shape`, or for MatMul
  // as the op requires). For comparisons `type` is bool and this is the
  // operand type.
  ir::Type operandType;
  BinaryExpr(SourceLoc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(Kind, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};
struct AssignExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Assign;
  std::optional<BinaryOp> compound; // nullopt for plain `=`
  ExprPtr lhs, rhs;
  ir::Type operandType; // sema, for compound assignment: the type `lhs op rhs` is computed in
  AssignExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct ConditionalExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Conditional;
  ExprPtr cond, thenExpr, elseExpr;
  bool isMaskedLoad = false; // sema: `c ? *p : v` (then-branch a plain deref)
  ConditionalExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct CastExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Cast;
  TypeSpec to;
  std::vector<ExprPtr> shape; // (T[d0, d1])e; empty for (T)e
  ExprPtr operand;
  CastExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct BitcastExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Bitcast;
  TypeSpec to;
  std::vector<ExprPtr> shape; // bitcast<T[d0, d1]>(e); empty for bitcast<T>(e)
  ExprPtr operand;
  BitcastExpr(SourceLoc l) : Expr(Kind, l) {}
};
struct RangeExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Range;
  ExprPtr begin, end;
  int64_t start = 0, stop = 0; // sema: the constant bounds
  RangeExpr(SourceLoc l) : Expr(Kind, l) {}
};
/// One item of a subscript list.
struct SubscriptItem {
  enum class Kind { Slice, NewAxis, Reduce, Index } kind = Kind::Slice;
  ReduceOp reduce = ReduceOp::Add;
  ExprPtr index; // Index: the integer scalar selecting one slice of the axis
  SourceLoc loc;
};
struct SubscriptExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Subscript;
  ExprPtr base;
  std::vector<SubscriptItem> items;
  SubscriptExpr(SourceLoc l) : Expr(Kind, l) {}
};

/// Builtins sema recognises by name (a helper function of the same name shadows none:
/// defining a function with a builtin's name is an error).
enum class Builtin {
  None, // a helper function (FunctionDecl in `callee`)
  GetProgramId, GetNumPrograms,
  Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Abs, Floor, Ceil, Fma,
  Min, Max, Select, Where, UMulHi, Cdiv,
  AtomicAdd, AtomicMax, AtomicMin, AtomicXchg, AtomicCas, AtomicAnd, AtomicOr, AtomicXor,
  DebugBarrier, Print, Assert,
};

struct CallExpr : Expr {
  static constexpr ExprKind Kind = ExprKind::Call;
  std::string callee;
  SourceLoc calleeLoc;
  std::vector<ExprPtr> args;
  Builtin builtin = Builtin::None;     // sema
  FunctionDecl *function = nullptr;    // sema: the helper function, when builtin == None
  ir::Type operandType;                // sema: the promoted argument type (min/max/select/fma...)
  CallExpr(SourceLoc l) : Expr(Kind, l) {}
};

//===----------------------------------------------------------------------===//
// Declarations and statements
//===----------------------------------------------------------------------===//

/// A variable, tile or parameter: `float x[16, 8] __multipleof(8) = init`.
struct VarDecl {
  TypeSpec elem;
  std::string name;
  SourceLoc loc; // the name
  std::vector<ExprPtr> shape; // tile dims; empty for a scalar
  std::vector<Attribute> attrs;
  ExprPtr init; // may be null
  bool isParam = false;
  // --- sema ---
  ir::Type type; // resolved element and shape
  bool sliceAssigned = false; // the target of `v[i, ...] = x` somewhere (lowering: undef lanes)
};

enum class StmtKind { Decl, Expr, Compound, If, For, While, DoWhile, Break, Continue, Return, Empty };

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  explicit Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
  template <typename T> T *as() {
    assert(kind == T::Kind && "wrong statement kind");
    return static_cast<T *>(this);
  }
  template <typename T> const T *as() const {
    assert(kind == T::Kind && "wrong statement kind");
    return static_cast<const T *>(this);
  }
};

struct DeclStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Decl;
  std::vector<std::unique_ptr<VarDecl>> vars;
  DeclStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct ExprStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Expr;
  ExprPtr expr;
  ExprStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct CompoundStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Compound;
  std::vector<StmtPtr> body;
  SourceLoc rbraceLoc;
  CompoundStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct IfStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::If;
  ExprPtr cond;
  StmtPtr thenStmt, elseStmt; // elseStmt may be null
  IfStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct ForStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::For;
  StmtPtr init; // DeclStmt, ExprStmt or null
  ExprPtr cond; // may be null (infinite loop)
  ExprPtr step; // may be null
  StmtPtr body;
  ForStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct WhileStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::While;
  ExprPtr cond;
  StmtPtr body;
  WhileStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct DoWhileStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::DoWhile;
  StmtPtr body;
  ExprPtr cond;
  DoWhileStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct BreakStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Break;
  BreakStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct ContinueStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Continue;
  ContinueStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct ReturnStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Return;
  ExprPtr value; // may be null
  ReturnStmt(SourceLoc l) : Stmt(Kind, l) {}
};
struct EmptyStmt : Stmt {
  static constexpr StmtKind Kind = StmtKind::Empty;
  EmptyStmt(SourceLoc l) : Stmt(Kind, l) {}
};

/// A kernel (`__global__ void k(...)`) or a helper function (inlined at calls).
struct FunctionDecl {
  std::string name;
  SourceLoc loc; // the name
  bool isKernel = false;
  TypeSpec returnType;
  // A helper's return type names only the element type (`float f(...)`); when it
  // returns a tile, sema takes the shape from its `return` statement.
  std::vector<std::unique_ptr<VarDecl>> params;
  std::unique_ptr<CompoundStmt> body; // null for a declaration without body
  // --- sema ---
  ir::Type resolvedReturn; // for helpers: the type of the returned value
  // A kernel other than the one --kernel picked: not analysed, not lowered.
  bool skipped = false;
};

struct TranslationUnit {
  std::vector<std::unique_ptr<FunctionDecl>> functions;
  uint32_t mainFile = 0;
};

} // namespace tc::ast
