//===- Npy.h - Reading and writing NumPy .npy files ---------------------===//
//
// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a version, a
// header length, and a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (64, 32), }
// padded with spaces to a multiple of 64 bytes, then the raw row-major data.
//
// Read: versions 1.0, 2.0 and 3.0; little-, big- and native-endian
// descriptors ('<', '>', '=', '|'); '|b1' (bool), i1..i8, u1..u8, f2, f4, f8;
// C order and Fortran order (fortran_order True: what np.save writes for a
// column-major array such as `a.T`), which is reordered into row-major data
// on reading (the same logical array). Structured, object, complex and string
// dtypes are rejected with a message naming them.
// Written: version 1.0 (2.0 when the header does not fit 65535 bytes), little
// endian, C order.
//
// bfloat16: NumPy has no bfloat16. ml_dtypes registers one, but np.save writes
// it with the ambiguous descriptor '<V2' (2 opaque bytes; np.load then returns
// a void array), and a file whose descr is the name 'bfloat16' loads only where
// ml_dtypes is imported. Our convention:
//   - written as '<u2' holding the bf16 bit patterns (loads everywhere;
//     `np.load(f).view(ml_dtypes.bfloat16)` gives the values), or, with
//     NpyBf16Descr::Name, as descr 'bfloat16' (np.load works after
//     `import ml_dtypes`);
//   - read: descr 'bfloat16' is bf16; '<u2' is uint16 and '<V2' is an error,
//     unless NpyReadOptions::bf16FromU2 is set (the tools' `--bf16-as-u2`),
//     which reads both as bf16 bit patterns.
//
// Every error names the file and what is wrong; no file content can crash the
// reader (sizes are checked before any allocation).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"
#include "support/FileIO.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// An array: dtype, shape (empty: a 0-d array of one element) and row-major
/// little-endian bytes (bool: one byte 0/1; f16/bf16: bit patterns), whatever
/// the byte order and element order of the file it was read from.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

struct NpyReadOptions {
  /// Read '<u2' / '>u2' and 2-byte void ('<V2', ml_dtypes' np.save of bfloat16)
  /// as bfloat16 bit patterns.
  bool bf16FromU2 = false;
  /// Largest data size accepted, in bytes (a guard against absurd headers).
  uint64_t maxBytes = kMaxBufferBytes;
};

/// How bfloat16 arrays are described in written files.
enum class NpyBf16Descr : uint8_t {
  U2,   // '<u2' with the bit patterns (portable; the default)
  Name, // 'bfloat16' (ml_dtypes' name; np.load needs `import ml_dtypes`)
};

struct NpyWriteOptions {
  NpyBf16Descr bf16 = NpyBf16Descr::U2;
};

/// Decodes the bytes of a .npy file; `name` is used in error messages.
/// Returns nullopt and sets `error` ("<name>: <what is wrong>") on failure.
std::optional<NpyArray> parseNpy(std::string_view bytes, const std::string &name,
                                 const NpyReadOptions &opts, std::string &error);

/// Reads a .npy file (see parseNpy).
std::optional<NpyArray> readNpy(const std::string &path, const NpyReadOptions &opts,
                                std::string &error);

/// Encodes an array as .npy bytes. `data` must hold prod(shape) elements.
std::string encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                      const std::vector<uint8_t> &data, const NpyWriteOptions &opts = {});

/// Writes a .npy file; false with `error` set when the file cannot be written.
bool writeNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
              const std::vector<uint8_t> &data, const NpyWriteOptions &opts, std::string &error);

/// The descriptor written for `dtype` ("<f4", "|b1", ...).
std::string npyDescr(DType dtype, const NpyWriteOptions &opts = {});

} // namespace tc
