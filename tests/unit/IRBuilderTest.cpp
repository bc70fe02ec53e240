// The op table, IR data structures and the Builder (ir/IR.h).
#include "ir/IR.h"

#include <gtest/gtest.h>

using namespace tc;
using namespace tc::ir;

TEST(IRTable, MnemonicsRoundTrip) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    auto k = static_cast<OpKind>(i);
    auto back = opKindFromMnemonic(mnemonic(k));
    ASSERT_TRUE(back.has_value()) << mnemonic(k);
    EXPECT_EQ(*back, k);
  }
  EXPECT_EQ(mnemonic(OpKind::GetProgramId), "get_program_id");
  EXPECT_EQ(mnemonic(OpKind::AtomicRMW), "atomic_rmw");
  EXPECT_FALSE(opKindFromMnemonic("fadd").has_value());
  EXPECT_FALSE(opKindFromMnemonic("").has_value());
}

TEST(IRTable, TraitsAndCounts) {
  EXPECT_TRUE(hasTrait(OpKind::Add, Pure));
  EXPECT_TRUE(hasTrait(OpKind::Add, Commutative));
  EXPECT_FALSE(hasTrait(OpKind::Sub, Commutative));
  EXPECT_TRUE(hasTrait(OpKind::Load, MemRead));
  EXPECT_FALSE(hasTrait(OpKind::Load, Pure));
  EXPECT_TRUE(hasTrait(OpKind::AtomicCas, MemWrite));
  EXPECT_TRUE(hasTrait(OpKind::Print, SideEffect));
  EXPECT_TRUE(hasTrait(OpKind::Yield, Terminator));
  EXPECT_TRUE(hasTrait(OpKind::Return, Terminator));
  EXPECT_FALSE(hasTrait(OpKind::For, Terminator));
  EXPECT_EQ(tableNumOperands(OpKind::Fma), 3);
  EXPECT_EQ(tableNumOperands(OpKind::Load), -1);
  EXPECT_EQ(tableNumResults(OpKind::Store), 0);
  EXPECT_EQ(tableNumResults(OpKind::If), -1);
  EXPECT_EQ(tableNumRegions(OpKind::While), 2);
  EXPECT_EQ(tableNumRegions(OpKind::For), 1);
  EXPECT_EQ(tableNumRegions(OpKind::Add), 0);
}

TEST(IRBuilder, CreateSetsParentsRegionsAndLocation) {
  Module m;
  uint32_t file = m.fileIndex("k.tc");
  EXPECT_EQ(m.fileIndex("other.tc"), 1u);
  EXPECT_EQ(m.fileIndex("k.tc"), file);
  Function *f = m.addFunction("k", Location{file, 1, 1});
  Value *n = f->addParam("N", Type::scalar(DType::I32));
  EXPECT_EQ(f->numParams(), 1u);
  EXPECT_EQ(f->paramName(0), "N");
  EXPECT_EQ(n->ownerBlock(), &f->body());
  EXPECT_EQ(n->definingOp(), nullptr);

  Builder b(&f->body());
  b.setLoc(Location{file, 3, 7});
  Op *forOp = b.create(OpKind::For, {Type::scalar(DType::I32)}, {n, n, n, n}, {}, 1);
  EXPECT_EQ(forOp->parentBlock(), &f->body());
  EXPECT_EQ(forOp->loc(), (Location{file, 3, 7}));
  ASSERT_EQ(forOp->numRegions(), 1u);
  EXPECT_EQ(forOp->region(0)->parentOp(), forOp);
  EXPECT_TRUE(forOp->region(0)->ops().empty());
  EXPECT_EQ(forOp->result()->definingOp(), forOp);
  EXPECT_EQ(forOp->result()->index(), 0u);

  Value *iv = forOp->region(0)->addArgument(Type::scalar(DType::I32));
  EXPECT_EQ(iv->ownerBlock(), forOp->region(0));
  EXPECT_EQ(iv->index(), 0u);
  Builder inner(forOp->region(0));
  Op *y = inner.create(OpKind::Yield, {}, {iv});
  EXPECT_EQ(y->parentBlock(), forOp->region(0));
  EXPECT_EQ(forOp->region(0)->terminator(), y);
  EXPECT_EQ(f->body().terminator(), nullptr);
  EXPECT_EQ(m.lookup("k"), f);
  EXPECT_EQ(m.lookup("q"), nullptr);
}

TEST(IRBuilder, InsertionPoint) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  Builder b(&f->body());
  Value *c1 = b.constantInt(Type::scalar(DType::I32), 1);
  b.create(OpKind::Return, {}, {});
  b.setInsertionPoint(&f->body(), 1);
  Value *c2 = b.constantInt(Type::scalar(DType::I32), 2);
  Value *sum = b.binary(OpKind::Add, c1, c2);
  auto &ops = f->body().ops();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0]->result(), c1);
  EXPECT_EQ(ops[1]->result(), c2);
  EXPECT_EQ(ops[2]->result(), sum);
  EXPECT_EQ(ops[3]->kind(), OpKind::Return);
}

TEST(IRBuilder, AttributesAreSortedAndTyped) {
  Op op(OpKind::Range, Location{});
  op.setAttr("start", int64_t(0));
  op.setAttr("end", int64_t(32));
  op.setAttr("label", std::string("x"));
  op.setAttr("perm", std::vector<int64_t>{1, 0});
  op.setAttr("f", 0.5);
  ASSERT_EQ(op.attrs().size(), 5u);
  EXPECT_EQ(op.attrs()[0].name, "end");
  EXPECT_EQ(op.attrs()[1].name, "f");
  EXPECT_EQ(op.attrs()[2].name, "label");
  EXPECT_EQ(op.attrs()[3].name, "perm");
  EXPECT_EQ(op.attrs()[4].name, "start");
  op.setAttr("end", int64_t(64)); // replaces
  EXPECT_EQ(op.attrs().size(), 5u);
  EXPECT_EQ(op.intAttr("end"), 64);
  EXPECT_EQ(op.floatAttr("f"), 0.5);
  EXPECT_EQ(op.strAttr("label"), "x");
  EXPECT_EQ(op.intsAttr("perm"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(op.attr("missing"), nullptr);
}

TEST(IRBuilder, Conveniences) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  Value *x = f->addParam("x", Type::scalar(DType::F32));
  Builder b(&f->body());

  // Integer constants are wrapped to the dtype as C converts; bool is != 0.
  Value *u8 = b.constantInt(Type::scalar(DType::U8), -1);
  EXPECT_EQ(u8->definingOp()->intAttr("value"), 255);
  Value *i8 = b.constantInt(Type::scalar(DType::I8), 200);
  EXPECT_EQ(i8->definingOp()->intAttr("value"), -56);
  Value *bl = b.constantInt(Type::scalar(DType::Bool), 7);
  EXPECT_EQ(bl->definingOp()->intAttr("value"), 1);
  // A float-typed constantInt stores a float; constantFloat rounds to the dtype.
  Value *fi = b.constantInt(Type::tile(DType::F32, {4}), 3);
  EXPECT_EQ(fi->definingOp()->floatAttr("value"), 3.0);
  Value *h = b.constantFloat(Type::scalar(DType::F16), 1.0 + 1.0 / 4096); // rounds to 1.0
  EXPECT_EQ(h->definingOp()->floatAttr("value"), 1.0);

  Value *cmp = b.binary(OpKind::CmpLt, x, x);
  EXPECT_EQ(cmp->type(), Type::scalar(DType::Bool));
  Value *sp = b.splat(x, {4, 8});
  EXPECT_EQ(sp->type(), Type::tile(DType::F32, {4, 8}));
  Value *tc = b.binary(OpKind::CmpEq, sp, sp);
  EXPECT_EQ(tc->type(), Type::tile(DType::Bool, {4, 8}));
  Value *c = b.cast(sp, DType::F16);
  EXPECT_EQ(c->type(), Type::tile(DType::F16, {4, 8}));
  Value *e = b.expandDims(sp, 1);
  EXPECT_EQ(e->type(), Type::tile(DType::F32, {4, 1, 8}));
  EXPECT_EQ(e->definingOp()->intAttr("axis"), 1);
  Value *br = b.broadcast(e, {4, 2, 8});
  EXPECT_EQ(br->type(), Type::tile(DType::F32, {4, 2, 8}));
  Value *neg = b.unary(OpKind::Neg, br);
  EXPECT_EQ(neg->type(), br->type());
  EXPECT_EQ(neg->definingOp()->operand(0), br);
}
