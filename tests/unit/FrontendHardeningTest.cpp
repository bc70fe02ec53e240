// Issue 31's frontend items, through the public compile API (runtime/Launch.h):
// --kernel compiles only the named kernel; the source's integer #defines
// reach grid expressions; hostile input (macro nesting and parameter counts,
// a thread with a small stack, large text sources, bytes that are not UTF-8,
// #include outside the allowed folders) gets a diagnostic, never a crash, a
// hang or gigabytes of memory.
#include "frontend/Compiler.h"
#include "frontend/StackGuard.h"
#include "runtime/GridExpr.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

using namespace tc;

namespace {

namespace fs = std::filesystem;

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "text: " << (haystack) << "\nwanted: " << (needle)

CompileOutcome compileText(const std::string &text, const std::string &kernel = "",
                           std::vector<std::string> includeDirs = {}) {
  CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = text;
  req.kernelName = kernel;
  req.includeDirs = std::move(includeDirs);
  return compileKernel(req);
}

/// Whether `s` is well-formed UTF-8 (checked independently of the compiler's escaper).
bool isUtf8(const std::string &s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size() || (n == 2 && c < 0xC2))
      return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
        return false;
    i += n;
  }
  return true;
}

// A file with two kernels; only `rows` uses ROWS, which it alone defines.
const char *kTwoKernels = R"(
__global__ void copy(float *X, float *Y) {
  int i[4] = 0 ... 4;
  *(Y + i) = *(X + i);
}
__global__ void rows(float *X) {
  int r[ROWS] = 0 ... ROWS;
  *(X + r) = 1;
}
)";

TEST(KernelSelection, OtherKernelsAreNotAnalysed) {
  // Without --kernel every kernel is compiled: `rows` needs ROWS.
  CompileOutcome all = compileText(kTwoKernels);
  EXPECT_FALSE(all.ok());
  EXPECT_CONTAINS(all.diagnostics, "ROWS");
  CompileOutcome copy = compileText(kTwoKernels, "copy");
  ASSERT_TRUE(copy.ok()) << copy.diagnostics;
  EXPECT_EQ(copy.kernel->name(), "copy");
  EXPECT_EQ(copy.kernel->module().functions.size(), 1u); // `rows` is not lowered
  // The named kernel is still checked.
  CompileOutcome rows = compileText(kTwoKernels, "rows");
  EXPECT_FALSE(rows.ok());
  EXPECT_CONTAINS(rows.diagnostics, "ROWS");
}

TEST(KernelSelection, HelpersOfOtherKernelsAreSkippedAndUnknownNamesListed) {
  std::string src = std::string(kTwoKernels) + R"(
float scaled(float x) { return x * SCALE; }
__global__ void uses(float *X) { *X = scaled(*X); }
)";
  CompileOutcome copy = compileText(src, "copy");
  EXPECT_TRUE(copy.ok()) << copy.diagnostics;
  CompileOutcome uses = compileText(src, "uses");
  EXPECT_FALSE(uses.ok());
  EXPECT_CONTAINS(uses.diagnostics, "SCALE");
  CompileOutcome none = compileText("__global__ void a(float *X) { *X = 1; }\n"
                                    "__global__ void b(float *X) { *X = 2; }\n",
                                    "c");
  EXPECT_FALSE(none.ok());
  EXPECT_CONTAINS(none.diagnostics, "no kernel named 'c'");
  EXPECT_CONTAINS(none.diagnostics, "the source's kernels: a, b");
}

TEST(SourceDefines, IntegerDefaultsReachGridExpressions) {
  CompileOutcome out = compileText(R"(
#define ROWS 4
#ifndef BLOCK
#define BLOCK 64
#endif
#define TILE (ROWS * (BLOCK / 8))
#define TYPE float
#define NEG -(ROWS + 1)
#define F(x) x
#define LATE 1
#undef LATE
__global__ void k(int N, TYPE *X) {
  int r[ROWS] = 0 ... ROWS;
  *(X + r) = 1;
}
)");
  ASSERT_TRUE(out.ok()) << out.diagnostics;
  const auto &sd = out.kernel->sourceDefines();
  EXPECT_EQ(sd.at("ROWS"), 4);
  EXPECT_EQ(sd.at("BLOCK"), 64);
  EXPECT_EQ(sd.at("TILE"), 32);
  EXPECT_EQ(sd.at("NEG"), -5);
  EXPECT_FALSE(sd.count("TYPE"));     // not an integer
  EXPECT_FALSE(sd.count("F"));        // function-like
  EXPECT_FALSE(sd.count("LATE"));     // undefined at the end
  EXPECT_FALSE(sd.count("int8"));     // built in
  EXPECT_FALSE(sd.count("__TRITON_C__"));

  LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, 10));
  GridOutcome g = evalGrid({{"cdiv(N, ROWS)", "TILE"}}, *out.kernel, args);
  ASSERT_TRUE(g.dims) << g.error;
  EXPECT_EQ((*g.dims)[0], 3);
  EXPECT_EQ((*g.dims)[1], 32);
  g = evalGrid({{"cdiv(N, TYPE)"}}, *out.kernel, args);
  EXPECT_FALSE(g.dims);
  EXPECT_CONTAINS(g.error, "TYPE");
}

TEST(SourceDefines, CommandLineDefinesComeFirst) {
  CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = "#ifndef BLOCK\n#define BLOCK 64\n#endif\n#define HALF (BLOCK / 2)\n"
                   "__global__ void k(float *X) { *X = BLOCK; }\n";
  req.defines = {{"BLOCK", "128"}};
  CompileOutcome out = compileKernel(req);
  ASSERT_TRUE(out.ok()) << out.diagnostics;
  EXPECT_FALSE(out.kernel->sourceDefines().count("BLOCK")); // a -D define, not the source's
  EXPECT_EQ(out.kernel->sourceDefines().at("HALF"), 64);    // sees the -D value
  GridOutcome g = evalGrid({{"BLOCK", "HALF"}}, *out.kernel, {});
  ASSERT_TRUE(g.dims) << g.error;
  EXPECT_EQ((*g.dims)[0], 128);
  EXPECT_EQ((*g.dims)[1], 64);
}

// --- hostile input ---

/// Runs `fn` on a thread with a `bytes` stack and waits for it.
template <typename F> void onSmallStack(size_t bytes, F fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t t;
  auto body = [](void *p) -> void * {
    (*static_cast<F *>(p))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&t, &attr, body, &fn), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(StackLimit, DeepNestingOnASmallStackIsADiagnostic) {
  // 240 parentheses crashed on a 256 KiB stack; deeper ones, statements and a
  // long binary chain (sema and lowering recurse along it) too.
  std::vector<std::string> sources;
  for (int depth : {240, 1000}) {
    sources.push_back("__global__ void k(int *X) { *X = " + std::string(depth, '(') + "1" +
                      std::string(depth, ')') + "; }\n");
    sources.push_back("__global__ void k(int *X) { " + std::string(depth, '{') + "*X = 1;" +
                      std::string(depth, '}') + " }\n");
  }
  std::string chain = "__global__ void k(int *X) { int a = *X; *X = a";
  for (int i = 0; i < 1000; ++i)
    chain += " + a";
  sources.push_back(chain + "; }\n");
  for (const std::string &src : sources) {
    CompileOutcome out;
    onSmallStack(256 << 10, [&] { out = compileText(src); });
    if (!out.ok()) {
      EXPECT_CONTAINS(out.diagnostics, "nesting too deep");
    }
  }
  // The 240 parentheses compile on an ordinary stack.
  EXPECT_TRUE(compileText(sources[0]).ok());
  bool nearly = true;
  onSmallStack(256 << 10, [&] { nearly = stackNearlyExhausted(); });
  EXPECT_FALSE(nearly); // a fresh thread has most of its stack
}

TEST(StackLimit, DeepMacroNestingOnASmallStack) {
  std::string src = "#define f(x) (x)\n__global__ void k(int *X) { *X = ";
  for (int i = 0; i < 199; ++i)
    src += "f(";
  src += "1" + std::string(199, ')') + "; }\n";
  CompileOutcome out;
  onSmallStack(256 << 10, [&] { out = compileText(src); });
  if (!out.ok()) {
    EXPECT_CONTAINS(out.diagnostics, "nested too deep");
  }
}

double secondsFor(const std::function<void()> &fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(MacroLimits, HugeParameterListIsLinear) {
  // 100,000 parameters took 23 s (a quadratic duplicate check and body lookup).
  std::string params, args, body;
  for (int i = 0; i < 100000; ++i) {
    params += (i ? ",p" : "p") + std::to_string(i);
    args += i ? ",1" : "1";
  }
  std::string src = "#define M(" + params + ") p99999 + p0\n"
                    "__global__ void k(int *X) { *X = M(" + args + "); }\n";
  CompileOutcome out;
  double s = secondsFor([&] { out = compileText(src); });
  EXPECT_TRUE(out.ok()) << out.diagnostics.substr(0, 500);
  EXPECT_LT(s, 5.0);
  // A duplicate among them is still found.
  CompileOutcome dup = compileText("#define M(" + params + ",p5) 1\n");
  EXPECT_CONTAINS(dup.diagnostics, "duplicate macro parameter name 'p5'");
}

TEST(MacroLimits, ArgumentNestingStopsBeforeTheMemoryIsSpent) {
  // f(f(f(...))) over a large argument copied the rest of the source at each
  // level before the depth limit fired (> 8 GB for 300 KB).
  std::string src = "#define f(x) x\n__global__ void k(int *X) { *X = ";
  for (int i = 0; i < 150; ++i)
    src += "f(";
  for (int i = 0; i < 40000; ++i)
    src += "1+";
  src += "1" + std::string(150, ')') + "; }\n";
  CompileOutcome out;
  double s = secondsFor([&] { out = compileText(src); });
  EXPECT_FALSE(out.ok());
  EXPECT_CONTAINS(out.diagnostics, "macro expansion produced too many tokens");
  EXPECT_LT(s, 10.0);
  // A macro that repeats a large argument is stopped before it is built.
  std::string rep = "#define g(x) x x x x x x x x x x x x x x x x\n"
                    "#define h(x) g(g(g(x)))\n__global__ void k(int *X) { *X = h(";
  for (int i = 0; i < 2000; ++i)
    rep += "1+";
  rep += "1); }\n";
  out = compileText(rep);
  EXPECT_FALSE(out.ok());
  EXPECT_CONTAINS(out.diagnostics, "macro expansion produced too many tokens");
}

TEST(TextSources, SameSizeLimitAsFiles) {
  std::string big(size_t(4) << 20, ' ');
  big += "__global__ void k(int *X) { *X = 1; }\n";
  CompileOutcome out = compileText(big);
  EXPECT_FALSE(out.ok());
  EXPECT_CONTAINS(out.diagnostics, "larger than the limit of 4194304 bytes");
  EXPECT_TRUE(compileText(big.substr(big.size() - (size_t(4) << 20))).ok());
}

TEST(Diagnostics, BytesThatAreNotUtf8AreEscaped) {
  std::string src = "__global__ void k(int *X) { *X = \xff\xfe; }\n// \xc3\xa9 ok\n"
                    "#error bad \x80\xc0\xaf text\n";
  CompileOutcome out = compileText(src);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(isUtf8(out.diagnostics)) << out.diagnostics;
  for (const auto &e : out.errors)
    EXPECT_TRUE(isUtf8(e.message)) << e.message;
  EXPECT_CONTAINS(out.diagnostics, "\\xff\\xfe");
  EXPECT_CONTAINS(out.diagnostics, "bad \\x80\\xc0\\xaf text");
  EXPECT_EQ(escapeInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(escapeInvalidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
  EXPECT_EQ(escapeInvalidUtf8("\xe2\x82"), "\\xe2\\x82");           // truncated
}

TEST(Diagnostics, RenderEscapesAndKeepsTheCaretUnderTheToken) {
  // DiagEngine::render itself (what tritonc prints), not only compileKernel:
  // the file name, the message and the source line are valid UTF-8, and the
  // caret counts a character as one column and an escaped byte as four.
  SourceManager sm;
  uint32_t f = sm.addBuffer("k\xff.tc", "\t\xc3\xa9 \xff = zz; \xfe\n");
  DiagEngine diags(sm);
  diags.setOutput(nullptr);
  diags.report(DiagId::err_sema_undeclared, SourceLoc{f, 1, 9, 0}, {"zz\xfd", ""}, 2);
  diags.report(DiagId::err_sema_undeclared, SourceLoc{f, 1, 5, 0}, {"x", ""}, 1);
  ASSERT_EQ(diags.diagnostics().size(), 2u);
  EXPECT_EQ(diags.render(diags.diagnostics()[0]),
            "k\\xff.tc:1:9: error: use of undeclared identifier 'zz\\xfd'\n"
            "\t\xc3\xa9 \\xff = zz; \\xfe\n"
            "\t         ^~\n");
  EXPECT_EQ(diags.render(diags.diagnostics()[1]),
            "k\\xff.tc:1:5: error: use of undeclared identifier 'x'\n"
            "\t\xc3\xa9 \\xff = zz; \\xfe\n"
            "\t  ^~~~\n");
}

TEST(Diagnostics, AVeryLongLineIsShownAsAWindowAroundTheColumn) {
  // A 100,000-byte line: the diagnostic shows 240 bytes around the column
  // with "..." on both sides, the caret still under the token.
  std::string line = std::string(50000, 'a') + " zz " + std::string(50000 - 4, 'b');
  SourceManager sm;
  uint32_t f = sm.addBuffer("long.tc", line + "\n");
  DiagEngine diags(sm);
  diags.setOutput(nullptr);
  diags.report(DiagId::err_sema_undeclared, SourceLoc{f, 1, 50002, 0}, {"zz", ""}, 2);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  std::string out = diags.render(diags.diagnostics()[0]);
  std::string shown = "..." + std::string(99, 'a') + " zz " + std::string(137, 'b') + "...";
  EXPECT_EQ(out, "long.tc:1:50002: error: use of undeclared identifier 'zz'\n" + shown + "\n" +
                     std::string(103, ' ') + "^~\n");
  // A line just under the limit is shown whole.
  SourceManager sm2;
  uint32_t g = sm2.addBuffer("short.tc", std::string(230, 'c') + " zz\n");
  DiagEngine d2(sm2);
  d2.setOutput(nullptr);
  d2.report(DiagId::err_sema_undeclared, SourceLoc{g, 1, 232, 0}, {"zz", ""}, 2);
  EXPECT_EQ(d2.render(d2.diagnostics()[0]),
            "short.tc:1:232: error: use of undeclared identifier 'zz'\n" + std::string(230, 'c') +
                " zz\n" + std::string(231, ' ') + "^~\n");
}

/// A fresh folder with a kernel folder and an outside folder.
class IncludeDirs : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tc-include-XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    fs::create_directories(root_ / "kernel" / "sub");
    fs::create_directories(root_ / "outside");
    write(root_ / "outside" / "secret.h", "SECRET-CONTENT-1 SECRET-CONTENT-2\n");
    write(root_ / "kernel" / "ok.h", "#define OK 7\n");
    write(root_ / "kernel" / "sub" / "inner.h", "#include \"../ok.h\"\n");
    write(root_ / "kernel" / "binary.h", std::string("int x;\0SECRET-BINARY\n", 21));
    fs::create_symlink(root_ / "outside" / "secret.h", root_ / "kernel" / "link.h");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  static void write(const fs::path &p, const std::string &text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  CompileOutcome compileFile(const std::string &includeLine,
                             std::vector<std::string> includeDirs = {}) {
    write(root_ / "kernel" / "k.tc",
          includeLine + "\n__global__ void k(int *X) { *X = OK; }\n");
    CompileRequest req;
    req.path = (root_ / "kernel" / "k.tc").string();
    req.includeDirs = std::move(includeDirs);
    return compileKernel(req);
  }
  fs::path root_;
};

TEST_F(IncludeDirs, OnlyTheKernelsFolderAndIncludeDirs) {
  EXPECT_TRUE(compileFile("#include \"ok.h\"").ok());
  EXPECT_TRUE(compileFile("#include \"sub/inner.h\"").ok()); // ../ inside the folder
  EXPECT_TRUE(compileFile("#include \"" + (root_ / "kernel" / "ok.h").string() + "\"").ok());
  for (std::string line : {"#include \"../outside/secret.h\"", "#include \"link.h\"",
                           "#include \"/etc/passwd\"", "#include \"/proc/self/environ\"",
                           "#include \"/etc/shadow\"", "#include \"/no/such/file.h\""}) {
    CompileOutcome out = compileFile(line);
    EXPECT_FALSE(out.ok()) << line;
    EXPECT_CONTAINS(out.diagnostics, "only files inside the kernel's folder and the include "
                                     "folders (-I) may be included");
    EXPECT_EQ(out.diagnostics.find("SECRET-CONTENT"), std::string::npos) << out.diagnostics;
    EXPECT_EQ(out.diagnostics.find("root:"), std::string::npos) << out.diagnostics;
  }
  // An include directory makes its files available (absolute names too).
  std::string outside = (root_ / "outside").string();
  write(root_ / "outside" / "ok2.h", "#define OK 8\n");
  EXPECT_TRUE(compileFile("#include \"ok2.h\"", {outside}).ok());
  EXPECT_TRUE(compileFile("#include \"" + outside + "/ok2.h\"", {outside}).ok());
}

TEST_F(IncludeDirs, BinaryAndBrokenFilesAreNotEchoed) {
  CompileOutcome bin = compileFile("#include \"binary.h\"");
  EXPECT_FALSE(bin.ok());
  EXPECT_CONTAINS(bin.diagnostics, "it is not a text file");
  EXPECT_EQ(bin.diagnostics.find("SECRET-BINARY"), std::string::npos) << bin.diagnostics;
  // An included file with an error shows its name and the failing line only.
  write(root_ / "kernel" / "bad.h", "#define OK 7\n// line-two-text\n@ bad\n// line-four-text\n");
  CompileOutcome bad = compileFile("#include \"bad.h\"");
  EXPECT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.diagnostics, "bad.h:3:");
  EXPECT_EQ(bad.diagnostics.find("line-two-text"), std::string::npos) << bad.diagnostics;
  EXPECT_EQ(bad.diagnostics.find("line-four-text"), std::string::npos) << bad.diagnostics;
}

TEST_F(IncludeDirs, TextKernelsHaveNoFolder) {
  // Relative to the current directory before: now only the include dirs.
  fs::path cwd = fs::current_path();
  fs::current_path(root_ / "kernel");
  CompileOutcome out = compileText("#include \"ok.h\"\n__global__ void k(int *X) { *X = OK; }\n");
  fs::current_path(cwd);
  EXPECT_FALSE(out.ok());
  EXPECT_CONTAINS(out.diagnostics, "a kernel given as text has no folder");
  out = compileText("#include \"ok.h\"\n__global__ void k(int *X) { *X = OK; }\n", "",
                    {(root_ / "kernel").string()});
  EXPECT_TRUE(out.ok()) << out.diagnostics;
}

} // namespace
