// A stand-in for ptxas in the fuzzer's tests (FuzzAttentionClassesTest.cpp,
// FuzzBatchTest.cpp): it records how many kernels each PTX it is given holds.
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tc::fuzz::fake {

// A stand-in for ptxas ($PTXAS, codegen::findPtxas): it appends the number of
// `.entry` functions of each PTX it is given to `log` (one line a run) and
// fails its run number `failRun` (0: none) and every run of a PTX with more
// than one entry when `refuseModules`.
struct FakePtxas {
  std::string dir, log;
  FakePtxas(int failRun, bool refuseModules) {
    char templ[] = "/tmp/tc-fake-ptxas-XXXXXX";
    dir = ::mkdtemp(templ);
    log = dir + "/log";
    std::ofstream os(dir + "/ptxas");
    os << "#!/bin/sh\n"
       << "for a; do f=\"$a\"; done\n" // the PTX file is the last argument
       << "n=$(grep -c '^\\.visible \\.entry\\|^\\.entry' \"$f\")\n"
       << "echo \"$n\" >> '" << log << "'\n"
       << "run=$(wc -l < '" << log << "')\n"
       << "if [ \"$run\" -eq " << failRun << " ]; then echo 'fake ptxas: run refused'; exit 1; fi\n"
       << (refuseModules ? "if [ \"$n\" -gt 1 ]; then echo 'fake ptxas: module refused'; exit 1; fi\n"
                         : "")
       << "exit 0\n";
    os.close();
    ::chmod((dir + "/ptxas").c_str(), 0755);
    const char *old = std::getenv("PTXAS");
    saved = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("PTXAS", (dir + "/ptxas").c_str(), 1);
  }
  ~FakePtxas() {
    if (saved)
      ::setenv("PTXAS", saved->c_str(), 1);
    else
      ::unsetenv("PTXAS");
    ::unlink(log.c_str());
    ::unlink((dir + "/ptxas").c_str());
    ::rmdir(dir.c_str());
  }
  // The entry counts of the runs so far, in order.
  std::vector<int> runs() const {
    std::vector<int> out;
    std::ifstream is(log);
    for (int n; is >> n;)
      out.push_back(n);
    return out;
  }
  std::optional<std::string> saved;
};

} // namespace tc::fuzz::fake
