//===- Type.h - Types of tile IR values -----------------------------------===//
//
// A value's type is an element (a scalar dtype, or a pointer to one) and a
// shape. An empty shape is a scalar (a 0-d tile); otherwise a tile.
//   i32, !ptr<f32>, tile<64x32xf16>, tile<64x!ptr<f32>>
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc::ir {

using Shape = std::vector<int64_t>;

struct Type {
  DType dtype = DType::I32; // the element type, or the pointee for pointers
  bool isPtr = false;
  Shape shape; // empty: scalar

  static Type scalar(DType t) { return Type{t, false, {}}; }
  static Type ptr(DType pointee) { return Type{pointee, true, {}}; }
  static Type tile(DType t, Shape s) { return Type{t, false, std::move(s)}; }
  static Type ptrTile(DType pointee, Shape s) { return Type{pointee, true, std::move(s)}; }

  bool isScalar() const { return shape.empty(); }
  bool isTile() const { return !shape.empty(); }
  size_t rank() const { return shape.size(); }
  int64_t numElements() const;
  /// The element type alone (same dtype/isPtr, no shape).
  Type element() const { return Type{dtype, isPtr, {}}; }
  Type withShape(Shape s) const { return Type{dtype, isPtr, std::move(s)}; }
  Type withDType(DType t) const { return Type{t, isPtr, shape}; }

  bool operator==(const Type &o) const = default;

  /// IR spelling, e.g. "tile<64x!ptr<f32>>".
  std::string str() const;
  /// Spelling in diagnostics, in the language's terms, e.g. "float*[64, 32]".
  std::string langStr() const;
};

/// Parses the IR spelling of a type; nullopt if malformed.
std::optional<Type> parseType(std::string_view text);

/// NumPy broadcasting of two shapes (left-pad with 1s; 1 stretches). On failure
/// returns nullopt and sets `badAxis` to the (right-aligned, result-rank) axis.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b, int *badAxis = nullptr);

std::string shapeStr(const Shape &s); // "[64, 32]"

} // namespace tc::ir
