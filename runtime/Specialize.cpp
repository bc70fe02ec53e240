// Argument specialisation at launch (Specialize.h).
#include "runtime/Specialize.h"

#include "ir/Passes.h"
#include "support/PlantedBugs.h"

#include <map>
#include <numeric>
#include <sstream>

namespace tc {

bool isSpecializable(const ir::Type &t) {
  return t.isPtr || (t.rank() == 0 && isInt(t.dtype) && !isBool(t.dtype));
}

ArgClass classifyInteger(int64_t v) {
  if (v == 1)
    return ArgClass::One;
  int64_t div = plantedBug("spec-div8") ? 8 : 16;
  return v % div == 0 ? ArgClass::Div16 : ArgClass::Any;
}

ArgClass classifyUnsigned(uint64_t v) {
  if (v == 1)
    return ArgClass::One;
  uint64_t div = plantedBug("spec-div8") ? 8 : 16;
  return v % div == 0 ? ArgClass::Div16 : ArgClass::Any;
}

ArgClass classifyPointer(uint64_t address) {
  return address % 16 == 0 ? ArgClass::Div16 : ArgClass::Any;
}

bool Specialization::generic() const {
  for (ArgClass c : params)
    if (c != ArgClass::Any)
      return false;
  return true;
}

std::string Specialization::key() const {
  std::string k = "spec=";
  for (ArgClass c : params)
    k += classChar(c);
  return k;
}

ArgClass classifyBits(const ir::Type &t, uint64_t bits) {
  if (!isSpecializable(t))
    return ArgClass::Any;
  if (t.isPtr)
    return classifyPointer(bits);
  unsigned width = bitWidth(t.dtype);
  if (width < 64)
    bits &= (uint64_t(1) << width) - 1;
  if (!isSignedInt(t.dtype))
    return classifyUnsigned(bits);
  if (width < 64 && (bits >> (width - 1)) & 1)
    bits |= ~uint64_t(0) << width; // sign-extend
  return classifyInteger(static_cast<int64_t>(bits));
}

Specialization classifyValues(const ir::Function &fn, const uint64_t *values) {
  Specialization s;
  s.params.reserve(fn.numParams());
  for (unsigned i = 0; i < fn.numParams(); ++i)
    s.params.push_back(classifyBits(fn.param(i)->type(), values[i]));
  return s;
}

std::string describeSpecialization(const ir::Function &fn, const Specialization &s) {
  std::string out;
  for (unsigned i = 0; i < fn.numParams() && i < s.params.size(); ++i) {
    if (s.params[i] == ArgClass::Any)
      continue;
    out +=
        (out.empty() ? "" : ",") + fn.paramName(i) + (s.params[i] == ArgClass::One ? "=1" : "=16");
  }
  return out;
}

std::optional<Specialization> parseSpecialization(std::string_view text, const ir::Function &fn,
                                                  std::string &error) {
  Specialization s;
  s.params.assign(fn.numParams(), ArgClass::Any);
  std::vector<bool> seen(fn.numParams());
  auto params = [&] {
    std::string names;
    for (unsigned i = 0; i < fn.numParams(); ++i)
      if (isSpecializable(fn.param(i)->type()))
        names += (names.empty() ? "" : ", ") + fn.paramName(i);
    return names.empty() ? std::string("none") : names;
  };
  std::stringstream in{std::string(text)};
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "'" + item + "': expected NAME=16 or NAME=1";
      return std::nullopt;
    }
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    unsigned i = 0;
    while (i < fn.numParams() && fn.paramName(i) != name)
      ++i;
    if (i == fn.numParams()) {
      error = "kernel '" + fn.name() + "' has no parameter '" + name +
              "' (integer and pointer parameters: " + params() + ")";
      return std::nullopt;
    }
    const ir::Type &t = fn.param(i)->type();
    if (!isSpecializable(t)) {
      error = "'" + name +
              "' is not an integer or pointer parameter (integer and pointer "
              "parameters: " +
              params() + ")";
      return std::nullopt;
    }
    if (seen[i]) {
      error = "'" + name + "' given twice";
      return std::nullopt;
    }
    seen[i] = true;
    if (value == "16") {
      s.params[i] = ArgClass::Div16;
    } else if (value == "1" && !t.isPtr && fn.paramAttrs(i).multipleOf > 1) {
      error = "'" + item + "': '" + name + "' is declared __multipleof(" +
              std::to_string(fn.paramAttrs(i).multipleOf) + "): a launch with 1 traps";
      return std::nullopt;
    } else if (value == "1" && !t.isPtr) {
      s.params[i] = ArgClass::One;
    } else {
      error =
          "'" + item + "': " +
          (t.isPtr ? std::string("a pointer's class is 16 (16-byte aligned)")
                   : std::string("an integer's class is 16 (divisible by 16) or 1 (equal to 1)"));
      return std::nullopt;
    }
  }
  return s;
}


SpecializedKernel specializeKernel(const ir::Module &module, const ir::Function &fn,
                                   const Specialization &s) {
  SpecializedKernel out;
  out.module = std::make_unique<ir::Module>();
  out.module->files = module.files;
  ir::Function *copy = out.module->addFunction(fn.name(), fn.loc());
  std::map<const ir::Value *, ir::Value *> map;
  std::vector<std::pair<unsigned, ir::Value *>> ones;
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    const ir::Type &t = fn.param(i)->type();
    ir::ParamAttrs pa = fn.paramAttrs(i);
    ArgClass c = i < s.params.size() && isSpecializable(t) ? s.params[i] : ArgClass::Any;
    if (c == ArgClass::Div16 && t.isPtr)
      pa.aligned = std::max<int64_t>(pa.aligned, 16);
    else if (c == ArgClass::Div16)
      pa.multipleOf = std::lcm(std::max<int64_t>(pa.multipleOf, 1), int64_t(16));
    ir::Value *p = copy->addParam(fn.paramName(i), t, pa);
    map[fn.param(i)] = p;
    if (c == ArgClass::One && !t.isPtr)
      ones.push_back({i, p});
  }
  // Each One parameter's uses take a constant 1 made at the top of the body.
  ir::Builder b(&copy->body());
  b.setLoc(fn.loc());
  for (auto &[i, p] : ones)
    map[fn.param(i)] = b.constantInt(p->type(), 1);
  ir::copyOps(fn.body(), copy->body(), map);
  if (!ones.empty() || !s.generic()) {
    ir::PipelineOptions po;
    std::ostringstream sink;
    po.out = &sink;
    ir::runPipeline(*out.module, po); // fold the constants; the copy stays valid either way
  }
  out.function = copy;
  return out;
}

} // namespace tc
