//===- AccessMap.h - A picture of which program touched which element --===//
//
// `triton-interp --access-map FILE.html`: one self-contained HTML page per
// launch (no external scripts, styles or fonts). Per buffer two canvases, the
// stores and the loads: each element is a cell coloured by the program that
// stored (loaded) it last, a grey cross where no program stored it, and red
// cells past the buffer's edges where an active lane tried an address outside
// every buffer. 2-d buffers are drawn as their rows, others wrapped into rows
// of 64. Hovering a cell names the element and its programs.
//
// The page's data is one JSON object in <script type="application/json"
// id="access-data">: {"kernel", "grid", "buffers": [{"name", "shape",
// "elements", "stored", "unwritten": [[first, last], ...], "writer": RLE,
// "reader": RLE, "oob": [[program, element, line], ...]}]}, where RLE is
// [value, count, value, count, ...] over the elements (-1: no program).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <array>
#include <string>
#include <vector>

namespace tc {

struct AccessMapLaunch {
  std::string kernel;
  std::string title; // e.g. the command line or the variant
  std::array<int64_t, 3> grid{1, 1, 1};
  std::vector<BufferAccess> buffers; // with writer / reader filled (RunOptions::accessMap)
};

/// The HTML page for one launch.
std::string renderAccessMap(const AccessMapLaunch &launch);

/// "Y: 24 of 1000 elements never written (976..999)" for a buffer some
/// program stored to but not everywhere; "" otherwise. At most `maxRanges`
/// ranges are listed, then ", ...".
std::string describeUnwritten(const BufferAccess &b, size_t maxRanges = 4);

} // namespace tc
