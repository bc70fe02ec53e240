// The verifier: one bad module per rule, checking the message; expected
// messages follow the rules of the brief and docs/semantics.md (rules 10 and 11).
#include "ir/IRParser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace tc;
using namespace tc::ir;

namespace {

std::unique_ptr<Module> parseText(const std::string &text) {
  SourceManager sm;
  DiagEngine diags(sm);
  std::ostringstream err;
  diags.setOutput(&err);
  auto m = parseModule(sm.addBuffer("v.tir", text), sm, diags);
  EXPECT_TRUE(m) << err.str() << text;
  return m;
}

std::vector<std::string> messages(const Module &m) {
  std::vector<std::string> out;
  for (const VerifyFailure &f : verifyModule(m))
    out.push_back(f.message);
  return out;
}

/// Verifier messages of `kernel @k(params) { body return }`.
std::vector<std::string> verifyBody(const std::string &params, const std::string &body) {
  auto m = parseText("kernel @k(" + params + ") {\n" + body + "\n  return\n}\n");
  return m ? messages(*m) : std::vector<std::string>{"<parse error>"};
}

/// Expects exactly one failure with message `want`.
void expectOne(const std::string &params, const std::string &body, const std::string &want) {
  std::vector<std::string> got = verifyBody(params, body);
  ASSERT_EQ(got.size(), 1u) << body << "\nfirst: " << (got.empty() ? "" : got[0]);
  EXPECT_EQ(got[0], want) << body;
}

void expectValid(const std::string &params, const std::string &body) {
  std::vector<std::string> got = verifyBody(params, body);
  EXPECT_TRUE(got.empty()) << body << "\nfirst: " << got[0];
}

const Type kI32 = Type::scalar(DType::I32);

} // namespace

TEST(IRVerifier, OperandResultRegionCounts) {
  expectOne("%p: !ptr<f32>", "  %0 = load : f32", "'load' expects 1 to 3 operands, got 0");
  expectOne("%p: !ptr<f32>, %v: f32, %m: i1", "  store %p, %v, %m, %m",
            "'store' expects 2 to 3 operands, got 4");
  expectOne("%p: !ptr<f32>, %v: f32", "  %0 = atomic_rmw %p <kind = \"add\"> : f32",
            "'atomic_rmw' expects 2 to 3 operands, got 1");
  expectOne("%p: !ptr<f32>, %v: f32", "  %0 = atomic_cas %p, %v : f32",
            "'atomic_cas' expects 3 to 4 operands, got 2");
  expectOne("%n: i32", "  for %n, %n {\n  ^(%i: i32):\n    yield\n  }",
            "'for' expects at least 3 operands, got 2");
  expectOne("%c: i1", "  if %c, %c {\n    yield\n  } {\n    yield\n  }",
            "'if' expects 1 operand, got 2");

  // Fixed counts cannot be written wrongly in text: build them.
  Module m;
  Function *f = m.addFunction("k", Location{});
  Value *a = f->addParam("a", kI32);
  Builder b(&f->body());
  b.create(OpKind::Add, {kI32}, {a, a, a});
  b.create(OpKind::Neg, {kI32, kI32}, {a});
  b.create(OpKind::Sub, {kI32}, {a, a}, {}, 1)->region(0);
  b.create(OpKind::Return, {}, {});
  std::vector<std::string> got = messages(m);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "'add' expects 2 operands, got 3");
  EXPECT_EQ(got[1], "'neg' expects 1 result, got 2");
  EXPECT_EQ(got[2], "'sub' expects 0 regions, got 1");
}

TEST(IRVerifier, ElementwiseTypes) {
  expectValid("%a: tile<4xi32>", "  %0 = add %a, %a : tile<4xi32>");
  expectOne("%a: i32, %b: i64", "  %0 = add %a, %b : i32", "operand 1 has type i64, expected i32");
  expectOne("%a: i32", "  %0 = neg %a : i64", "operand 0 has type i32, expected i64");
  expectOne("%a: f32", "  %0 = and %a, %a : f32",
            "'and' needs an integer or bool type, but the result has type f32");
  expectOne("%a: i32", "  %0 = exp %a : i32",
            "'exp' needs a float type, but the result has type i32");
  expectOne("%a: f32", "  %0 = shl %a, %a : f32",
            "'shl' needs an integer type, but the result has type f32");
  expectOne("%a: i1", "  %0 = add %a, %a : i1",
            "'add' needs an integer or float type, but the result has type i1");
  expectOne("%a: !ptr<f32>", "  %0 = max %a, %a : !ptr<f32>",
            "'max' needs a non-pointer type, but the result has type !ptr<f32>");
  expectOne("%a: f16, %b: f32", "  %0 = fma %a, %a, %b : f16",
            "operand 2 has type f32, expected f16");
}

TEST(IRVerifier, Compares) {
  expectValid("%a: tile<4xf32>", "  %0 = cmp_lt %a, %a : tile<4xi1>");
  expectOne("%a: tile<4xf32>, %b: tile<4xf16>", "  %0 = cmp_eq %a, %b : tile<4xi1>",
            "operand 1 has type tile<4xf16>, expected tile<4xf32>");
  expectOne("%a: tile<4xf32>", "  %0 = cmp_ne %a, %a : tile<4xi32>",
            "result 0 has type tile<4xi32>, expected tile<4xi1>");
  expectOne("%a: tile<4xf32>", "  %0 = cmp_ge %a, %a : i1",
            "result 0 has type i1, expected tile<4xi1>");
}

TEST(IRVerifier, SelectAndAddPtr) {
  expectValid("%c: tile<4xi1>, %a: tile<4x!ptr<f32>>",
              "  %0 = select %c, %a, %a : tile<4x!ptr<f32>>");
  expectOne("%c: i1, %a: tile<4xf32>", "  %0 = select %c, %a, %a : tile<4xf32>",
            "operand 0 has type i1, expected tile<4xi1>");
  expectOne("%c: tile<4xi1>, %a: tile<4xf32>, %b: tile<4xi32>",
            "  %0 = select %c, %a, %b : tile<4xf32>",
            "operand 2 has type tile<4xi32>, expected tile<4xf32>");
  expectValid("%p: tile<4x!ptr<f32>>, %o: tile<4xu8>", "  %0 = addptr %p, %o : tile<4x!ptr<f32>>");
  expectOne("%p: tile<4x!ptr<f32>>, %o: tile<4xf32>", "  %0 = addptr %p, %o : tile<4x!ptr<f32>>",
            "addptr offset has type tile<4xf32>, expected an integer of shape [4]");
  expectOne("%p: tile<4x!ptr<f32>>, %o: i32", "  %0 = addptr %p, %o : tile<4x!ptr<f32>>",
            "addptr offset has type i32, expected an integer of shape [4]");
  expectOne("%p: !ptr<f16>, %o: i32", "  %0 = addptr %p, %o : !ptr<f32>",
            "operand 0 has type !ptr<f16>, expected !ptr<f32>");
  expectOne("%p: i64, %o: i32", "  %0 = addptr %p, %o : i64",
            "addptr result has type i64, expected a pointer");
}

TEST(IRVerifier, Casts) {
  expectValid("%a: tile<4xi32>", "  %0 = cast %a : tile<4xf16>");
  expectValid("%p: !ptr<f32>", "  %0 = cast %p : !ptr<f16>\n  %1 = bitcast %p : i64");
  expectOne("%a: tile<4xi32>", "  %0 = cast %a : tile<8xf32>",
            "'cast' changes the shape from tile<4xi32> to tile<8xf32>");
  expectOne("%p: !ptr<f32>", "  %0 = cast %p : i64",
            "cast between pointer and non-pointer types !ptr<f32> and i64");
  expectOne("%a: i32", "  %0 = bitcast %a : f64",
            "bitcast between types of different bit widths i32 and f64");
  expectValid("%a: tile<2xf16>", "  %0 = bitcast %a : tile<2xi16>");
}

TEST(IRVerifier, ShapeOps) {
  expectValid("%a: f32", "  %0 = splat %a : tile<4x2xf32>");
  expectOne("%a: tile<4xf32>", "  %0 = splat %a : tile<4xf32>",
            "splat operand has type tile<4xf32>, expected a scalar");
  expectOne("%a: f32", "  %0 = splat %a : f32", "splat result has type f32, expected a tile");
  expectOne("%a: f32", "  %0 = splat %a : tile<4xf64>",
            "result 0 has type tile<4xf64>, expected tile<4xf32>");

  expectValid("%a: tile<4x1xf32>", "  %0 = broadcast %a : tile<4x8xf32>");
  expectOne("%a: tile<4x2xf32>", "  %0 = broadcast %a : tile<4x8xf32>",
            "cannot broadcast tile<4x2xf32> to tile<4x8xf32> (axis 1)");
  expectOne("%a: tile<8xf32>", "  %0 = broadcast %a : tile<4x8xf32>",
            "cannot broadcast tile<8xf32> to tile<4x8xf32> (element types and ranks must match)");

  expectValid("%a: tile<4xf32>", "  %0 = expand_dims %a <axis = 1> : tile<4x1xf32>");
  expectOne("%a: tile<4xf32>", "  %0 = expand_dims %a <axis = 2> : tile<4x1xf32>",
            "axis 2 out of range for rank 1");
  expectOne("%a: tile<4xf32>", "  %0 = expand_dims %a <axis = 0> : tile<4x1xf32>",
            "result 0 has type tile<4x1xf32>, expected tile<1x4xf32>");
  expectOne("%a: tile<4xf32>", "  %0 = expand_dims %a : tile<1x4xf32>", "missing attribute 'axis'");

  expectValid("%a: tile<4x8xf32>", "  %0 = reshape %a : tile<32xf32>");
  expectOne("%a: tile<4xf32>", "  %0 = reshape %a : tile<8xf32>",
            "reshape from tile<4xf32> to tile<8xf32> changes the element count");

  expectValid("%a: tile<2x4x8xf32>", "  %0 = trans %a <perm = [2, 0, 1]> : tile<8x2x4xf32>");
  expectOne("%a: tile<4x8xf32>", "  %0 = trans %a <perm = [0, 0]> : tile<4x8xf32>",
            "perm is not a permutation of the 2 axes");
  expectOne("%a: tile<4x8xf32>", "  %0 = trans %a <perm = [1, 0]> : tile<4x8xf32>",
            "result 0 has type tile<4x8xf32>, expected tile<8x4xf32>");
  expectOne("%a: tile<4x8xf32>", "  %0 = trans %a <perm = 1> : tile<8x4xf32>",
            "attribute 'perm' must be a list of integers");
}

TEST(IRVerifier, ReduceFollowsRule10) {
  expectValid("%a: tile<4x8xf16>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : tile<8xf16>");
  expectValid("%a: tile<8xi8>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : i32");
  expectValid("%a: tile<8xu16>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : u32");
  expectValid("%a: tile<8xi1>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : u32");
  expectValid("%a: tile<8xi64>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : i64");
  expectValid("%a: tile<8xi8>", "  %0 = reduce %a <axis = 0, kind = \"max\"> : i8");
  expectValid("%a: tile<8x4xf32>", "  %0 = reduce %a <axis = 1, kind = \"argmin\"> : tile<8xi32>");
  expectValid("%a: tile<8xi1>", "  %0 = reduce %a <axis = 0, kind = \"xor\"> : i1");
  expectOne("%a: tile<8xi8>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : i8",
            "result 0 has type i8, expected i32");
  expectOne("%a: tile<8xu8>", "  %0 = reduce %a <axis = 0, kind = \"add\"> : i32",
            "result 0 has type i32, expected u32");
  expectOne("%a: tile<8xf16>", "  %0 = reduce %a <axis = 0, kind = \"argmax\"> : f16",
            "result 0 has type f16, expected i32");
  expectOne("%a: tile<4x8xf32>", "  %0 = reduce %a <axis = 1, kind = \"max\"> : tile<8xf32>",
            "result 0 has type tile<8xf32>, expected tile<4xf32>");
  expectOne("%a: tile<8xf32>", "  %0 = reduce %a <axis = 1, kind = \"max\"> : f32",
            "axis 1 out of range for rank 1");
  expectOne("%a: tile<8xf32>", "  %0 = reduce %a <axis = 0, kind = \"mul\"> : f32",
            "unknown reduction kind 'mul'");
  expectOne("%a: tile<8xf32>", "  %0 = reduce %a <axis = 0, kind = \"xor\"> : f32",
            "'reduce' needs an integer or bool type, but the operand has type tile<8xf32>");
  expectOne("%a: tile<8xf32>", "  %0 = reduce %a <axis = 0> : f32", "missing attribute 'kind'");
}

TEST(IRVerifier, DotFollowsRule11) {
  expectValid("%a: tile<16x8xf16>, %b: tile<8x4xf16>, %c: tile<16x4xf32>",
              "  %0 = dot %a, %b, %c : tile<16x4xf32>");
  expectValid("%a: tile<16x8xbf16>, %b: tile<8x4xbf16>, %c: tile<16x4xf32>",
              "  %0 = dot %a, %b, %c : tile<16x4xf32>");
  expectValid("%a: tile<16x8xi8>, %b: tile<8x4xi8>, %c: tile<16x4xi32>",
              "  %0 = dot %a, %b, %c : tile<16x4xi32>");
  expectValid("%a: tile<2x16x8xf64>, %b: tile<2x8x4xf64>, %c: tile<2x16x4xf64>",
              "  %0 = dot %a, %b, %c : tile<2x16x4xf64>");
  expectOne("%a: tile<16x8xf16>, %b: tile<8x4xf16>, %c: tile<16x4xf16>",
            "  %0 = dot %a, %b, %c : tile<16x4xf16>",
            "result 0 has type tile<16x4xf16>, expected tile<16x4xf32>");
  expectOne("%a: tile<16x8xf32>, %b: tile<4x8xf32>, %c: tile<16x4xf32>",
            "  %0 = dot %a, %b, %c : tile<16x4xf32>",
            "dot operand shapes [16, 8] and [4, 8] do not agree");
  expectOne("%a: tile<2x16x8xf32>, %b: tile<4x8x4xf32>, %c: tile<2x16x4xf32>",
            "  %0 = dot %a, %b, %c : tile<2x16x4xf32>",
            "dot operand shapes [2, 16, 8] and [4, 8, 4] do not agree");
  expectOne("%a: tile<16x8xf32>, %b: tile<8x4xf32>, %c: tile<16x8xf32>",
            "  %0 = dot %a, %b, %c : tile<16x4xf32>",
            "operand 2 has type tile<16x8xf32>, expected tile<16x4xf32>");
  expectOne("%a: tile<16x8xi32>, %b: tile<8x4xi32>, %c: tile<16x4xi32>",
            "  %0 = dot %a, %b, %c : tile<16x4xi32>", "dot of i32 operands is not supported");
  expectOne("%a: tile<16x8xf16>, %b: tile<8x4xf32>, %c: tile<16x4xf32>",
            "  %0 = dot %a, %b, %c : tile<16x4xf32>",
            "dot operands tile<16x8xf16> and tile<8x4xf32> must have one non-pointer dtype");
}

TEST(IRVerifier, LoadStoreAtomics) {
  const char *params = "%p: tile<4x!ptr<f16>>, %m: tile<4xi1>, %v: tile<4xf16>";
  expectValid(params, "  %0 = load %p, %m, %v : tile<4xf16>\n  store %p, %0, %m");
  expectValid("%p: !ptr<f32>", "  %0 = load %p : f32");
  expectOne(params, "  %0 = load %v : tile<4xf16>",
            "load pointer has type tile<4xf16>, expected a pointer");
  expectOne(params, "  %0 = load %p : tile<4xf32>",
            "result 0 has type tile<4xf32>, expected tile<4xf16>");
  expectOne(params, "  %0 = load %p, %v : tile<4xf16>",
            "operand 1 has type tile<4xf16>, expected tile<4xi1>");
  expectOne(params, "  %0 = load %p, %m, %m : tile<4xf16>",
            "operand 2 has type tile<4xi1>, expected tile<4xf16>");
  expectOne(params, "  store %p, %m", "operand 1 has type tile<4xi1>, expected tile<4xf16>");
  expectOne(params + std::string(", %s: i1"), "  store %p, %v, %s",
            "operand 2 has type i1, expected tile<4xi1>");
  expectOne(params, "  store %v, %v", "store pointer has type tile<4xf16>, expected a pointer");
  expectValid(params, "  %0 = atomic_rmw %p, %v, %m <kind = \"xchg\"> : tile<4xf16>\n"
                      "  %1 = atomic_cas %p, %v, %v, %m : tile<4xf16>");
  expectOne(params, "  %0 = atomic_rmw %p, %v <kind = \"mul\"> : tile<4xf16>",
            "unknown atomic kind 'mul'");
  expectOne(params, "  %0 = atomic_rmw %p, %v : tile<4xf16>", "missing attribute 'kind'");
  expectOne(params, "  %0 = atomic_cas %p, %v, %m : tile<4xf16>",
            "operand 2 has type tile<4xi1>, expected tile<4xf16>");
  expectOne(params, "  %0 = atomic_rmw %p, %v <kind = \"add\"> : f16",
            "result 0 has type f16, expected tile<4xf16>");
}

TEST(IRVerifier, ValuesAndQueries) {
  expectValid("", "  %0 = range <end = 20, start = 4> : tile<16xi32>");
  expectOne("", "  %0 = range <end = 28, start = 4> : tile<24xi32>",
            "range size 24 is not a power of two");
  expectOne("", "  %0 = range <end = 4, start = 4> : tile<1xi32>",
            "range bounds [4, 4) must satisfy start < end within i32");
  expectOne("", "  %0 = range <end = 16, start = 0> : tile<16xi64>",
            "result 0 has type tile<16xi64>, expected tile<16xi32>");
  expectOne("", "  %0 = range <end = 16> : tile<16xi32>", "missing attribute 'start'");

  expectValid("", "  %0 = constant <value = 255> : u8\n  %1 = constant <value = -1> : u64\n"
                  "  %2 = constant <value = 1> : i1\n  %3 = constant <value = 1.5> : tile<2xf16>");
  expectOne("", "  %0 = constant <value = 256> : u8", "value 256 does not fit type u8");
  expectOne("", "  %0 = constant <value = -1> : u32", "value -1 does not fit type u32");
  expectOne("", "  %0 = constant <value = -129> : i8", "value -129 does not fit type i8");
  expectOne("", "  %0 = constant <value = 2> : i1", "value 2 does not fit type i1");
  expectOne("", "  %0 = constant <value = 1.0> : i32",
            "attribute 'value' must be an integer for type i32");
  expectOne("", "  %0 = constant <value = 1> : f32",
            "attribute 'value' must be a float for type f32");
  expectOne("", "  %0 = constant : f32", "missing attribute 'value'");
  expectOne("", "  %0 = constant <value = 0> : !ptr<f32>", "constant of pointer type !ptr<f32>");

  expectValid("", "  %0 = get_program_id <axis = 2> : i32");
  expectOne("", "  %0 = get_num_programs <axis = 3> : i32", "axis 3 is not 0, 1 or 2");
  expectOne("", "  %0 = get_program_id <axis = 0> : i64", "result 0 has type i64, expected i32");
}

TEST(IRVerifier, PrintAssert) {
  expectValid("%a: tile<4xi1>", "  print <label = \"\">\n  assert %a <message = \"m\">");
  expectOne("%a: tile<4xi1>", "  print %a", "missing attribute 'label'");
  expectOne("%a: tile<4xi32>", "  assert %a <message = \"m\">",
            "assert condition has type tile<4xi32>, expected i1");
  expectOne("%a: i1", "  assert %a <message = 3>", "attribute 'message' must be a string");
}

TEST(IRVerifier, For) {
  const char *params = "%n: i32, %x: f32";
  expectValid(params,
              "  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i32, %a: f32):\n    yield %a\n  }");
  expectOne(params, "  %0 = for %x, %n, %n, %x : f32 {\n  ^(%i: f32, %a: f32):\n    yield %a\n  }",
            "for bound 0 has type f32, expected a scalar integer");
  expectOne("%n: i32, %m: i64", "  for %n, %m, %n {\n  ^(%i: i32):\n    yield\n  }",
            "operand 1 has type i64, expected i32");
  expectOne(params, "  %0 = for %n, %n, %n, %x : i32 {\n  ^(%i: i32, %a: f32):\n    yield %a\n  }",
            "results have types (i32), expected (f32)");
  expectOne(params, "  %0 = for %n, %n, %n, %x : f32 {\n  ^(%a: f32):\n    yield %a\n  }",
            "body arguments have types (f32), expected (i32, f32)");
  expectOne(params, "  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i32, %a: f32):\n    yield %i\n  }",
            "yielded values have types (i32), expected (f32)");
  expectOne(params, "  %0 = for %n, %n, %n, %x : f32 {\n  ^(%i: i32, %a: f32):\n  }",
            "region 0 of 'for' must end in 'yield'");
}

TEST(IRVerifier, If) {
  const char *params = "%c: i1, %x: f32";
  expectValid(params, "  %0 = if %c : f32 {\n    yield %x\n  } {\n    yield %x\n  }");
  expectOne("%c: tile<2xi1>", "  if %c {\n    yield\n  } {\n    yield\n  }",
            "if condition has type tile<2xi1>, expected i1");
  expectOne(params, "  %0 = if %c : f32 {\n    yield %x\n  } {\n    yield\n  }",
            "values yielded by region 1 have types (), expected (f32)");
  expectOne(params, "  if %c {\n    yield\n  } {\n  }", "region 1 of 'if' must end in 'yield'");
  expectOne(params, "  if %c {\n  ^(%a: i32):\n    yield\n  } {\n    yield\n  }",
            "region 0 of 'if' must have no arguments");
}

TEST(IRVerifier, While) {
  const char *params = "%n: i32, %x: f32";
  const char *ok = "  %0 = while %n : f32 {\n  ^(%a: i32):\n    %c = cmp_lt %a, %n : i1\n"
                   "    condition %c, %x\n  } {\n  ^(%b: f32):\n    yield %n\n  }";
  expectValid(params, ok);
  expectOne(params,
            "  %0 = while %n : f32 {\n  ^(%a: f32):\n    %c = cmp_lt %n, %n : i1\n"
            "    condition %c, %x\n  } {\n  ^(%b: f32):\n    yield %n\n  }",
            "before-region arguments have types (f32), expected (i32)");
  expectOne(params,
            "  %0 = while %n : f32 {\n  ^(%a: i32):\n    yield %x\n"
            "  } {\n  ^(%b: f32):\n    yield %n\n  }",
            "region 0 of 'while' must end in 'condition'");
  expectOne(params,
            "  %0 = while %n : f32 {\n  ^(%a: i32):\n"
            "    condition %a, %x\n  } {\n  ^(%b: f32):\n    yield %n\n  }",
            "while condition has type i32, expected i1");
  expectOne(params,
            "  %0 = while %n : f32 {\n  ^(%a: i32):\n    %c = cmp_lt %a, %n : i1\n"
            "    condition %c, %x\n  } {\n  ^(%b: i32):\n    yield %n\n  }",
            "after-region arguments have types (i32), expected (f32)");
  expectOne(params,
            "  %0 = while %n : i32 {\n  ^(%a: i32):\n    %c = cmp_lt %a, %n : i1\n"
            "    condition %c, %x\n  } {\n  ^(%b: f32):\n    yield %n\n  }",
            "results have types (i32), expected (f32)");
  expectOne(params,
            "  %0 = while %n : f32 {\n  ^(%a: i32):\n    %c = cmp_lt %a, %n : i1\n"
            "    condition %c, %x\n  } {\n  ^(%b: f32):\n    yield %b\n  }",
            "values yielded by the after-region have types (f32), expected (i32)");
  expectOne(params,
            "  %0 = while %n : f32 {\n  ^(%a: i32):\n    condition\n"
            "  } {\n  ^(%b: f32):\n    yield %n\n  }",
            "'condition' needs a condition operand");
}

TEST(IRVerifier, Terminators) {
  // The enclosing op's rule is checked before the ops of its regions.
  std::vector<std::string> got = verifyBody(
      "%c: i1", "  if %c {\n    yield\n    %0 = constant <value = 1> : i32\n  } {\n    yield\n  }");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "region 0 of 'if' must end in 'yield'");
  EXPECT_EQ(got[1], "terminator 'yield' must be the last op of its block");
  got = verifyBody("%c: i1", "  if %c {\n    yield\n    yield\n  } {\n    yield\n  }");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "terminator 'yield' must be the last op of its block");
  got = verifyBody("%c: i1", "  if %c {\n    return\n  } {\n    yield\n  }");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "region 0 of 'if' must end in 'yield'");
  EXPECT_EQ(got[1], "'return' is only allowed at the end of the function body");
  got = verifyBody("", "  return");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "terminator 'return' must be the last op of its block");

  auto m = parseText("kernel @k() {\n  %0 = constant <value = 1> : i32\n}\n"
                     "kernel @e() {\n}\n"
                     "kernel @y() {\n  yield\n}\n");
  ASSERT_TRUE(m);
  std::vector<VerifyFailure> failures = verifyModule(*m);
  ASSERT_EQ(failures.size(), 4u);
  EXPECT_EQ(failures[0].message, "function body must end in 'return'");
  EXPECT_EQ(failures[0].function, "k");
  EXPECT_EQ(failures[0].opText, "%0 = constant <value = 1> : i32");
  EXPECT_EQ(failures[1].message, "function body must end in 'return'");
  EXPECT_EQ(failures[1].function, "e");
  EXPECT_EQ(failures[1].opText, "");
  EXPECT_EQ(failures[2].message, "'yield' outside of a region");
  EXPECT_EQ(failures[3].message, "function body must end in 'return'");
}

TEST(IRVerifier, Dominance) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  Value *c = f->addParam("c", Type::scalar(DType::Bool));
  Function *g = m.addFunction("g", Location{});
  Value *foreign = g->addParam("x", kI32);
  Builder(&g->body()).create(OpKind::Return, {}, {});

  Builder b(&f->body());
  // A use before the definition.
  Op *early = b.create(OpKind::Neg, {kI32}, {nullptr});
  Value *later = b.constantInt(kI32, 1);
  early->setOperand(0, later);
  // A value defined inside a region, used after it.
  Op *ifOp = b.create(OpKind::If, {}, {c}, {}, 2);
  Builder inner(ifOp->region(0));
  Value *hidden = inner.constantInt(kI32, 2);
  inner.create(OpKind::Yield, {}, {});
  Builder(ifOp->region(1)).create(OpKind::Yield, {}, {});
  b.unary(OpKind::Neg, hidden);
  // A value of another function, and a null operand.
  b.unary(OpKind::Neg, foreign);
  b.create(OpKind::Abs, {kI32}, {nullptr});
  // Inside a region, outer values and the region's own arguments are visible.
  Op *forOp = b.create(OpKind::For, {}, {later, later, later}, {}, 1);
  Value *iv = forOp->region(0)->addArgument(kI32);
  Builder body(forOp->region(0));
  body.binary(OpKind::Add, iv, later);
  body.create(OpKind::Yield, {}, {});
  b.create(OpKind::Return, {}, {});

  std::vector<VerifyFailure> failures = verifyModule(m);
  ASSERT_EQ(failures.size(), 4u) << formatFailures(m, failures);
  EXPECT_EQ(failures[0].message, "operand 0 does not dominate this use");
  EXPECT_EQ(failures[0].opText, "%0 = neg %1 : i32");
  EXPECT_EQ(failures[1].message, "operand 0 does not dominate this use");
  EXPECT_EQ(failures[1].opText, "%3 = neg %2 : i32");
  EXPECT_EQ(failures[2].message, "operand 0 does not dominate this use");
  EXPECT_EQ(failures[2].opText, "%4 = neg %<unknown> : i32");
  EXPECT_EQ(failures[3].message, "operand 0 is null");
  EXPECT_EQ(failures[3].opText, "%5 = abs %<null> : i32");
}

TEST(IRVerifier, StructureAndTypes) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  Builder b(&f->body());
  b.create(OpKind::Constant, {Type::tile(DType::F32, {0})}, {}, {{"value", 0.0}});
  Op *c = b.create(OpKind::Constant, {kI32}, {}, {{"value", int64_t(1)}});
  c->setParentBlock(nullptr);
  b.create(OpKind::Return, {}, {});
  std::vector<std::string> got = messages(m);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "result 0 has type tile<0xf32> with a non-positive or too large dimension");
  EXPECT_EQ(got[1], "op's parent block link does not point at the block that holds it");
}

TEST(IRVerifier, CollectsAllAndFormats) {
  auto m = parseText("kernel @k(%a: i32, %b: i64) {\n"
                     "  %0 = add %a, %b : i32 loc(\"x.tc\":3:9)\n"
                     "  %1 = get_program_id <axis = 7> : i32\n"
                     "  return\n"
                     "}\n");
  ASSERT_TRUE(m);
  std::vector<VerifyFailure> failures = verifyModule(*m);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].loc, (Location{0, 3, 9}));
  EXPECT_EQ(formatFailures(*m, failures),
            "error: verifier: operand 1 has type i64, expected i32\n"
            "  in function @k: %0 = add %a, %b : i32 loc(\"x.tc\":3:9)\n"
            "error: verifier: axis 7 is not 0, 1 or 2\n"
            "  in function @k: %1 = get_program_id <axis = 7> : i32\n");
}
