//===- ArrayPrint.h - NumPy-like text of a host array -------------------===//
//
// How the tools' `--print NAME` shows a buffer, close to NumPy's str():
//
//   [[ 0.   1.5  3. ]
//    [-2.   nan  inf]]
//
// - columns are aligned; ints in decimal; bools True/False;
// - floats print the fewest fraction digits (at most 8) that give back the
//   same value in the array's dtype, with '.' always shown ("1."); scientific
//   notation when the largest magnitude is >= 1e8 or the smallest non-zero
//   one is < 1e-4 or their ratio exceeds 1000 (NumPy's rule); so, as in
//   NumPy, an element that needs more digits is shown rounded to 8;
//   a 0-d array (as NumPy shows its scalar) and formatElement keep every digit;
// - arrays of more than `threshold` elements show `edgeItems` items at each
//   end of every axis with "..." between (NumPy: 1000 and 3);
// - rows wrap at `lineWidth` characters.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <string>

namespace tc {

struct ArrayPrintOptions {
  int64_t threshold = 1000; // summarise arrays with more elements (< 0: never)
  int64_t edgeItems = 3;
  size_t lineWidth = 75;
};

/// The array as text (no trailing newline).
std::string formatArray(const HostArray &a, const ArrayPrintOptions &opts = {});

/// One element as text on its own ("1.5", "-3", "True", "nan"): floats with
/// the fewest digits that give back the same value in the array's dtype, with
/// no limit on their number ("0.30000000000000004"); the notation and the
/// spelling of integral values ("2.") are those of an array's elements. A 0-d
/// array is printed so by formatArray.
std::string formatElement(const HostArray &a, int64_t index);

} // namespace tc
