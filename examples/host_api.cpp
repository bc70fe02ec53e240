//===- host_api.cpp - Running a kernel from C++ with runtime/Launch.h ------===//
//
// Compiles examples/vector_add.tc with SIZE=1024 and TYPE=float, runs it on
// 5000 elements (5 programs: cdiv(5000, 1024)) on the reference interpreter,
// and checks c == a + b against a plain loop.
//
//   build/bin/host_api [path/to/vector_add.tc]
//
// Without an argument it looks in $TC_EXAMPLES_DIR, then in the examples/
// folder of the tree the executable was built in (<root>/build/bin/host_api),
// then in ./examples: no path is baked in at build time, so a build copied to
// another folder or machine still finds its kernel.
//
// Exit status 0 when every element matches.
//
//===----------------------------------------------------------------------===//
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// vector_add.tc from $TC_EXAMPLES_DIR, beside the build tree or under ./examples;
/// "" (with the places tried in `tried`) when none has it.
std::string findKernel(std::string &tried) {
  std::vector<fs::path> places;
  if (const char *env = std::getenv("TC_EXAMPLES_DIR"); env && *env) {
    places.push_back(env);
  } else {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
      for (fs::path p = exe.parent_path(); !p.empty() && p != p.parent_path(); p = p.parent_path())
        places.push_back(p / "examples");
    places.push_back("examples");
  }
  for (const fs::path &dir : places) {
    fs::path file = dir / "vector_add.tc";
    std::error_code ec;
    if (fs::is_regular_file(file, ec))
      return file.string();
    tried += "\n  " + file.string();
  }
  return "";
}

/// The float value of element i of an f32 array.
float at(const tc::HostArray &a, int64_t i) {
  float v;
  std::memcpy(&v, a.data.data() + i * sizeof(float), sizeof v);
  return v;
}

} // namespace

int main(int argc, char **argv) {
  const int n = 5000;
  std::string path = argc > 1 ? argv[1] : "";
  if (path.empty()) {
    std::string tried;
    path = findKernel(tried);
    if (path.empty()) {
      std::fprintf(stderr,
                   "host_api: error: vector_add.tc not found; looked at:%s\n"
                   "note: pass its path (host_api path/to/vector_add.tc) or set TC_EXAMPLES_DIR "
                   "to the examples/ folder\n",
                   tried.c_str());
      return 3;
    }
  }

  // 1. Compile one variant of the kernel.
  tc::CompileRequest request;
  request.path = path;
  request.defines = {{"SIZE", "1024"}, {"TYPE", "float"}};
  tc::CompileOutcome compiled = tc::compileKernel(request);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s", compiled.diagnostics.c_str());
    return 2;
  }

  // 2. Host buffers: a[i] = i / 4, b[i] = 3 - i, c = 0 (all exact in float).
  tc::HostArray a = tc::HostArray::zeros(tc::DType::F32, {n});
  tc::HostArray b = tc::HostArray::zeros(tc::DType::F32, {n});
  tc::HostArray c = tc::HostArray::zeros(tc::DType::F32, {n});
  for (int i = 0; i < n; ++i) {
    a.setDouble(i, i / 4.0);
    b.setDouble(i, 3.0 - i);
  }

  // 3. Bind the arguments by parameter name.
  tc::LaunchArgs args;
  args.setScalar("N", tc::ScalarValue::ofInt(tc::DType::I32, n));
  args.setBuffer("a", &a);
  args.setBuffer("b", &b);
  args.setBuffer("c", &c);

  // 4. The grid, as an expression over the defines and scalar arguments.
  tc::GridOutcome grid = tc::evalGrid({{"cdiv(N, SIZE)"}}, *compiled.kernel, args);
  if (!grid.dims) {
    std::fprintf(stderr, "grid: %s\n", grid.error.c_str());
    return 3;
  }

  // 5. Run on the interpreter.
  std::unique_ptr<tc::Backend> backend = tc::createInterpreterBackend();
  tc::RunResult r = backend->launch(*compiled.kernel, *grid.dims, args, {});
  if (r.status == tc::RunResult::Status::Trapped) {
    std::fprintf(stderr, "%s", r.trap->render().c_str());
    return 1;
  }
  if (r.status == tc::RunResult::Status::Error) {
    std::fprintf(stderr, "error: %s\n", r.error.c_str());
    return 1;
  }

  // 6. Check against a plain loop.
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float want = at(a, i) + at(b, i);
    if (at(c, i) != want && bad++ < 5)
      std::fprintf(stderr, "c[%d] = %g, expected %g\n", i, at(c, i), want);
  }
  std::printf("vector_add: %d programs, %d elements, %d mismatches\n", int((*grid.dims)[0]), n,
              bad);
  return bad == 0 ? 0 : 1;
}
