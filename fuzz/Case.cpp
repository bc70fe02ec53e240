//===- Case.cpp - A fuzzer finding as a conformance case ------------------===//
#include "fuzz/Case.h"

#include "support/ValueBits.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace tc::fuzz {
namespace {

using Json = nlohmann::ordered_json;

// An element as JSON: integers and bools as numbers, floats as raw bits
// ("0x...", as many hex digits as the dtype has), which is always exact.
Json element(const HostArray &a, int64_t i) {
  if (isFloat(a.dtype)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(bitWidth(a.dtype) / 4),
                  static_cast<unsigned long long>(a.getBits(i)));
    return buf;
  }
  if (isUnsignedInt(a.dtype) || isBool(a.dtype))
    return a.getBits(i);
  // From the bits, not through a double: int64 values beyond 2^53 stay exact.
  return static_cast<int64_t>(num::intValue(a.dtype, a.getBits(i)));
}

// The elements from `from` on (a buffer's own, after an offset's prefix).
Json dataOf(const HostArray &a, int64_t from = 0) {
  Json data = Json::array();
  for (int64_t i = from; i < a.numElements(); ++i)
    data.push_back(element(a, i));
  return data;
}

} // namespace

std::string conformanceCase(const FuzzKernel &kernel, const OracleResult &r,
                            const CaseInfo &info) {
  // A failure of a class launch is that launch's case (its arguments, its
  // reference); the suite format has no pointer offsets, so its buffers are
  // written whole and the note says where the pointers were.
  bool classLaunch =
      r.classLaunch >= 0 && static_cast<size_t>(r.classLaunch) < kernel.classLaunches.size();
  FuzzKernel k = classLaunch ? classLaunchKernel(kernel, static_cast<size_t>(r.classLaunch))
                             : kernel;
  std::string note = info.note;
  if (classLaunch) {
    const ClassLaunch &l = kernel.classLaunches[static_cast<size_t>(r.classLaunch)];
    note += std::string(note.empty() ? "" : "\n") + "The arguments are those of class launch " +
            std::to_string(r.classLaunch) + " (" + describeClassLaunch(l) + ")" +
            (l.offset ? "; the finding passed each buffer " + std::to_string(l.offset) +
                            " elements into its allocation (not 16-byte aligned), the case "
                            "passes whole buffers"
                      : "") +
            ".";
  }
  auto offsetOf = [&](const std::string &name) {
    for (const BufferDesc &b : k.buffers)
      if (b.name == name)
        return b.offset;
    return int64_t{0};
  };
  Json c;
  c["name"] = info.name;
  Json features = Json::array({"fuzz", "fuzz." + r.property});
  for (const std::string &f : k.features)
    features.push_back(f);
  c["features"] = features;
  c["source"] = k.source;
  c["kernel"] = k.kernelName;
  Json defines = Json::object();
  for (const auto &[name, value] : k.defines)
    defines[name] = std::stoll(value);
  c["defines"] = defines;
  c["grid"] = Json::array({k.grid[0], k.grid[1], k.grid[2]});
  // The num_warps the failing run had, so that the case alone shows it.
  std::optional<unsigned> warps = findingNumWarps(r.message);
  if (!warps && info.numWarps != 4)
    warps = info.numWarps;
  if (warps)
    c["num_warps"] = *warps;
  std::map<std::string, HostArray> inputs = makeBuffers(k);
  Json args = Json::array();
  for (const BufferDesc &b : k.buffers)
    args.push_back({{"name", b.name}, {"dtype", conformanceName(b.dtype)}, {"shape", b.shape},
                    {"data", dataOf(inputs.at(b.name), b.offset)}});
  for (const ScalarDesc &s : k.scalars) {
    Json v = isFloat(s.dtype) ? Json(s.value) : Json(static_cast<int64_t>(s.value));
    args.push_back({{"name", s.name}, {"dtype", conformanceName(s.dtype)}, {"value", v}});
  }
  c["args"] = args;
  Json outputs = Json::object();
  for (const BufferDesc &b : k.buffers) {
    if (!b.isOutput || !r.reference.count(b.name))
      continue;
    Json out{{"data", dataOf(r.reference.at(b.name), offsetOf(b.name))}};
    if (info.exact)
      out["compare"] = "exact";
    else if (auto u = info.ulpOutputs.find(b.name); u != info.ulpOutputs.end())
      out["compare"] = u->second == 0 ? Json("exact") : Json{{"ulp", u->second}};
    outputs[b.name] = out;
  }
  c["expect"] = {{"outputs", outputs}};

  Json suite;
  suite["format"] = "triton-conformance/1";
  suite["suite"] = "fuzz." + info.name;
  suite["description"] =
      "triton-fuzz finding: property '" + r.property + "' failed (seed " +
      std::to_string(info.seed) + "): " + r.message.substr(0, 2000) +
      "\nReproduce: " + info.reproduce + "\nThe expected outputs are " + info.expected + "." +
      (note.empty() ? "" : "\n" + note) +
      (info.ptxasModules ? "\nThe campaign's modules were made by ptxas (TC_CUBIN); "
                           "`TC_CUBIN=ptxas triton-conformance run FILE --backend gpu` runs "
                           "the case the same way (the runner's default is the driver's JIT)."
                         : "") +
      (info.signature.empty() ? "" : "\nfuzz-signature: " + info.signature);
  suite["cases"] = Json::array({c});
  return suite.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace tc::fuzz
