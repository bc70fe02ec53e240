// Reading and writing NumPy .npy files (format versions 1.0-3.0), see Npy.h.
#include "support/Npy.h"
#include "support/FileIO.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace tc {

static_assert(std::endian::native == std::endian::little,
              "the .npy code assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

/// A cursor over the header's Python dict literal.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  struct Value {
    enum class Kind { String, Bool, Tuple, Other } kind = Kind::Other;
    std::string str;
    bool boolean = false;
    std::vector<int64_t> ints;
  };

  // dict := '{' (string ':' value (',' string ':' value)* ','?)? '}' whitespace*
  bool parseDict(std::map<std::string, Value> &out, std::string &error) {
    skipSpace();
    if (!eat('{'))
      return fail("the header is not a dict (it must start with '{')", error);
    skipSpace();
    while (!eat('}')) {
      std::string key;
      if (!parseString(key, error))
        return false;
      skipSpace();
      if (!eat(':'))
        return fail("expected ':' after key '" + key + "' in the header", error);
      Value v;
      if (!parseValue(v, error))
        return false;
      if (out.count(key))
        return fail("duplicate key '" + key + "' in the header", error);
      out[key] = std::move(v);
      skipSpace();
      if (eat(',')) {
        skipSpace();
        continue;
      }
      skipSpace();
      if (!eat('}'))
        return fail("expected ',' or '}' in the header dict", error);
      break;
    }
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the header dict", error);
    return true;
  }

private:
  bool fail(std::string msg, std::string &error) {
    error = std::move(msg);
    return false;
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool startsWith(std::string_view word) const { return text_.substr(pos_).starts_with(word); }

  // string := "'" chars "'" | '"' chars '"'   (no escapes)
  bool parseString(std::string &out, std::string &error) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return fail("expected a quoted string in the header", error);
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos)
      return fail("unterminated string in the header", error);
    out = std::string(text_.substr(pos_, end - pos_));
    if (out.find('\\') != std::string::npos)
      return fail("escape sequences in header strings are not supported", error);
    pos_ = end + 1;
    return true;
  }

  // value := string | 'True' | 'False' | tuple | anything else (kept as Other)
  bool parseValue(Value &v, std::string &error) {
    skipSpace();
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      v.kind = Value::Kind::String;
      return parseString(v.str, error);
    }
    if (startsWith("True") || startsWith("False")) {
      v.kind = Value::Kind::Bool;
      v.boolean = startsWith("True");
      pos_ += v.boolean ? 4 : 5;
      return true;
    }
    if (eat('(')) {
      v.kind = Value::Kind::Tuple;
      return parseTupleRest(v.ints, error);
    }
    if (pos_ < text_.size() && text_[pos_] == '[')
      return fail("structured dtypes (a list as 'descr') are not supported", error);
    return fail("unexpected value in the header", error);
  }

  // tuple := '(' (int (',' int)* ','?)? ')'     int := digits 'L'?
  bool parseTupleRest(std::vector<int64_t> &ints, std::string &error) {
    skipSpace();
    while (!eat(')')) {
      size_t start = pos_;
      int64_t n = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, text_[pos_] - '0', &n))
          return fail("shape dimension too large in the header", error);
        ++pos_;
      }
      if (pos_ == start)
        return fail("the shape must be a tuple of non-negative integers", error);
      eat('L'); // Python 2 long literals
      ints.push_back(n);
      skipSpace();
      if (eat(',')) {
        skipSpace();
        continue;
      }
      if (!eat(')'))
        return fail("expected ',' or ')' in the shape tuple", error);
      break;
    }
    if (ints.size() > 32)
      return fail("the shape has more than 32 dimensions", error);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

/// What a descriptor means: dtype and byte order.
struct Descr {
  DType dtype = DType::F32;
  bool bigEndian = false;
};

std::optional<DType> dtypeOfKindSize(char kind, std::string_view size) {
  if (kind == 'b' && size == "1")
    return DType::Bool;
  if (kind == 'i' || kind == 'u') {
    bool s = kind == 'i';
    if (size == "1")
      return s ? DType::I8 : DType::U8;
    if (size == "2")
      return s ? DType::I16 : DType::U16;
    if (size == "4")
      return s ? DType::I32 : DType::U32;
    if (size == "8")
      return s ? DType::I64 : DType::U64;
  }
  if (kind == 'f') {
    if (size == "2")
      return DType::F16;
    if (size == "4")
      return DType::F32;
    if (size == "8")
      return DType::F64;
  }
  return std::nullopt;
}

std::string kindWord(char kind) {
  switch (kind) {
  case 'c': return " (complex)";
  case 'O': return " (Python objects)";
  case 'S':
  case 'a':
  case 'U': return " (strings)";
  case 'M':
  case 'm': return " (dates/times)";
  case 'V': return " (opaque bytes)";
  case 'f': return " (this float width)";
  default: return "";
  }
}

// descr := 'bfloat16' | [<>=|]? kind size
std::optional<Descr> parseDescr(const std::string &text, const NpyReadOptions &opts,
                                std::string &error) {
  if (text == "bfloat16")
    return Descr{DType::BF16, false};
  std::string_view s = text;
  Descr d;
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) {
    d.bigEndian = s[0] == '>';
    s.remove_prefix(1);
  }
  if (s.empty()) {
    error = "unsupported dtype '" + text + "'";
    return std::nullopt;
  }
  char kind = s[0];
  std::string_view size = s.substr(1);
  bool raw16 = (kind == 'u' && size == "2") || (kind == 'V' && size == "2");
  if (raw16 && opts.bf16FromU2) {
    d.dtype = DType::BF16;
    return d;
  }
  if (kind == 'V' && size == "2") {
    error = "ambiguous dtype '" + text +
            "' (2 opaque bytes: np.save writes ml_dtypes' bfloat16 this way); read it as "
            "bfloat16 with --bf16-as-u2";
    return std::nullopt;
  }
  if (auto t = dtypeOfKindSize(kind, size)) {
    d.dtype = *t;
    return d;
  }
  error = "unsupported dtype '" + text + "'" + kindWord(kind) +
          "; supported: bool, int8..int64, uint8..uint64, float16, float32, float64, bfloat16";
  return std::nullopt;
}

uint32_t readLE(std::string_view b, size_t at, unsigned n) {
  uint32_t v = 0;
  for (unsigned i = 0; i < n; ++i)
    v |= uint32_t(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

/// Checks the three keys and extracts descr, shape.
bool readHeaderDict(std::string_view header, const NpyReadOptions &opts, Descr &descr,
                    std::vector<int64_t> &shape, bool &fortran, std::string &error) {
  std::map<std::string, HeaderParser::Value> dict;
  HeaderParser p(header);
  if (!p.parseDict(dict, error)) {
    error = "bad header: " + error;
    return false;
  }
  for (const auto &[key, value] : dict)
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      error = "bad header: unexpected key '" + key + "'";
      return false;
    }
  for (const char *key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key)) {
      error = std::string("bad header: missing key '") + key + "'";
      return false;
    }
  const auto &d = dict["descr"], &f = dict["fortran_order"], &s = dict["shape"];
  if (d.kind != HeaderParser::Value::Kind::String || f.kind != HeaderParser::Value::Kind::Bool ||
      s.kind != HeaderParser::Value::Kind::Tuple) {
    error = "bad header: 'descr' must be a string, 'fortran_order' a bool, 'shape' a tuple";
    return false;
  }
  fortran = f.boolean;
  auto parsed = parseDescr(d.str, opts, error);
  if (!parsed)
    return false;
  descr = *parsed;
  shape = s.ints;
  return true;
}

/// Copies Fortran-order (column-major) elements of `size` bytes into row-major
/// order: row-major element (i0, ..., i{r-1}) is column-major element
/// i0 + shape[0] * (i1 + shape[1] * (...)). One pass over the row-major
/// indices with the column-major offset kept incrementally.
void copyFortranToRowMajor(std::string_view src, const std::vector<int64_t> &shape, unsigned size,
                           std::vector<uint8_t> &dst) {
  size_t rank = shape.size();
  std::vector<uint64_t> stride(rank); // column-major stride of each axis, in elements
  uint64_t s = 1;
  for (size_t a = 0; a < rank; ++a) {
    stride[a] = s;
    s *= static_cast<uint64_t>(shape[a]);
  }
  dst.resize(src.size());
  std::vector<int64_t> idx(rank, 0);
  uint64_t from = 0; // column-major offset of idx
  for (size_t to = 0; to < dst.size(); to += size) {
    std::memcpy(dst.data() + to, src.data() + from * size, size);
    for (size_t a = rank; a-- > 0;) { // next row-major index: the last axis fastest
      if (++idx[a] < shape[a]) {
        from += stride[a];
        break;
      }
      from -= stride[a] * static_cast<uint64_t>(shape[a] - 1);
      idx[a] = 0;
    }
  }
}

/// Copies the data (elements of `size` bytes) into row-major order, swapping
/// bytes when big-endian.
void copyData(std::string_view src, const Descr &descr, unsigned size, bool fortran,
              const std::vector<int64_t> &shape, std::vector<uint8_t> &dst) {
  // One axis (or none, or no element): both orders are the same bytes.
  if (fortran && shape.size() >= 2 && !src.empty())
    copyFortranToRowMajor(src, shape, size, dst);
  else
    dst.assign(src.begin(), src.end());
  if (descr.bigEndian && size > 1)
    for (size_t i = 0; i + size <= dst.size(); i += size)
      std::reverse(dst.begin() + static_cast<std::ptrdiff_t>(i),
                   dst.begin() + static_cast<std::ptrdiff_t>(i + size));
  if (descr.dtype == DType::Bool)
    for (uint8_t &b : dst)
      b = b != 0;
}

std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

} // namespace

std::optional<NpyArray> parseNpy(std::string_view bytes, const std::string &name,
                                 const NpyReadOptions &opts, std::string &error) {
  auto fail = [&](const std::string &msg) {
    error = name + ": " + msg;
    return std::nullopt;
  };
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic)
    return fail("not a .npy file (bad magic; expected \\x93NUMPY)");
  if (bytes.size() < 8)
    return fail("truncated header (no version)");
  unsigned major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return fail("unsupported format version " + std::to_string(major) + "." +
                std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  unsigned lenBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lenBytes)
    return fail("truncated header (no header length)");
  uint64_t headerLen = readLE(bytes, 8, lenBytes);
  size_t start = 8 + lenBytes;
  if (headerLen > bytes.size() - start)
    return fail("truncated header (" + std::to_string(headerLen) + " bytes announced, " +
                std::to_string(bytes.size() - start) + " present)");
  std::string_view header = bytes.substr(start, headerLen);
  Descr descr;
  NpyArray out;
  std::string why;
  bool fortran = false;
  if (!readHeaderDict(header, opts, descr, out.shape, fortran, why))
    return fail(why);
  out.dtype = descr.dtype;
  unsigned size = byteSize(descr.dtype);
  uint64_t count = 1;
  for (int64_t d : out.shape)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count))
      return fail("the shape " + shapeRepr(out.shape) + " is too large");
  uint64_t need = 0;
  if (__builtin_mul_overflow(count, uint64_t(size), &need) || need > opts.maxBytes)
    return fail("the shape " + shapeRepr(out.shape) + " is too large (limit " +
                std::to_string(opts.maxBytes) + " bytes)");
  std::string_view data = bytes.substr(start + headerLen);
  if (data.size() < need)
    return fail("truncated data (" + std::to_string(need) + " bytes expected for shape " +
                shapeRepr(out.shape) + ", " + std::to_string(data.size()) + " present)");
  if (data.size() > need)
    return fail(std::to_string(data.size() - need) + " unexpected bytes after the data of shape " +
                shapeRepr(out.shape));
  copyData(data, descr, size, fortran, out.shape, out.data);
  return out;
}

std::optional<NpyArray> readNpy(const std::string &path, const NpyReadOptions &opts,
                                std::string &error) {
  std::string bytes;
  uint64_t limit = opts.maxBytes > UINT64_MAX - (uint64_t(1) << 20)
                       ? UINT64_MAX
                       : opts.maxBytes + (uint64_t(1) << 20);
  if (!readFileCapped(path, limit, bytes, error)) {
    error = path + ": " + error;
    return std::nullopt;
  }
  return parseNpy(bytes, path, opts, error);
}

std::string npyDescr(DType dtype, const NpyWriteOptions &opts) {
  switch (dtype) {
  case DType::Bool: return "|b1";
  case DType::I8: return "|i1";
  case DType::I16: return "<i2";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  case DType::U8: return "|u1";
  case DType::U16: return "<u2";
  case DType::U32: return "<u4";
  case DType::U64: return "<u8";
  case DType::F16: return "<f2";
  case DType::BF16: return opts.bf16 == NpyBf16Descr::Name ? "bfloat16" : "<u2";
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  }
  return "";
}

std::string encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                      const std::vector<uint8_t> &data, const NpyWriteOptions &opts) {
  std::string dict = "{'descr': '" + npyDescr(dtype, opts) +
                     "', 'fortran_order': False, 'shape': " + shapeRepr(shape) + ", }";
  // Pad with spaces and a final '\n' so the data starts at a multiple of 64.
  auto encode = [&](unsigned major) {
    size_t prefix = 8 + (major == 1 ? 2 : 4);
    size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    std::string header = dict + std::string(total - prefix - dict.size() - 1, ' ') + "\n";
    std::string out(kMagic);
    out += static_cast<char>(major);
    out += '\0';
    uint32_t len = static_cast<uint32_t>(header.size());
    for (unsigned i = 0; i < (major == 1 ? 2u : 4u); ++i)
      out += static_cast<char>((len >> (8 * i)) & 0xff);
    return out + header;
  };
  std::string out = dict.size() + 64 < 65535 ? encode(1) : encode(2);
  out.append(reinterpret_cast<const char *>(data.data()), data.size());
  return out;
}

bool writeNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
              const std::vector<uint8_t> &data, const NpyWriteOptions &opts, std::string &error) {
  return writeFileAtomic(path, encodeNpy(dtype, shape, data, opts), error);
}

} // namespace tc
