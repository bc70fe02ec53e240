//===- IR.cpp - The tile IR data structures and the builder ---------------===//
#include "ir/IR.h"

#include "support/FloatBits.h"

#include <algorithm>
#include <cassert>

namespace tc::ir {

namespace {
struct OpInfo {
  std::string_view mnemonic;
  int numOperands, numResults, numRegions;
  uint32_t traits;
};

constexpr OpInfo kOpInfos[] = {
#define OP(NAME, MNEMONIC, NOPS, NRES, NREG, TRAITS) {MNEMONIC, NOPS, NRES, NREG, TRAITS},
#include "ir/Ops.def"
#undef OP
};
static_assert(sizeof(kOpInfos) / sizeof(kOpInfos[0]) == kNumOpKinds);

const OpInfo &info(OpKind k) {
  return kOpInfos[static_cast<size_t>(k)];
}

/// Wraps `v` to the range of integer dtype `t` as a C conversion does
/// (bool: != 0); the result is the int64 attribute form of the value.
int64_t wrapToDType(int64_t v, DType t) {
  if (t == DType::Bool)
    return v != 0;
  unsigned w = bitWidth(t);
  if (w == 64)
    return v;
  uint64_t bits = static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
  if (isSignedInt(t) && (bits >> (w - 1)) & 1)
    bits |= ~((uint64_t(1) << w) - 1);
  return static_cast<int64_t>(bits);
}
} // namespace

std::string_view mnemonic(OpKind k) {
  return info(k).mnemonic;
}

std::optional<OpKind> opKindFromMnemonic(std::string_view s) {
  for (int i = 0; i < kNumOpKinds; ++i)
    if (kOpInfos[i].mnemonic == s)
      return static_cast<OpKind>(i);
  return std::nullopt;
}

bool hasTrait(OpKind k, Trait t) {
  return (info(k).traits & t) != 0;
}
int tableNumOperands(OpKind k) {
  return info(k).numOperands;
}
int tableNumResults(OpKind k) {
  return info(k).numResults;
}
int tableNumRegions(OpKind k) {
  return info(k).numRegions;
}

//===----------------------------------------------------------------------===//
// Block, Op, Function, Module
//===----------------------------------------------------------------------===//

Value *Block::addArgument(Type t) {
  args_.push_back(
      std::make_unique<Value>(std::move(t), nullptr, this, static_cast<unsigned>(args_.size())));
  return args_.back().get();
}

Op *Block::terminator() const {
  if (ops_.empty() || !hasTrait(ops_.back()->kind(), Terminator))
    return nullptr;
  return ops_.back().get();
}

Value *Op::addResult(Type t) {
  results_.push_back(
      std::make_unique<Value>(std::move(t), this, nullptr, static_cast<unsigned>(results_.size())));
  return results_.back().get();
}

Block *Op::addRegion() {
  regions_.push_back(std::make_unique<Block>(this));
  return regions_.back().get();
}

void Op::setAttr(std::string name, AttrValue v) {
  auto it = std::lower_bound(attrs_.begin(), attrs_.end(), name,
                             [](const NamedAttr &a, const std::string &n) { return a.name < n; });
  if (it != attrs_.end() && it->name == name) {
    it->value = std::move(v);
    return;
  }
  attrs_.insert(it, NamedAttr{std::move(name), std::move(v)});
}

const AttrValue *Op::attr(std::string_view name) const {
  auto it = std::lower_bound(attrs_.begin(), attrs_.end(), name,
                             [](const NamedAttr &a, std::string_view n) { return a.name < n; });
  if (it == attrs_.end() || it->name != name)
    return nullptr;
  return &it->value;
}

int64_t Op::intAttr(std::string_view name) const {
  const AttrValue *v = attr(name);
  assert(v && std::holds_alternative<int64_t>(*v) && "missing integer attribute");
  return std::get<int64_t>(*v);
}

double Op::floatAttr(std::string_view name) const {
  const AttrValue *v = attr(name);
  assert(v && std::holds_alternative<double>(*v) && "missing float attribute");
  return std::get<double>(*v);
}

const std::string &Op::strAttr(std::string_view name) const {
  const AttrValue *v = attr(name);
  assert(v && std::holds_alternative<std::string>(*v) && "missing string attribute");
  return std::get<std::string>(*v);
}

const std::vector<int64_t> &Op::intsAttr(std::string_view name) const {
  const AttrValue *v = attr(name);
  assert(v && std::holds_alternative<std::vector<int64_t>>(*v) && "missing int list attribute");
  return std::get<std::vector<int64_t>>(*v);
}

Value *Function::addParam(std::string name, Type t, ParamAttrs attrs) {
  Value *v = body_.addArgument(std::move(t));
  v->setNameHint(std::move(name));
  paramAttrs_.push_back(attrs);
  return v;
}

Function *Module::addFunction(std::string name, Location loc) {
  functions.push_back(std::make_unique<Function>(std::move(name), loc));
  return functions.back().get();
}

Function *Module::lookup(std::string_view name) const {
  for (const auto &f : functions)
    if (f->name() == name)
      return f.get();
  return nullptr;
}

uint32_t Module::fileIndex(const std::string &file) {
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i] == file)
      return static_cast<uint32_t>(i);
  files.push_back(file);
  return static_cast<uint32_t>(files.size() - 1);
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

Op *Builder::create(OpKind kind, std::vector<Type> resultTypes, std::vector<Value *> operands,
                    std::vector<NamedAttr> attrs, unsigned numRegions) {
  auto op = std::make_unique<Op>(kind, loc_);
  for (Type &t : resultTypes)
    op->addResult(std::move(t));
  op->setOperands(std::move(operands));
  for (NamedAttr &a : attrs)
    op->setAttr(std::move(a.name), std::move(a.value));
  for (unsigned i = 0; i < numRegions; ++i)
    op->addRegion();
  op->setParentBlock(block_);
  assert(pos_ <= block_->ops().size() && "insertion point out of range");
  Op *raw = op.get();
  block_->ops().insert(block_->ops().begin() + static_cast<std::ptrdiff_t>(pos_), std::move(op));
  ++pos_;
  return raw;
}

Value *Builder::constantInt(Type t, int64_t v) {
  if (isFloat(t.dtype))
    return constantFloat(std::move(t), static_cast<double>(v));
  assert(!t.isPtr && "constant of a pointer type");
  int64_t bits = wrapToDType(v, t.dtype);
  return create(OpKind::Constant, {std::move(t)}, {}, {{"value", bits}})->result();
}

Value *Builder::constantFloat(Type t, double v) {
  assert(isFloat(t.dtype) && !t.isPtr && "constantFloat of a non-float type");
  double rounded = roundToFloat(v, t.dtype);
  return create(OpKind::Constant, {std::move(t)}, {}, {{"value", rounded}})->result();
}

Value *Builder::unary(OpKind k, Value *a) {
  return create(k, {a->type()}, {a})->result();
}

Value *Builder::binary(OpKind k, Value *a, Value *b) {
  bool isCompare = k == OpKind::CmpEq || k == OpKind::CmpNe || k == OpKind::CmpLt ||
                   k == OpKind::CmpLe || k == OpKind::CmpGt || k == OpKind::CmpGe;
  Type t = isCompare ? Type::tile(DType::Bool, a->type().shape) : a->type();
  return create(k, {std::move(t)}, {a, b})->result();
}

Value *Builder::cast(Value *v, DType to) {
  return create(OpKind::Cast, {v->type().withDType(to)}, {v})->result();
}

Value *Builder::splat(Value *scalar, const Shape &shape) {
  return create(OpKind::Splat, {scalar->type().withShape(shape)}, {scalar})->result();
}

Value *Builder::broadcast(Value *v, const Shape &shape) {
  return create(OpKind::Broadcast, {v->type().withShape(shape)}, {v})->result();
}

Value *Builder::expandDims(Value *v, int64_t axis) {
  Shape s = v->type().shape;
  assert(axis >= 0 && static_cast<size_t>(axis) <= s.size() && "expand_dims axis out of range");
  s.insert(s.begin() + axis, 1);
  return create(OpKind::ExpandDims, {v->type().withShape(std::move(s))}, {v}, {{"axis", axis}})
      ->result();
}

namespace {
void forEachOpIn(const Block &b, unsigned loops,
                 const std::function<void(const Op &, unsigned)> &f) {
  for (const auto &op : b.ops()) {
    f(*op, loops);
    bool loop = op->kind() == OpKind::For || op->kind() == OpKind::While;
    for (const auto &region : op->regions())
      forEachOpIn(*region, loops + (loop ? 1 : 0), f);
  }
}
} // namespace

void forEachOp(const Block &b, const std::function<void(const Op &, unsigned loops)> &f) {
  forEachOpIn(b, 0, f);
}

void copyOps(const Block &from, Block &to, std::map<const Value *, Value *> &map,
             const std::function<Location(Location)> &loc) {
  for (const auto &op : from.ops()) {
    auto copy = std::make_unique<Op>(op->kind(), loc ? loc(op->loc()) : op->loc());
    std::vector<Value *> operands;
    operands.reserve(op->numOperands());
    for (Value *v : op->operands())
      operands.push_back(map.at(v));
    copy->setOperands(std::move(operands));
    for (const NamedAttr &a : op->attrs())
      copy->setAttr(a.name, a.value);
    for (const auto &r : op->results()) {
      Value *nr = copy->addResult(r->type());
      nr->setNameHint(r->nameHint());
      map[r.get()] = nr;
    }
    copy->setParentBlock(&to);
    Op *raw = copy.get();
    to.ops().push_back(std::move(copy));
    for (const auto &region : op->regions()) {
      Block *nb = raw->addRegion();
      for (const auto &arg : region->args()) {
        Value *na = nb->addArgument(arg->type());
        na->setNameHint(arg->nameHint());
        map[arg.get()] = na;
      }
      copyOps(*region, *nb, map, loc);
    }
  }
}

} // namespace tc::ir
