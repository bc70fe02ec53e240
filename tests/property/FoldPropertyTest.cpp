// Constant folding changes no result: one op on random constants (every
// elementwise op, cast and bitcast the verifier allows, on every dtype it
// allows, with operands weighted towards the hard values: zeros of both signs,
// MIN, -1, NaN, inf, rounding midpoints) is run by the interpreter twice, as
// written and after ir::foldConstants, and the two runs store the same bits or
// trap alike. The folder and the interpreter are two users of the one copy of
// the scalar rules (support/Numerics.h), so this checks the folder's part:
// the op-to-rule mapping, the operand and result encodings (constants hold
// doubles and int64s) and what it refuses to fold. Where the unfolded run
// succeeds with a result that is not NaN, the op must have been folded.
#include "interp/InterpreterBackend.h"
#include "ir/IRParser.h"
#include "ir/Passes.h"
#include "ir/Verifier.h"
#include "runtime/Launch.h"
#include "support/SourceManager.h"
#include "support/ValueBits.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tc::DType;

const DType kInts[] = {DType::I8, DType::I16, DType::I32, DType::I64,
                       DType::U8, DType::U16, DType::U32, DType::U64};
const DType kFloats[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

enum class Kind { IntFloat, IntBool, Int, Any, Compare, Float, FloatOrInt, Cast, Bitcast, Fma };

struct OpSpec {
  const char *name;
  int arity;
  Kind kind;
};

const OpSpec kOps[] = {
    {"add", 2, Kind::IntFloat},   {"sub", 2, Kind::IntFloat},    {"mul", 2, Kind::IntFloat},
    {"div", 2, Kind::IntFloat},   {"rem", 2, Kind::IntFloat},    {"and", 2, Kind::IntBool},
    {"or", 2, Kind::IntBool},     {"xor", 2, Kind::IntBool},     {"shl", 2, Kind::Int},
    {"shr", 2, Kind::Int},        {"umulhi", 2, Kind::Int},      {"min", 2, Kind::Any},
    {"max", 2, Kind::Any},        {"cmp_eq", 2, Kind::Compare},  {"cmp_ne", 2, Kind::Compare},
    {"cmp_lt", 2, Kind::Compare}, {"cmp_le", 2, Kind::Compare},  {"cmp_gt", 2, Kind::Compare},
    {"cmp_ge", 2, Kind::Compare}, {"neg", 1, Kind::FloatOrInt},  {"abs", 1, Kind::FloatOrInt},
    {"not", 1, Kind::IntBool},    {"exp", 1, Kind::Float},       {"exp2", 1, Kind::Float},
    {"log", 1, Kind::Float},      {"log2", 1, Kind::Float},      {"sqrt", 1, Kind::Float},
    {"rsqrt", 1, Kind::Float},    {"sin", 1, Kind::Float},       {"cos", 1, Kind::Float},
    {"floor", 1, Kind::Float},    {"ceil", 1, Kind::Float},      {"fma", 3, Kind::Fma},
    {"cast", 1, Kind::Cast},      {"bitcast", 1, Kind::Bitcast},
};

std::vector<DType> operandDTypes(Kind k) {
  std::vector<DType> out;
  auto add = [&](const auto &list) { out.insert(out.end(), std::begin(list), std::end(list)); };
  switch (k) {
  case Kind::IntFloat:
  case Kind::FloatOrInt:
    add(kInts);
    add(kFloats);
    break;
  case Kind::IntBool:
    add(kInts);
    out.push_back(DType::Bool);
    break;
  case Kind::Int: add(kInts); break;
  case Kind::Any:
  case Kind::Compare:
  case Kind::Cast:
    add(kInts);
    add(kFloats);
    out.push_back(DType::Bool);
    break;
  case Kind::Float:
  case Kind::Fma: add(kFloats); break;
  case Kind::Bitcast:
    add(kInts);
    add(kFloats);
    break;
  }
  return out;
}

/// Raw bits of dtype t: mostly hard values, some uniformly random.
rc::Gen<uint64_t> genBits(DType t) {
  unsigned w = tc::bitWidth(t);
  uint64_t mask = w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  std::vector<uint64_t> hard = {0, 1, 2, 3, 7, mask, mask - 1};
  if (w > 1) {
    uint64_t top = uint64_t(1) << (w - 1);
    hard.insert(hard.end(), {top, top - 1, top + 1, uint64_t(w - 1), uint64_t(w)});
  }
  if (tc::isFloat(t))
    for (double d : std::initializer_list<double>{0.0,
                                                  -0.0,
                                                  1.0,
                                                  -1.0,
                                                  0.5,
                                                  1.5,
                                                  2.5,
                                                  -2.5,
                                                  65504.0,
                                                  65520.0,
                                                  1e30,
                                                  -1e-30,
                                                  INFINITY,
                                                  -INFINITY,
                                                  NAN,
                                                  16777217.0,
                                                  9007199254740993.0,
                                                  2147483648.0,
                                                  -2147483649.0,
                                                  255.5,
                                                  1.0 + 0x1p-8 + 0x1p-30,
                                                  1.0 + 0x1p-11})
      hard.push_back(tc::num::floatBits(t, d));
  return rc::gen::map(
      rc::gen::pair(rc::gen::inRange(0, 3),
                    rc::gen::pair(rc::gen::elementOf(hard), rc::gen::arbitrary<uint64_t>())),
      [mask](const std::pair<int, std::pair<uint64_t, uint64_t>> &p) {
        return (p.first == 0 ? p.second.second : p.second.first) & mask;
      });
}

/// The constant's text: an integer's value, or a float's exact double.
std::string literal(DType t, uint64_t bits) {
  if (!tc::isFloat(t))
    return std::to_string(static_cast<int64_t>(tc::num::intValue(t, bits)));
  double d = tc::num::floatValue(t, bits);
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

struct Outcome {
  std::string status;
  std::vector<uint8_t> bytes;
};

/// Runs `kernel @k(%p)` once; the bits it stored at p[0], or its trap.
Outcome run(std::unique_ptr<tc::ir::Module> m, DType rt) {
  const tc::ir::Function *fn = m->functions[0].get();
  tc::CompiledKernel k(std::move(m), fn, std::make_shared<tc::SourceManager>(), {});
  tc::HostArray out = tc::HostArray::zeros(rt, {1});
  tc::LaunchArgs args;
  args.setBuffer("p", &out);
  tc::RunResult r = tc::createInterpreterBackend()->launch(k, {1, 1, 1}, args, {});
  Outcome o;
  if (r.status == tc::RunResult::Status::Ok)
    o.status = "ok";
  else if (r.status == tc::RunResult::Status::Trapped)
    o.status = "trap: " + (r.trap ? r.trap->render() : std::string("?"));
  else
    o.status = "error: " + r.error;
  o.bytes = out.data;
  return o;
}

std::unique_ptr<tc::ir::Module> parse(const std::string &text) {
  tc::SourceManager sm;
  tc::DiagEngine diags(sm);
  diags.setOutput(nullptr);
  auto m = tc::ir::parseModule(sm.addBuffer("fold.tir", text), sm, diags);
  if (m && !tc::ir::verifyModule(*m).empty())
    return nullptr;
  return m;
}

TEST(FoldProperty, FoldingChangesNoResult) {
  int folded = 0, runs = 0;
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::max(params.maxSuccess, 2000); // cheap: about 0.1 ms an op
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata md;
  md.id = std::string(info->test_suite_name()) + "/" + info->name();
  md.description = info->name();
  auto result = rc::detail::checkTestable(
      [&] {
        const OpSpec op = kOps[*rc::gen::inRange<size_t>(0, std::size(kOps))];
        auto pick = [](const std::vector<DType> &v) {
          return v[*rc::gen::inRange<size_t>(0, v.size())];
        };
        DType t = pick(operandDTypes(op.kind));
        DType rt = t;
        if (op.kind == Kind::Compare)
          rt = DType::Bool;
        if (op.kind == Kind::Cast)
          rt = pick(operandDTypes(Kind::Cast));
        if (op.kind == Kind::Bitcast) {
          std::vector<DType> same;
          for (DType d : operandDTypes(Kind::Bitcast))
            if (tc::bitWidth(d) == tc::bitWidth(t))
              same.push_back(d);
          rt = pick(same);
        }
        std::string ty(tc::irName(t)), rty(tc::irName(rt));
        std::string text = "kernel @k(%p: !ptr<" + rty + ">) {\n";
        std::string operands;
        for (int i = 0; i < op.arity; ++i) {
          std::string name = std::string("%c") + char('0' + i);
          text +=
              "  " + name + " = constant <value = " + literal(t, *genBits(t)) + "> : " + ty + "\n";
          operands += (i ? ", " : "") + name;
        }
        text += "  %r = " + std::string(op.name) + " " + operands + " : " + rty +
                "\n  store %p, %r\n  return\n}\n";
        RC_TAG(op.name);
        auto plain = parse(text), toFold = parse(text);
        RC_ASSERT(plain != nullptr);
        RC_ASSERT(toFold != nullptr);
        tc::ir::foldConstants(*toFold);
        RC_ASSERT(tc::ir::verifyModule(*toFold).empty());
        const auto &ops = toFold->functions[0]->body().ops();
        bool didFold =
            ops[ops.size() - 2]->operand(1)->definingOp()->kind() == tc::ir::OpKind::Constant;
        Outcome a = run(std::move(plain), rt), b = run(std::move(toFold), rt);
        if (a.status != b.status || a.bytes != b.bytes)
          RC_FAIL(text + "as written: " + a.status + ", folded (" + (didFold ? "yes" : "no") +
                  "): " + b.status + ", bytes differ: " + (a.bytes != b.bytes ? "yes" : "no"));
        uint64_t bits = 0;
        std::memcpy(&bits, a.bytes.data(), std::min<size_t>(a.bytes.size(), 8));
        bool nan = tc::isFloat(rt) && std::isnan(tc::num::floatValue(rt, bits));
        bool nanInput =
            op.kind == Kind::Bitcast && tc::isFloat(t) && text.find("nan") != std::string::npos;
        if (a.status == "ok" && !nan && !nanInput)
          RC_ASSERT(didFold);
        folded += didFold;
        ++runs;
      },
      md, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str();
  }
  std::cout << folded << " of " << runs << " ops folded\n";
  EXPECT_GT(folded, runs / 2);
}

} // namespace
