//===- IR.h - The tile IR: values, ops, blocks, functions, modules --------===//
//
// SSA values typed by ir::Type; ops from the table in ir/Ops.def; structured
// control flow (each region is one block with arguments). Every op carries the
// source location it was lowered from.
//
// Semantics (normative summary; docs/semantics.md has examples):
//  - Elementwise binary ops take two operands of the result's type (compares:
//    of one type, i1 result). Integer arithmetic wraps; div truncates toward
//    zero and rem takes the dividend's sign; shr is arithmetic for signed
//    dtypes. Float ops are IEEE with round-to-nearest-even; rem on floats is
//    fmod; min/max return the non-NaN operand; compares are ordered except ne.
//  - cast converts as C does (ints wrap/extend by the source's signedness;
//    to float: RNE; float to int truncates, NaN/out of range traps; to i1: != 0).
//  - load (ptr [, mask [, other]]): masked-off lanes are not accessed; they are
//    `other` when given, else poison. store (ptr, value [, mask]).
//  - reduce {kind, axis}: add on ints < 32 bits accumulates in (u)int32 and
//    returns it; fp16/bf16 add accumulates in f32; argmax/argmin return i32.
//  - dot (a, b, acc): acc + a @ b with f16/bf16 -> f32, i8 -> i32.
//  - Passes assume the program is well-defined: they may remove a dead op that
//    would have trapped (as LLVM does with UB). The interpreter runs IR as given.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tc::ir {

enum class OpKind : uint8_t {
#define OP(NAME, MNEMONIC, NOPS, NRES, NREG, TRAITS) NAME,
#include "ir/Ops.def"
#undef OP
};
inline constexpr int kNumOpKinds = 0
#define OP(NAME, MNEMONIC, NOPS, NRES, NREG, TRAITS) +1
#include "ir/Ops.def"
#undef OP
    ;

enum Trait : uint32_t {
  Pure = 1u << 0,
  Elementwise = 1u << 1,
  Commutative = 1u << 2,
  MemRead = 1u << 3,
  MemWrite = 1u << 4,
  SideEffect = 1u << 5,
  Terminator = 1u << 6,
};

std::string_view mnemonic(OpKind k);
std::optional<OpKind> opKindFromMnemonic(std::string_view s);
bool hasTrait(OpKind k, Trait t);
/// Fixed operand/result counts from the table (-1: variadic) and region count.
int tableNumOperands(OpKind k);
int tableNumResults(OpKind k);
int tableNumRegions(OpKind k);

/// Reduction kinds of `reduce {kind}` and `atomic_rmw {kind}` are spelled as
/// strings in attributes: "add" "max" "min" "argmax" "argmin" "and" "or" "xor"
/// (reduce) and "add" "max" "min" "xchg" "and" "or" "xor" (atomic_rmw).

/// A source location in the IR: an index into Module::files plus line/col.
/// line == 0 means unknown.
struct Location {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool operator==(const Location &) const = default;
};

/// An attribute value: integer, float, string, or list of integers.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

struct NamedAttr {
  std::string name;
  AttrValue value;
  bool operator==(const NamedAttr &) const = default;
};

class Op;
class Block;
class Function;

/// An SSA value: an op result or a block argument.
class Value {
public:
  Value(Type type, Op *def, Block *owner, unsigned index)
      : type_(std::move(type)), def_(def), owner_(owner), index_(index) {}
  const Type &type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  /// The defining op, or nullptr for a block argument.
  Op *definingOp() const { return def_; }
  /// For a block argument, its block; else nullptr.
  Block *ownerBlock() const { return owner_; }
  /// Result number or argument number.
  unsigned index() const { return index_; }
  /// A name hint used by the printer for function arguments (e.g. "N").
  const std::string &nameHint() const { return name_; }
  void setNameHint(std::string n) { name_ = std::move(n); }

private:
  Type type_;
  Op *def_;
  Block *owner_;
  unsigned index_;
  std::string name_;
};

/// A sequence of ops with arguments: the body of a region or function.
class Block {
public:
  explicit Block(Op *parent = nullptr) : parent_(parent) {}
  Value *addArgument(Type t);
  const std::vector<std::unique_ptr<Value>> &args() const { return args_; }
  Value *arg(unsigned i) const { return args_[i].get(); }
  size_t numArgs() const { return args_.size(); }

  std::vector<std::unique_ptr<Op>> &ops() { return ops_; }
  const std::vector<std::unique_ptr<Op>> &ops() const { return ops_; }
  /// The last op if it is a terminator, else nullptr.
  Op *terminator() const;
  /// The op whose region this block is (nullptr for a function body).
  Op *parentOp() const { return parent_; }
  void setParentOp(Op *p) { parent_ = p; }

private:
  Op *parent_;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<std::unique_ptr<Op>> ops_;
};

class Op {
public:
  Op(OpKind kind, Location loc) : kind_(kind), loc_(loc) {}
  OpKind kind() const { return kind_; }
  std::string_view name() const { return mnemonic(kind_); }
  Location loc() const { return loc_; }
  void setLoc(Location l) { loc_ = l; }

  const std::vector<Value *> &operands() const { return operands_; }
  Value *operand(unsigned i) const { return operands_[i]; }
  size_t numOperands() const { return operands_.size(); }
  void setOperand(unsigned i, Value *v) { operands_[i] = v; }
  void addOperand(Value *v) { operands_.push_back(v); }
  void setOperands(std::vector<Value *> v) { operands_ = std::move(v); }

  Value *addResult(Type t);
  const std::vector<std::unique_ptr<Value>> &results() const { return results_; }
  Value *result(unsigned i = 0) const { return results_[i].get(); }
  size_t numResults() const { return results_.size(); }

  Block *addRegion();
  const std::vector<std::unique_ptr<Block>> &regions() const { return regions_; }
  Block *region(unsigned i) const { return regions_[i].get(); }
  size_t numRegions() const { return regions_.size(); }

  /// Attributes, kept sorted by name (so printing is deterministic).
  const std::vector<NamedAttr> &attrs() const { return attrs_; }
  void setAttr(std::string name, AttrValue v);
  const AttrValue *attr(std::string_view name) const;
  /// Typed accessors; assert the attribute exists with that alternative.
  int64_t intAttr(std::string_view name) const;
  double floatAttr(std::string_view name) const;
  const std::string &strAttr(std::string_view name) const;
  const std::vector<int64_t> &intsAttr(std::string_view name) const;

  Block *parentBlock() const { return parent_; }
  void setParentBlock(Block *b) { parent_ = b; }

private:
  OpKind kind_;
  Location loc_;
  Block *parent_ = nullptr;
  std::vector<Value *> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<std::unique_ptr<Block>> regions_;
  std::vector<NamedAttr> attrs_;
};

/// Attributes of a kernel parameter (from __multipleof, __aligned, ...).
struct ParamAttrs {
  int64_t multipleOf = 1; // __multipleof(N): the scalar is a multiple of N
  int64_t aligned = 0;    // __aligned(N): the pointer's address is a multiple of N bytes
  bool noalias = false, readonly = false, writeonly = false;
  bool operator==(const ParamAttrs &) const = default;
};

/// A kernel: its parameters are the body block's arguments.
class Function {
public:
  Function(std::string name, Location loc) : name_(std::move(name)), loc_(loc) {}
  const std::string &name() const { return name_; }
  Location loc() const { return loc_; }
  Block &body() { return body_; }
  const Block &body() const { return body_; }

  /// Adds a parameter named `name` (used by launch APIs to bind arguments).
  Value *addParam(std::string name, Type t, ParamAttrs attrs = {});
  size_t numParams() const { return body_.numArgs(); }
  Value *param(unsigned i) const { return body_.arg(i); }
  const std::string &paramName(unsigned i) const { return body_.arg(i)->nameHint(); }
  const ParamAttrs &paramAttrs(unsigned i) const { return paramAttrs_[i]; }

private:
  std::string name_;
  Location loc_;
  Block body_;
  std::vector<ParamAttrs> paramAttrs_;
};

class Module {
public:
  /// Source file names referenced by Location::file.
  std::vector<std::string> files;
  std::vector<std::unique_ptr<Function>> functions;

  Function *addFunction(std::string name, Location loc);
  Function *lookup(std::string_view name) const;
  /// Index of `file` in `files`, adding it if absent.
  uint32_t fileIndex(const std::string &file);
};

/// Builds ops at the end of a block (or before a given position).
class Builder {
public:
  explicit Builder(Block *block) : block_(block), pos_(block->ops().size()) {}
  void setInsertionPointToEnd(Block *b) { block_ = b; pos_ = b->ops().size(); }
  /// Insert before position `index` of block `b`.
  void setInsertionPoint(Block *b, size_t index) { block_ = b; pos_ = index; }
  Block *block() const { return block_; }
  void setLoc(Location l) { loc_ = l; }
  Location loc() const { return loc_; }

  /// Creates an op with the given result types, operands, attributes and
  /// `numRegions` empty regions (each region gets one empty block).
  Op *create(OpKind kind, std::vector<Type> resultTypes, std::vector<Value *> operands,
             std::vector<NamedAttr> attrs = {}, unsigned numRegions = 0);

  // Conveniences returning the single result.
  Value *constantInt(Type t, int64_t v);
  Value *constantFloat(Type t, double v);
  Value *unary(OpKind k, Value *a);                       // result type = a's
  Value *binary(OpKind k, Value *a, Value *b);            // result type = a's (compares: i1)
  Value *cast(Value *v, DType to);                        // keeps shape
  Value *splat(Value *scalar, const Shape &shape);
  Value *broadcast(Value *v, const Shape &shape);
  Value *expandDims(Value *v, int64_t axis);

private:
  Block *block_;
  size_t pos_;
  Location loc_{};
};

/// Calls f(op, loops) for every op of `b` and of the regions nested in it, in
/// print order; `loops` counts the `for`/`while` ops around the op.
void forEachOp(const Block &b, const std::function<void(const Op &, unsigned loops)> &f);

/// Appends copies of `from`'s ops (with their regions) to `to`: each operand is
/// looked up in `map`, which must hold every value defined outside `from`, and
/// each copied result and region argument is added to it. `loc` maps the ops'
/// locations (kept as they are when empty).
void copyOps(const Block &from, Block &to, std::map<const Value *, Value *> &map,
             const std::function<Location(Location)> &loc = {});

} // namespace tc::ir
