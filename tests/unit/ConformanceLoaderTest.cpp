// The suite loader: every error path, with the file and JSON path it names.
#include "conformance/Case.h"
#include "support/Npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tc;
using namespace tc::conf;

namespace {

const char *kKernel = "__global__ void k(int N, int *x, int *y) { *y = *x + N; }";

// A suite with one case made of `fields` (JSON members, without braces).
std::string suiteWith(const std::string &fields) {
  return R"({"format": "triton-conformance/1", "suite": "s", "cases": [{)" + fields + "}]}";
}

// A valid case's members; `args` and `expect` replaceable.
std::string caseFields(const std::string &args, const std::string &expect,
                       const std::string &extra = "") {
  return R"("name": "c", "source": ")" + std::string(kKernel) + R"(", "grid": [1], "args": )" +
         args + R"(, "expect": )" + expect + extra;
}

const std::string kArgs =
    R"([{"name": "N", "dtype": "int32", "value": 1},
        {"name": "x", "dtype": "int32", "shape": [2], "data": [1, 2]},
        {"name": "y", "dtype": "int32", "shape": [2], "fill": 0}])";
const std::string kExpect = R"({"outputs": {"y": {"data": [2, 0]}}})";

LoadResult load(const std::string &text, const std::string &dir = ".") {
  return loadSuiteText(text, "s.json", dir);
}

// The single error of loading `text` (fails the test if there is not exactly one).
std::string oneError(const std::string &text, const std::string &dir = ".") {
  LoadResult r = load(text, dir);
  EXPECT_EQ(r.errors.size(), 1u) << (r.errors.empty() ? "" : r.errors[0]);
  return r.errors.empty() ? "" : r.errors[0];
}

std::string caseError(const std::string &args, const std::string &expect,
                      const std::string &extra = "") {
  return oneError(suiteWith(caseFields(args, expect, extra)));
}

std::string argError(const std::string &arg) {
  return caseError(R"([{"name": "N", "dtype": "int32", "value": 1}, )" + arg + "]",
                   R"({"implementation_defined": true})");
}

// A scratch directory for files the suites refer to.
class TempDir {
public:
  TempDir() {
    char tmpl[] = "/tmp/tc-conf-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string &path() const { return path_; }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(path_ + "/" + name, std::ios::binary) << text;
  }

private:
  std::string path_;
};

} // namespace

TEST(ConformanceLoader, ValidSuiteLoads) {
  LoadResult r = load(suiteWith(caseFields(kArgs, kExpect,
                                           R"(, "features": ["op.add"], "backends": ["interp"],
                                              "defines": {"A": 1, "B": [2, 3], "C": ["x", "y"]},
                                              "num_warps": 4)")));
  ASSERT_TRUE(r.ok()) << r.errors[0];
  EXPECT_TRUE(r.warnings.empty());
  const Suite &s = *r.suite;
  EXPECT_EQ(s.name, "s");
  ASSERT_EQ(s.cases.size(), 1u);
  const Case &c = s.cases[0];
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(c.path, "cases[0]");
  EXPECT_EQ(c.features, std::vector<std::string>{"op.add"});
  EXPECT_EQ(c.grid, std::vector<std::string>{"1"});
  EXPECT_EQ(c.numWarps, 4);
  EXPECT_TRUE(c.runsOn("interp"));
  EXPECT_FALSE(c.runsOn("gpu"));
  ASSERT_EQ(c.args.size(), 3u);
  EXPECT_FALSE(c.args[0].isBuffer);
  EXPECT_EQ(c.args[0].scalar.bits, 1u);
  EXPECT_TRUE(c.args[1].isBuffer);
  EXPECT_EQ(c.args[1].contents.getBits(1), 2u);
  EXPECT_EQ(c.expect.kind, ExpectKind::Outputs);
  ASSERT_EQ(c.expect.outputs.size(), 1u);
  EXPECT_EQ(c.expect.outputs[0].compare.kind, CompareSpec::Kind::Exact);
  // Variants: the product of the lists, first list slowest; labels name the lists only.
  std::vector<Variant> v = c.variants();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].label, "B=2 C=x");
  EXPECT_EQ(v[1].label, "B=2 C=y");
  EXPECT_EQ(v[3].label, "B=3 C=y");
  DefineList want = {{"A", "1"}, {"B", "3"}, {"C", "x"}};
  EXPECT_EQ(v[2].defines, want);
}

TEST(ConformanceLoader, MalformedJsonGivesLineColumnAndPath) {
  std::string e = oneError("{\n  \"a\": [1, 2,, 3]\n}");
  EXPECT_EQ(e.rfind("s.json:2:14: a[2]: malformed JSON: ", 0), 0u) << e;
  EXPECT_NE(oneError("").find("malformed JSON"), std::string::npos);
  EXPECT_EQ(oneError("{\"cases\": [{\"name\": 1, \"name\": 2}]}").rfind(
                "s.json: cases[0]: duplicate key 'name'", 0),
            0u);
}

TEST(ConformanceLoader, DeepNestingIsAnError) {
  std::string deep(200, '[');
  EXPECT_NE(oneError(deep).find("nesting deeper than 64 levels"), std::string::npos);
}

TEST(ConformanceLoader, TopLevelErrors) {
  EXPECT_EQ(oneError("[]"), "s.json: a suite file must hold a JSON object, found array");
  EXPECT_EQ(oneError(R"({"format": "triton-conformance/2", "suite": "s", "cases": []})"),
            "s.json: format: unsupported format 'triton-conformance/2' (expected "
            "'triton-conformance/1')");
  EXPECT_EQ(oneError(R"({"format": "triton-conformance/1", "cases": []})"),
            "s.json: missing field 'suite'");
  EXPECT_EQ(oneError(R"({"format": "triton-conformance/1", "suite": "s"})"),
            "s.json: missing field 'cases'");
  EXPECT_EQ(oneError(R"({"format": "triton-conformance/1", "suite": "s", "cases": {}})"),
            "s.json: cases: expected a list of cases, found object");
  EXPECT_EQ(oneError(R"({"format": "triton-conformance/1", "suite": 3, "cases": []})"),
            "s.json: suite: expected a string, found number 3");
  EXPECT_EQ(oneError(R"({"format": "triton-conformance/1", "suite": "s", "sources": {"a": 1},
                         "cases": []})"),
            "s.json: sources.a: expected kernel source text, found number");
  EXPECT_FALSE(load("[]").suite.has_value());
}

TEST(ConformanceLoader, UnknownTopLevelAndCaseFieldsWarn) {
  LoadResult r = load(R"({"format": "triton-conformance/1", "suite": "s", "owner": "me",
                          "cases": [{)" + caseFields(kArgs, kExpect, R"(, "colour": "red")") +
                      "}]}");
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0], "s.json: unknown field 'owner' (ignored)");
  EXPECT_EQ(r.warnings[1], "s.json: cases[0]: unknown field 'colour' (ignored)");
}

TEST(ConformanceLoader, InvalidCaseIsListedAndOthersLoad) {
  std::string text = R"({"format": "triton-conformance/1", "suite": "s", "cases": [{)" +
                     caseFields(kArgs, kExpect) + R"(}, {"name": "bad"}, 7]})";
  LoadResult r = load(text);
  ASSERT_TRUE(r.suite.has_value());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.suite->cases.size(), 1u);
  ASSERT_EQ(r.suite->invalid.size(), 2u);
  EXPECT_EQ(r.suite->invalid[0].name, "bad");
  EXPECT_EQ(r.suite->invalid[0].path, "cases[1]");
  EXPECT_NE(r.suite->invalid[0].error.find("s.json: cases[1]: missing field 'grid'"),
            std::string::npos);
  EXPECT_EQ(r.suite->invalid[1].name, "cases[2]");
  EXPECT_EQ(r.errors.back(), "s.json: cases[2]: expected a case object, found number");
}

TEST(ConformanceLoader, CaseFieldErrors) {
  EXPECT_EQ(oneError(suiteWith(R"("source": "x", "grid": [1], "args": [],
                                  "expect": {"implementation_defined": true})")),
            "s.json: cases[0]: missing field 'name'");
  std::string two = R"({"format": "triton-conformance/1", "suite": "s", "cases": [{)" +
                    caseFields(kArgs, kExpect) + "}, {" + caseFields(kArgs, kExpect) + "}]}";
  EXPECT_EQ(oneError(two), "s.json: cases[1].name: a second case named 'c'");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "features": "op.add")"),
            "s.json: cases[0].features: expected a list of strings, found string");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "features": ["a", 2])"),
            "s.json: cases[0].features[1]: expected a string, found number 2");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "num_warps": 0)"),
            "s.json: cases[0].num_warps: must be at least 1, found 0");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "kernel": 5)"),
            "s.json: cases[0].kernel: expected a string, found number 5");
}

TEST(ConformanceLoader, SourceErrors) {
  std::string rest = R"("grid": [1], "args": [], "expect": {"implementation_defined": true})";
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", )" + rest)),
            "s.json: cases[0]: missing field 'source' (or 'source_ref' or 'source_file')");
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source": "a", "source_ref": "b", )" + rest)),
            "s.json: cases[0]: both 'source' and 'source_ref' given; a case has exactly one "
            "source");
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source_ref": "nope", )" + rest)),
            "s.json: cases[0].source_ref: no source named 'nope' in 'sources'");
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source_file": "missing.tc", )" + rest), "/tmp/x"),
            "s.json: cases[0].source_file: cannot open '/tmp/x/missing.tc' (No such file or "
            "directory)");
  // A directory or a device as the source is named as such (it is not read).
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source_file": ".", )" + rest), "/tmp"),
            "s.json: cases[0].source_file: '/tmp/.' is a directory");
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source_file": "zero", )" + rest), "/dev"),
            "s.json: cases[0].source_file: '/dev/zero' is a device, not a regular file");
  TempDir dir;
  dir.write("k.tc", kKernel);
  LoadResult r = load(suiteWith(R"("name": "c", "source_file": "k.tc", )" + rest), dir.path());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.suite->cases[0].source, kKernel);
  EXPECT_EQ(r.suite->cases[0].sourceFile, dir.path() + "/k.tc");
}

TEST(ConformanceLoader, DefineErrors) {
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "defines": [1])"),
            "s.json: cases[0].defines: expected an object of macro values, found array");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "defines": {"1X": 1})"),
            "s.json: cases[0].defines.1X: '1X' is not a macro name");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "defines": {"X": true})"),
            "s.json: cases[0].defines.X: a define value must be a number or a string, found "
            "boolean");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "defines": {"X": []})"),
            "s.json: cases[0].defines.X: an empty list of values");
  EXPECT_EQ(caseError(kArgs, kExpect, R"(, "defines": {"X": [1, [2]]})"),
            "s.json: cases[0].defines.X[1]: a define value must be a number or a string, found "
            "array");
  std::string ten = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]";
  EXPECT_EQ(caseError(kArgs, kExpect,
                      R"(, "defines": {"A": )" + ten + R"(, "B": )" + ten + R"(, "C": )" + ten +
                          R"(, "D": )" + ten + "}"),
            "s.json: cases[0].defines: more than 4096 variants (the product of the list lengths)");
  // Numbers keep their spelling: 1.5e3 is macro text "1.5e3".
  LoadResult r = load(suiteWith(caseFields(kArgs, kExpect, R"(, "defines": {"X": 1.5e3})")));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.suite->cases[0].defines[0].values[0], "1.5e3");
}

TEST(ConformanceLoader, GridErrors) {
  auto gridError = [](const std::string &grid) {
    return oneError(suiteWith(R"("name": "c", "source": "x", "args": [],
                                 "expect": {"implementation_defined": true}, "grid": )" +
                              grid));
  };
  EXPECT_EQ(gridError("[]"), "s.json: cases[0].grid: expected a list of 1 to 3 entries, found []");
  EXPECT_EQ(gridError("[1, 1, 1, 1]"),
            "s.json: cases[0].grid: expected a list of 1 to 3 entries, found [1, 1, 1, 1]");
  EXPECT_EQ(gridError("[1.5]"), "s.json: cases[0].grid[0]: expected an integer, found number 1.5");
  EXPECT_EQ(gridError("[2, -1]"), "s.json: cases[0].grid[1]: must be at least 0, found -1");
  EXPECT_EQ(gridError("[{}]"),
            "s.json: cases[0].grid[0]: a grid entry is a number or an expression string, found "
            "{}");
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source": "x", "args": [],
                                  "expect": {"implementation_defined": true})")),
            "s.json: cases[0]: missing field 'grid'");
}

TEST(ConformanceLoader, ArgumentErrors) {
  EXPECT_EQ(caseError("{}", R"({"implementation_defined": true})"),
            "s.json: cases[0].args: expected a list of arguments, found object");
  EXPECT_EQ(argError("3"), "s.json: cases[0].args[1]: expected an argument object, found number");
  EXPECT_EQ(argError(R"({"dtype": "int32", "value": 1})"),
            "s.json: cases[0].args[1]: missing field 'name'");
  EXPECT_EQ(argError(R"({"name": "a b", "dtype": "int32", "value": 1})"),
            "s.json: cases[0].args[1].name: 'a b' is not a parameter name");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "float", "value": 1})"),
            "s.json: cases[0].args[1].dtype: unknown dtype 'float' (expected bool, int8, int16, "
            "int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32 or float64)");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "float8e4m3", "value": 1})"),
            "s.json: cases[0].args[1].dtype: dtype 'float8e4m3' is not supported yet");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "value": 1, "shape": [1]})"),
            "s.json: cases[0].args[1]: both 'value' (a scalar) and 'shape' (a buffer) given");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32"})"),
            "s.json: cases[0].args[1]: missing field 'value' (a scalar) or 'shape' (a buffer)");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "value": 1, "fill": 0})"),
            "s.json: cases[0].args[1].fill: unknown field 'fill'");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [1], "fill": 0, "stride": 2})"),
            "s.json: cases[0].args[1].stride: unknown field 'stride'");
  EXPECT_EQ(argError(R"({"name": "N", "dtype": "int32", "value": 2})"),
            "s.json: cases[0].args[1].name: a second argument named 'N'");
}

TEST(ConformanceLoader, BufferErrors) {
  std::string values;
  for (int i = 0; i < 63; ++i)
    values += (i ? ", " : "") + std::to_string(i);
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [64], "data": [)" + values + "]}"),
            "s.json: cases[0].args[1].data: 63 values for shape [64]");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [2, 2], "data": [[1, 2], [3, 4]]})"),
            "s.json: cases[0].args[1].data: 2 values for shape [2, 2]");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [2], "data": [1, 2], "fill": 0})"),
            "s.json: cases[0].args[1]: two initialisers ('data' and 'fill'); give exactly one");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [2]})"),
            "s.json: cases[0].args[1]: missing the buffer's contents: one of 'data', 'fill', "
            "'random', 'npy'");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": 2, "fill": 0})"),
            "s.json: cases[0].args[1].shape: expected a list of dimensions, found 2");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [2, -1], "fill": 0})"),
            "s.json: cases[0].args[1].shape[1]: must be at least 0, found -1");
  // One byte limit for buffers (4 GiB, as for --arg), not an element count: a
  // float64 [2^30] buffer (8 GiB) is refused before anything is allocated.
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int8", "shape": [65536, 65537], "fill": 0})"),
            "s.json: cases[0].args[1].shape: the buffer is too large (limit 4294967296 bytes)");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "float64", "shape": [1073741824], "fill": 0})"),
            "s.json: cases[0].args[1].shape: the buffer is too large (limit 4294967296 bytes)");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [3], "data": [1, 2, 1.5]})"),
            "s.json: cases[0].args[1].data[2]: 1.5 is not an integer (dtype int32)");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int8", "shape": [1], "data": [128]})"),
            "s.json: cases[0].args[1].data[0]: 128 does not fit int8 [-128, 127]");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "uint8", "shape": [1], "fill": -1})"),
            "s.json: cases[0].args[1].fill: -1 does not fit uint8 [0, 255]");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "float32", "shape": [1], "data": ["0x7fc0"]})"),
            "s.json: cases[0].args[1].data[0]: raw bits '0x7fc0' must have exactly 8 hex digits "
            "for float32");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [1], "data": ["nan"]})"),
            "s.json: cases[0].args[1].data[0]: 'nan' is not a value of int32");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "float32", "shape": [1], "data": ["NaN"]})"),
            "s.json: cases[0].args[1].data[0]: 'NaN' is not a value (numbers, \"nan\", \"inf\", "
            "\"-inf\", \"-0.0\" or raw bits \"0x...\")");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "float32", "shape": [1], "data": [null]})"),
            "s.json: cases[0].args[1].data[0]: expected a value, found null null");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int32", "shape": [1], "data": [true]})"),
            "s.json: cases[0].args[1].data[0]: true/false is a value of bool only, not int32");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "bool", "shape": [1], "data": [2]})"),
            "s.json: cases[0].args[1].data[0]: 2 does not fit bool [0, 1]");
  EXPECT_EQ(argError(R"({"name": "x", "dtype": "int16", "value": "0x1"})"),
            "s.json: cases[0].args[1].value: raw bits '0x1' must have exactly 4 hex digits for "
            "int16");
}

TEST(ConformanceLoader, RandomErrors) {
  auto randomError = [](const std::string &dtype, const std::string &random) {
    return argError(R"({"name": "x", "dtype": ")" + dtype + R"(", "shape": [4], "random": )" +
                    random + "}");
  };
  EXPECT_EQ(randomError("float32", R"({"dist": "uniform"})"),
            "s.json: cases[0].args[1].random: missing field 'seed'");
  EXPECT_EQ(randomError("float32", R"({"seed": -1, "dist": "uniform"})"),
            "s.json: cases[0].args[1].random.seed: expected a non-negative integer, found -1");
  EXPECT_EQ(randomError("float32", R"({"seed": 1})"),
            "s.json: cases[0].args[1].random: missing field 'dist'");
  EXPECT_EQ(randomError("float32", R"({"seed": 1, "dist": "poisson"})"),
            "s.json: cases[0].args[1].random.dist: unknown distribution 'poisson' (uniform, normal "
            "or int)");
  EXPECT_EQ(randomError("int32", R"({"seed": 1, "dist": "uniform"})"),
            "s.json: cases[0].args[1].random.dist: 'uniform' needs a float dtype; use 'int' for "
            "int32");
  EXPECT_EQ(randomError("float32", R"({"seed": 1, "dist": "uniform", "mean": 0})"),
            "s.json: cases[0].args[1].random.mean: unknown field 'mean'");
  EXPECT_EQ(randomError("float32", R"({"seed": 1, "dist": "uniform", "low": 2, "high": 1})"),
            "s.json: cases[0].args[1].random: needs low <= high (finite)");
  EXPECT_EQ(randomError("float32", R"({"seed": 1, "dist": "normal", "std": -1})"),
            "s.json: cases[0].args[1].random.std: must not be negative");
  EXPECT_EQ(randomError("int8", R"({"seed": 1, "dist": "int", "low": 0})"),
            "s.json: cases[0].args[1].random: missing field 'high'");
  EXPECT_EQ(randomError("int8", R"({"seed": 1, "dist": "int", "low": 0, "high": 300})"),
            "s.json: cases[0].args[1].random.high: 300 does not fit int8 [-128, 127]");
  EXPECT_EQ(randomError("int8", R"({"seed": 1, "dist": "int", "low": 5, "high": 4})"),
            "s.json: cases[0].args[1].random: needs low <= high");
  EXPECT_EQ(randomError("float32", R"({"seed": 1, "dist": "int", "low": 0, "high": 1e17})"),
            "s.json: cases[0].args[1].random.high: float buffers take integers in [-2^53, 2^53]");
  EXPECT_EQ(randomError("uint64", R"({"seed": 1, "dist": "int", "low": 0, "high": 18446744073709551615})"),
            "s.json: cases[0].args[1].random.high: the int distribution takes integers up to 2^63 - 1");
  EXPECT_EQ(randomError("float32", "7"),
            "s.json: cases[0].args[1].random: expected {\"seed\": N, \"dist\": ...}, found 7");
}

TEST(ConformanceLoader, NpyBuffers) {
  TempDir dir;
  std::vector<uint8_t> bytes(8);
  int32_t vals[2] = {5, -6};
  std::memcpy(bytes.data(), vals, 8);
  dir.write("a.npy", encodeNpy(DType::I32, {2}, bytes));
  auto npyCase = [&](const std::string &dtype, const std::string &shape) {
    return load(suiteWith(caseFields(R"([{"name": "x", "dtype": ")" + dtype +
                                         R"(", "shape": )" + shape + R"(, "npy": "a.npy"}])",
                                     R"({"implementation_defined": true})")),
                dir.path());
  };
  LoadResult ok = npyCase("int32", "[2]");
  ASSERT_TRUE(ok.ok()) << ok.errors[0];
  const ArgSpec &a = ok.suite->cases[0].args[0];
  EXPECT_EQ(a.init, InitKind::Npy);
  HostArray h = makeBuffer(a);
  EXPECT_EQ(h.getBits(1), static_cast<uint32_t>(-6));
  LoadResult wrongType = npyCase("float32", "[2]");
  ASSERT_EQ(wrongType.errors.size(), 1u);
  EXPECT_EQ(wrongType.errors[0], "s.json: cases[0].args[0].npy: '" + dir.path() +
                                     "/a.npy' holds int32, the buffer is float32");
  LoadResult wrongShape = npyCase("int32", "[1, 2]");
  ASSERT_EQ(wrongShape.errors.size(), 1u);
  EXPECT_EQ(wrongShape.errors[0], "s.json: cases[0].args[0].npy: '" + dir.path() +
                                      "/a.npy' has shape [2], the buffer [1, 2]");
  LoadResult missing = load(suiteWith(caseFields(
      R"([{"name": "x", "dtype": "int32", "shape": [2], "npy": "b.npy"}])",
      R"({"implementation_defined": true})")), dir.path());
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_EQ(missing.errors[0].rfind("s.json: cases[0].args[0].npy: ", 0), 0u) << missing.errors[0];
  EXPECT_NE(missing.errors[0].find("b.npy"), std::string::npos);
}

TEST(ConformanceLoader, ExpectErrors) {
  EXPECT_EQ(oneError(suiteWith(R"("name": "c", "source": "x", "grid": [1], "args": [])")),
            "s.json: cases[0]: missing field 'expect'");
  EXPECT_EQ(caseError(kArgs, "[]"), "s.json: cases[0].expect: expected an object, found array");
  EXPECT_EQ(caseError(kArgs, "{}"),
            "s.json: cases[0].expect: no expectation: give one of 'outputs', 'compile_error', "
            "'trap', 'implementation_defined'");
  EXPECT_EQ(caseError(kArgs, R"({"trap": {"kind": "out_of_bounds"}, "implementation_defined": true})"),
            "s.json: cases[0].expect: both 'trap' and 'implementation_defined' given; give "
            "exactly one");
  LoadResult r = load(suiteWith(caseFields(kArgs, R"({"implementation_defined": true, "tolerance": 1})")));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "s.json: cases[0].expect.tolerance: unknown field 'tolerance'");
  EXPECT_EQ(caseError(kArgs, R"({"implementation_defined": false})"),
            "s.json: cases[0].expect.implementation_defined: must be true");
}

TEST(ConformanceLoader, OutputErrors) {
  EXPECT_EQ(caseError(kArgs, R"({"outputs": []})"),
            "s.json: cases[0].expect.outputs: expected an object of expected buffers, found "
            "array");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"z": {"data": [1, 2]}}})"),
            "s.json: cases[0].expect.outputs.z: no buffer argument named 'z'");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"N": {"data": [1]}}})"),
            "s.json: cases[0].expect.outputs.N: 'N' is a scalar argument, not a buffer");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"y": {"compare": "exact"}}})"),
            "s.json: cases[0].expect.outputs.y: missing field 'data' (or 'npy')");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"y": {"data": [1, 2], "npy": "a.npy"}}})"),
            "s.json: cases[0].expect.outputs.y: both 'data' and 'npy' given");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"y": {"data": [1]}}})"),
            "s.json: cases[0].expect.outputs.y.data: 1 values for shape [2]");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"y": {"data": [1, 2], "tol": 1}}})"),
            "s.json: cases[0].expect.outputs.y.tol: unknown field 'tol'");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"y": {"data": [1, 2], "compare": {"rtol": 1}}}})"),
            "s.json: cases[0].expect.outputs.y.compare: int32 outputs are compared exactly; only "
            "\"exact\" is allowed");
  EXPECT_EQ(caseError(kArgs, R"({"outputs": {"y": {"data": [1, 2], "compare": "close"}}})"),
            "s.json: cases[0].expect.outputs.y.compare: expected \"exact\", {\"rtol\": R, "
            "\"atol\": A} or {\"ulp\": N}, found \"close\"");
}

TEST(ConformanceLoader, CompareErrors) {
  std::string fargs = R"([{"name": "y", "dtype": "float32", "shape": [1], "fill": 0}])";
  auto cmp = [&](const std::string &compare) {
    return caseError(fargs, R"({"outputs": {"y": {"data": [0], "compare": )" + compare + "}}}");
  };
  EXPECT_EQ(cmp(R"({"rtol": 1, "ulp": 2})"),
            "s.json: cases[0].expect.outputs.y.compare: 'ulp' cannot be combined with 'rtol' or "
            "'atol'");
  EXPECT_EQ(cmp(R"({"ulp": -2})"),
            "s.json: cases[0].expect.outputs.y.compare.ulp: expected a non-negative integer, "
            "found -2");
  EXPECT_EQ(cmp(R"({"rtol": -1})"), "s.json: cases[0].expect.outputs.y.compare.rtol: must not be "
                                    "negative");
  EXPECT_EQ(cmp(R"({"atol": "big"})"),
            "s.json: cases[0].expect.outputs.y.compare.atol: expected a finite number, found "
            "string \"big\"");
  EXPECT_EQ(cmp(R"({"rtol": 1, "relative": true})"),
            "s.json: cases[0].expect.outputs.y.compare.relative: unknown field 'relative'");
  EXPECT_EQ(cmp("{}"), "s.json: cases[0].expect.outputs.y.compare: an empty comparison; give "
                       "'rtol' and/or 'atol', or 'ulp'");
  // Valid forms and the default.
  auto spec = [&](const std::string &compare) {
    std::string text = compare.empty() ? R"({"outputs": {"y": {"data": [0]}}})"
                                       : R"({"outputs": {"y": {"data": [0], "compare": )" +
                                             compare + "}}}";
    LoadResult r = load(suiteWith(caseFields(fargs, text)));
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.suite->cases[0].expect.outputs[0].compare : CompareSpec{};
  };
  CompareSpec d = spec("");
  EXPECT_EQ(d.kind, CompareSpec::Kind::Tolerance);
  EXPECT_EQ(d.rtol, 1.3e-6);
  EXPECT_EQ(d.atol, 1e-5);
  CompareSpec t = spec(R"({"rtol": 1e-3})");
  EXPECT_EQ(t.rtol, 1e-3);
  EXPECT_EQ(t.atol, 0);
  EXPECT_EQ(spec(R"({"ulp": 3})").ulp, 3u);
  EXPECT_EQ(spec(R"("exact")").kind, CompareSpec::Kind::Exact);
}

TEST(ConformanceLoader, CompileErrorAndTrapErrors) {
  EXPECT_EQ(caseError(kArgs, R"({"compile_error": {"line": 3}})"),
            "s.json: cases[0].expect.compile_error: missing field 'message'");
  EXPECT_EQ(caseError(kArgs, R"({"compile_error": {"message": "x", "line": 0}})"),
            "s.json: cases[0].expect.compile_error.line: must be at least 1, found 0");
  EXPECT_EQ(caseError(kArgs, R"({"compile_error": {"message": "x", "column": 2}})"),
            "s.json: cases[0].expect.compile_error.column: unknown field 'column'");
  EXPECT_EQ(caseError(kArgs, R"({"compile_error": "x"})"),
            "s.json: cases[0].expect.compile_error: expected {\"message\": TEXT, \"line\": N}, "
            "found \"x\"");
  EXPECT_EQ(caseError(kArgs, R"({"trap": {"message": "x"}})"),
            "s.json: cases[0].expect.trap: missing field 'kind'");
  std::string e = caseError(kArgs, R"({"trap": {"kind": "segfault"}})");
  EXPECT_EQ(e.rfind("s.json: cases[0].expect.trap.kind: unknown trap kind 'segfault' (expected "
                    "one of out_of_bounds, misaligned, ",
                    0),
            0u)
      << e;
  LoadResult r = load(suiteWith(caseFields(kArgs, R"({"trap": {"kind": "misaligned", "message": "p"}})")));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.suite->cases[0].expect.trap, TrapKind::Misaligned);
  EXPECT_EQ(r.suite->cases[0].expect.message, "p");
}

TEST(ConformanceLoader, UnknownBackendWarns) {
  LoadResult r = load(suiteWith(caseFields(kArgs, kExpect, R"(, "backends": ["tpu"])")));
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "s.json: cases[0].backends[0]: unknown backend 'tpu'");
}

TEST(ConformanceLoader, LoadsFilesAndReportsUnreadable) {
  LoadResult r = loadSuiteFile("/nonexistent/suite.json");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "/nonexistent/suite.json: cannot read the file: cannot open "
                         "'/nonexistent/suite.json' (No such file or directory)");
  // Not regular files: refused at once (no endless read, no blocking open).
  r = loadSuiteFile("/dev/zero");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0],
            "/dev/zero: cannot read the file: '/dev/zero' is a device, not a regular file");
  TempDir dir;
  dir.write("s.json", suiteWith(caseFields(kArgs, kExpect)));
  LoadResult ok = loadSuiteFile(dir.path() + "/s.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.suite->dir, dir.path());
  EXPECT_EQ(ok.suite->cases[0].sourceName, dir.path() + "/s.json#c");
}
