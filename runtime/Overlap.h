//===- Overlap.h - Overlapping host arrays of one launch are one memory --===//
//
// Host arrays bound to one launch whose bytes overlap without being the same
// bytes (two slices x[0:128] and x[64:192] of one array, passed zero-copy as
// HostArray::external) are one memory: each becomes a view of one buffer, the
// union of their bytes, at its own offset (HostArray::origin). The
// interpreter then sees one buffer (a store through one argument and a load of
// the same element through the other is a race it reports; its undo and
// re-run copies are made once); the GPU backend uploads the union once into
// one allocation and downloads it once. Bounds checks of such arguments use
// the union's extent, as for strided views. One implementation for the C++
// host API (both backends call OverlappingViews) and the Python package
// (which merges its own descriptors with mergeOverlappingHostArrays).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tc {

/// In place: every host array bound in `args` whose bytes overlap another's
/// without being the same bytes becomes an external view of the union of its
/// group (external, externalBytes, origin and a 1-D shape of the union's
/// elements change; a `data` array keeps its vector, now reached through
/// `external`). Arrays with the same bytes (one array bound twice, a storage
/// viewed at two origins), device arrays and empty arrays are left as they
/// are. Nothing changes when it refuses; the refusal names the parameters
/// ("argument 'Y' (float32*) overlaps argument 'X' (float32*) in memory,
/// ...: not supported yet"): a group that mixes read-only and writable
/// arrays (also two arrays over the same bytes), a member whose start in the union or the union's size is not a
/// whole number of its elements. Expects arguments that passed
/// checkLaunchArguments.
std::optional<std::string> mergeOverlappingHostArrays(const CompiledKernel &kernel,
                                                      LaunchArgs &args);

/// What a backend launches with: the caller's `args` itself, or, when host
/// arrays overlap, a copy of it in which each overlapping array is a merged
/// descriptor over the same memory (the caller's HostArray objects are not
/// changed).
class OverlappingViews {
public:
  /// Nullopt: launch with launchArgs(). Else the refusal as an
  /// invalid_launch trap. Arguments that fail checkLaunchArguments are left
  /// as they are (the backend reports them).
  std::optional<Trap> prepare(const CompiledKernel &kernel, LaunchArgs &args);
  LaunchArgs &launchArgs() { return merged_ ? local_ : *args_; }
  /// After the launch: RunResult::trapState gets each caller's array's own
  /// bytes under its own HostArray::bytes(), and RunResult::written lists
  /// every array of a written union.
  void finish(RunResult &r) const;

private:
  LaunchArgs *args_ = nullptr;
  LaunchArgs local_;
  bool merged_ = false;
  std::vector<std::unique_ptr<HostArray>> views_;
  std::vector<std::pair<const HostArray *, const HostArray *>> pairs_; // the caller's, its view
};

} // namespace tc
