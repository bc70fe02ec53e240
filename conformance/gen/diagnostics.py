"""Generate conformance/cases/diagnostics.json.

One compile_error case for every error diagnostic a user can trigger from Triton-C
source (support/diag/{Common,Lex,PP,Parse,Sema,Lower}.def; notes, pure warnings and
internal / driver-only kinds are skipped, see SKIPPED below). Each case gives a
minimal source, a fragment of the message as the .def file spells it (with the
arguments this source must produce) and the line the diagnostic must point at.

Features: "diagnostic", the phase ("diag.lex", "diag.pp", ...) and the id
("diag.err_sema_incompatible_shapes").

Run: python3 conformance/gen/diagnostics.py
"""

import common as C

KERNEL = "__global__ void k(int *p) {\n  *p = 1;\n}\n"

# Kinds that are not errors a kernel source can trigger, and why.
SKIPPED = {
    "err_cannot_open_file": "driver: the input file itself cannot be opened",
    "err_usage": "driver: command-line usage",
    "err_internal": "internal compiler error",
    "err_pp_include_too_deep": "needs a file on disk that includes itself (inline sources have "
                                "no directory); covered by the preprocessor's unit/lit tests",
    "err_sema_literal_too_large": "unreachable from source: the parser reports literals beyond "
                                  "64 bits first (err_int_literal_too_large)",
    "err_lower_unsupported": "internal safety net after sema",
    "err_sema_function_not_defined": "unreachable from source: the parser rejects a prototype "
                                      "first (err_func_decl_without_body, covered)",
    "err_lower_recursive_call": "sema reports recursion first (err_sema_recursive_call)",
}


def phase_of(diag):
    for p in ["lex", "pp", "sema", "lower"]:
        if diag.startswith("err_%s_" % p):
            return p
    if diag in ("err_not_supported", "err_too_many_errors"):
        return "common"
    return "parse"


CASES = []


def D(diag, name, src, message, line=None, note=""):
    CASES.append((diag, name, src, message, line, note))


def kern(body, params="int *p"):
    """A kernel with the given body lines (each indented by two spaces)."""
    return "__global__ void k(%s) {\n%s}\n" % (params, "".join("  " + l + "\n" for l in body))


# ---------------------------------------------------------------------------- Lex
D("err_lex_unterminated_comment", "unterminated_comment",
  KERNEL + "/* never closed\n", "unterminated /* comment", 4)
D("err_lex_unterminated_string", "unterminated_string",
  kern(['print("abc, *p);']), "missing terminating '\"' character", 2)
D("err_lex_unterminated_char", "unterminated_char",
  kern(["*p = 'a;"]), "missing terminating ' character", 2)
D("err_lex_stray_char", "stray_backtick",
  kern(["*p = 1 ` 2;"]), "stray '`' in program", 2)
D("err_lex_stray_char", "stray_dollar",
  kern(["*p = $;"]), "stray '$' in program", 2)

# ---------------------------------------------------------------------------- PP
D("err_pp_invalid_directive", "pp_invalid_directive",
  "#foo\n" + KERNEL, "invalid preprocessing directive '#foo'", 1)
D("err_pp_macro_name_missing", "pp_define_without_name",
  "#define\n" + KERNEL, "macro name missing", 1)
D("err_pp_macro_name_not_identifier", "pp_define_number",
  "#define 3 x\n" + KERNEL, "macro name must be an identifier", 1)
D("err_pp_defined_as_macro_name", "pp_define_defined",
  "#define defined 1\n" + KERNEL, "'defined' cannot be used as a macro name", 1)
D("err_pp_invalid_macro_param", "pp_number_as_param",
  "#define F(a, 1) a\n" + KERNEL, "invalid token in macro parameter list", 1)
D("err_pp_missing_rparen_in_params", "pp_params_unclosed",
  "#define F(a, b\n" + KERNEL, "missing ')' in macro parameter list", 1)
D("err_pp_duplicate_macro_param", "pp_duplicate_param",
  "#define F(a, a) a\n" + KERNEL, "duplicate macro parameter name 'a'", 1)
D("err_pp_stringize_not_param", "pp_stringize_non_param",
  "#define F(a) #b\n" + KERNEL, "'#' is not followed by a macro parameter", 1)
D("err_pp_hashhash_at_edge", "pp_paste_at_start",
  "#define F(a) ## a\n" + KERNEL, "'##' cannot appear at either end of a macro expansion", 1)
D("err_pp_hashhash_at_edge", "pp_paste_at_end",
  "#define G(a) a ##\n" + KERNEL, "'##' cannot appear at either end of a macro expansion", 1)
D("err_pp_va_args_not_variadic", "pp_va_args_in_plain_macro",
  "#define F(a) __VA_ARGS__\n" + KERNEL,
  "__VA_ARGS__ can only appear in the expansion of a variadic macro", 1)
D("err_pp_unterminated_macro_call", "pp_unterminated_call",
  "#define F(a) a\n" + "__global__ void k(int *p) {\n  *p = F(1;\n}\n",
  "unterminated function-like macro invocation of 'F'", 3)
D("err_pp_too_many_macro_args", "pp_too_many_args",
  "#define F(a) a\n" + kern(["*p = F(1, 2);"]),
  "too many arguments provided to function-like macro 'F' (expected 1, got 2)", 3)
D("err_pp_too_few_macro_args", "pp_too_few_args",
  "#define F(a, b) a + b\n" + kern(["*p = F(1);"]),
  "too few arguments provided to function-like macro 'F' (expected 2, got 1)", 3)
D("err_pp_invalid_paste", "pp_invalid_paste",
  "#define P(a, b) a ## b\n" + kern(["*p = 1 P(+, /) 2;"]),
  "pasting formed '+/', an invalid preprocessing token", 3)
D("err_pp_expansion_too_deep", "pp_argument_nesting_too_deep",
  "#define F(a) a\n" + kern(["*p = " + "F(" * 300 + "1" + ")" * 300 + ";"]),
  "macro expansion nested too deeply", 3)
D("err_pp_expansion_too_large", "pp_exponential_expansion",
  "#define A0 1 + 1\n" + "".join("#define A%d A%d + A%d\n" % (i, i - 1, i - 1)
                                 for i in range(1, 31)) + kern(["*p = A30;"]),
  "macro expansion produced too many tokens", None,
  "2^31 tokens: must stop with an error, never hang")
D("err_pp_expected_value_in_expr", "pp_if_empty",
  "#if\n#endif\n" + KERNEL, "expected value in preprocessor expression", 1)
D("err_pp_expected_value_in_expr", "pp_if_trailing_operator",
  "#if 1 +\n#endif\n" + KERNEL, "expected value in preprocessor expression", 1)
D("err_pp_invalid_token_in_expr", "pp_if_bracket",
  "#if [0]\n#endif\n" + KERNEL, "token '[' is not valid in preprocessor expressions", 1)
D("err_pp_missing_binary_op", "pp_if_two_values",
  "#if 1 2\n#endif\n" + KERNEL, "missing binary operator before '2'", 1)
D("err_pp_expected_rparen_in_expr", "pp_if_unclosed_paren",
  "#if (1 + 2\n#endif\n" + KERNEL, "expected ')' in preprocessor expression", 1)
D("err_pp_expected_colon_in_expr", "pp_if_question_without_colon",
  "#if 1 ? 2\n#endif\n" + KERNEL, "expected ':' in preprocessor expression", 1)
D("err_pp_division_by_zero", "pp_if_division_by_zero",
  "#if 1 / 0\n#endif\n" + KERNEL, "division by zero in preprocessor expression", 1)
D("err_pp_remainder_by_zero", "pp_if_remainder_by_zero",
  "#if 1 % 0\n#endif\n" + KERNEL, "remainder by zero in preprocessor expression", 1)
D("err_pp_float_in_expr", "pp_if_float",
  "#if 1.5\n#endif\n" + KERNEL, "floating point literal '1.5' in preprocessor expression", 1)
D("err_pp_invalid_integer", "pp_if_bad_integer",
  "#if 12abc\n#endif\n" + KERNEL, "invalid integer literal '12abc' in preprocessor expression", 1)
D("err_pp_integer_too_large", "pp_if_integer_too_large",
  "#if 99999999999999999999999\n#endif\n" + KERNEL,
  "integer literal '99999999999999999999999' is too large to be represented in any integer type",
  1)
D("err_pp_invalid_char_constant", "pp_if_empty_char",
  "#if '' == 0\n#endif\n" + KERNEL, "invalid character constant", 1)
D("err_pp_defined_requires_identifier", "pp_defined_number",
  "#if defined(1)\n#endif\n" + KERNEL, "operator 'defined' requires an identifier", 1)
D("err_pp_defined_missing_rparen", "pp_defined_unclosed",
  "#if defined(X\n#endif\n" + KERNEL, "missing ')' after 'defined'", 1)
D("err_pp_expr_too_deep", "pp_if_nested_too_deep",
  "#if " + "(" * 300 + "1" + ")" * 300 + "\n#endif\n" + KERNEL,
  "preprocessor expression nested too deeply", 1)
D("err_pp_unterminated_conditional", "pp_if_without_endif",
  "#if 1\n" + KERNEL, "unterminated conditional directive", 1)
D("err_pp_else_after_else", "pp_else_after_else",
  "#if 1\n#else\n#else\n#endif\n" + KERNEL, "#else after #else", 3)
D("err_pp_elif_after_else", "pp_elif_after_else",
  "#if 1\n#else\n#elif 1\n#endif\n" + KERNEL, "#elif after #else", 3)
D("err_pp_directive_without_if", "pp_endif_without_if",
  "#endif\n" + KERNEL, "#endif without #if", 1)
D("err_pp_directive_without_if", "pp_else_without_if",
  KERNEL + "#else\n", "#else without #if", 4)
D("err_pp_directive_without_if", "pp_elif_without_if",
  "#elif 1\n" + KERNEL, "#elif without #if", 1)
D("err_pp_include_expects_filename", "pp_include_bare_word",
  "#include foo\n" + KERNEL, "#include expects \"FILENAME\"", 1)
D("err_pp_file_not_found", "pp_include_missing_file",
  "#include \"no_such_header_casesa.h\"\n" + KERNEL,
  "'no_such_header_casesa.h' file not found", 1)
D("err_pp_error_directive", "pp_error_directive",
  "#ifndef TM\n#error TM must be defined\n#endif\n" + KERNEL, "TM must be defined", 2)
D("err_pp_directive_in_macro_args", "pp_directive_in_macro_args",
  "#define F(x) x\n__global__ void k(int *p) {\n  *p = F(\n#define Y 1\n  2);\n}\n",
  "preprocessing directive inside the arguments of macro 'F' is not supported", None,
  "no line: the directive (line 4) or the macro name (line 3) are both fair places")
D("err_not_supported", "pp_include_angle_brackets",
  "#include <stdio.h>\n" + KERNEL, "not supported yet: #include <...>; use #include \"...\"", 1)
D("err_not_supported", "pp_line_directive",
  "#line 10\n" + KERNEL, "not supported yet: #line", 1)

# ---------------------------------------------------------------------------- Parse
D("err_expected", "parse_missing_rparen",
  kern(["*p = (1 + 2;"]), "expected ')'", 2)
D("err_expected", "parse_missing_expression",
  kern(["*p = ;"]), "expected expression", 2)
D("err_expected_after", "parse_if_without_paren",
  kern(["if 1) *p = 2;"]), "expected '(' after 'if'", 2)
D("err_unknown_type_name", "parse_unknown_type_in_param",
  "__global__ void k(foo *p) {\n}\n", "unknown type name 'foo'", 1)
D("err_type_combination", "parse_int_float",
  kern(["int float x = 1;", "*p = x;"]),
  "cannot combine 'float' with previous 'int' type specifier", 2)
D("err_func_decl_without_body", "parse_prototype",
  "int helper(int x);\n" + KERNEL, "function declaration without a body", 1)
D("err_expected_function_definition", "parse_stray_token_at_file_scope",
  "42;\n" + KERNEL, "expected a function definition", 1)
D("err_not_assignable", "parse_assign_to_sum",
  kern(["int x = 1;", "x + 1 = 2;", "*p = x;"]), "expression is not assignable", 3)
D("err_int_literal_too_large", "parse_int_literal_beyond_64_bits",
  kern(["*p = 18446744073709551616;"]), "integer literal is too large", 2)
D("err_float_literal_too_large", "parse_float_literal_overflow",
  kern(["float f = 1e999;", "*p = (int)f;"]), "floating literal is too large", 2)
D("err_invalid_numeric_literal", "parse_hex_prefix_without_digits",
  kern(["*p = 0x;"]), "invalid numeric constant '0x'", 2)
D("err_invalid_digit", "parse_octal_digit_9",
  kern(["*p = 09;"]), "invalid digit '9' in octal constant", 2)
D("err_invalid_suffix", "parse_integer_suffix",
  kern(["*p = 123abc;"]), "invalid suffix 'abc' on integer constant", 2)
D("err_invalid_suffix", "parse_float_suffix",
  kern(["float f = 1.5q;", "*p = (int)f;"]), "invalid suffix 'q' on floating constant", 2)
D("err_invalid_char_constant", "parse_empty_char",
  kern(["*p = '';"]), "invalid character constant", 2)
D("err_nesting_too_deep", "parse_parentheses_too_deep",
  kern(["*p = " + "(" * 5000 + "1" + ")" * 5000 + ";"]), "nesting too deep", 2,
  "5000 nested parentheses: an error, never a stack overflow")
D("err_nesting_too_deep", "parse_blocks_too_deep",
  kern(["{" * 5000 + "}" * 5000, "*p = 1;"]), "nesting too deep", 2)
D("err_bad_subscript_item", "parse_empty_subscript_item",
  kern(["int x[4] = 0 ... 4;", "*p = x[:, ];"]),
  "tile subscripts take ':', 'newaxis' or a reduction operator", 3)
D("err_newaxis_outside_subscript", "parse_newaxis_as_value",
  kern(["int y = newaxis;", "*p = y;"]), "'newaxis' is only allowed in a tile subscript", 2)
D("err_range_non_associative", "parse_chained_range",
  kern(["int x[4] = 0 ... 2 ... 4;", "*p = 1;"]),
  "the range operator '...' is non-associative; add parentheses", 2)
D("err_not_callable", "parse_call_a_number",
  kern(["*p = 3(4);"]), "called object is not a function name", 2)
D("err_else_without_if", "parse_else_without_if",
  kern(["else *p = 1;"]), "'else' without a previous 'if'", 2)
D("err_not_supported", "parse_typedef",
  "typedef int myint;\n" + KERNEL, "not supported yet: typedef", 1)
D("err_not_supported", "parse_pointer_to_pointer",
  "__global__ void k(int **p) {\n}\n", "not supported yet: pointers to pointers", 1)
D("err_not_supported", "parse_file_scope_variable",
  "int g = 3;\n" + KERNEL, "not supported yet: variables at file scope", 1)
D("err_not_supported", "parse_brace_initializer",
  kern(["int x[2] = {1, 2};", "*p = 1;"]),
  "not supported yet: initializer lists (a scalar initializer splats)", 2)
D("err_not_supported", "parse_comma_operator",
  kern(["int a = 1;", "*p = (a, 2);"]), "not supported yet: the comma operator", 3)
D("err_not_supported", "parse_mixed_reductions",
  kern(["int x[4, 4] = 0;", "*p = x[+, max];"]),
  "not supported yet: different reductions in one subscript", 3)

# ---------------------------------------------------------------------------- Sema
D("err_sema_undeclared", "sema_undeclared_identifier",
  kern(["*p = y;"]), "use of undeclared identifier 'y'", 2)
D("err_sema_redefinition", "sema_variable_redefinition",
  kern(["int x = 1;", "int x = 2;", "*p = x;"]), "redefinition of 'x'", 3)
D("err_sema_redefinition", "sema_kernel_redefinition",
  KERNEL + KERNEL, "redefinition of 'k'", 4)
D("err_sema_void_variable", "sema_void_variable",
  kern(["void x;", "*p = 1;"]), "variable 'x' cannot have type 'void'", 2)
D("err_sema_void_pointer", "sema_void_pointer_param",
  "__global__ void k(void *q) {\n}\n",
  "'q' cannot point to 'void'; pointers point to scalar element types", 1)
D("err_sema_undeclared_function", "sema_call_undeclared_function",
  kern(["*p = foo(1);"]), "call to undeclared function 'foo'", 2)
D("err_sema_builtin_redefinition", "sema_define_builtin",
  "float exp(float x) {\n  return x;\n}\n" + KERNEL,
  "cannot define a function named 'exp': it is a builtin", 1)
D("err_sema_recursive_call", "sema_recursive_helper",
  "int f(int x) {\n  return f(x - 1);\n}\n" + kern(["*p = f(3);"]),
  "recursive calls are not supported (helpers are inlined)", 2)
D("err_sema_kernel_return_type", "sema_kernel_returns_int",
  "__global__ int k(int *p) {\n  return 1;\n}\n", "kernel 'k' must return void", 1)
D("err_sema_kernel_called", "sema_call_a_kernel",
  "__global__ void other(int *p) {\n  *p = 2;\n}\n" + kern(["other(p);"]),
  "kernel 'other' cannot be called; only helper functions can", 5)
D("err_sema_kernel_param_tile", "sema_kernel_tile_param",
  "__global__ void k(int x[4]) {\n}\n", "kernel parameter 'x' cannot be a tile; pass a pointer",
  1)
D("err_sema_arg_count", "sema_helper_arg_count",
  "int add(int a, int b) {\n  return a + b;\n}\n" + kern(["*p = add(1);"]), "'add' expects", 5)
D("err_sema_arg_count", "sema_builtin_arg_count",
  kern(["*p = get_program_id();"]), "'get_program_id' expects", 2)
D("err_sema_void_value", "sema_use_void_result",
  "void nothing(int *q) {\n  *q = 1;\n}\n" + kern(["int x = nothing(p);", "*p = x;"]),
  "'nothing' returns void; its value cannot be used", 5)
D("err_sema_string_misuse", "sema_string_as_value",
  kern(['int x = "abc";', "*p = x;"]),
  "a string literal can only be an argument of 'print' or 'assert'", 2)
D("err_sema_const_no_fit", "sema_const_does_not_fit",
  kern(["uint8 x[4] = 0;", "uint8 y[4] = x + 300;"], "uint8 *p"),
  "constant 300 does not fit in uint8", 3)
D("err_sema_const_negative_unsigned", "sema_negative_const_unsigned",
  kern(["uint32 x[4] = 0;", "uint32 y[4] = x + -1;"], "uint32 *p"),
  "negative constant -1 cannot meet unsigned type uint32", 3)
D("err_sema_const_float_to_int", "sema_const_float_cast_out_of_range",
  kern(["*p = (uint8)300.0;"], "uint8 *p"), "constant 300", 2)
D("err_sema_const_overflow", "sema_const_overflow",
  kern(["int64 x = 18446744073709551615 * 18446744073709551615 * 18446744073709551615;",
        "*p = 1;"]), "integer overflow in constant expression", 2)
D("err_sema_const_div_zero", "sema_const_division_by_zero",
  kern(["*p = 7 / 0;"]), "division by zero in constant expression", 2)
D("err_sema_const_div_zero", "sema_const_remainder_by_zero",
  kern(["*p = 7 % 0;"]), "by zero in constant expression", 2)
D("err_sema_const_negative_shift", "sema_const_negative_shift",
  kern(["*p = 1 << -1;"]), "shift count -1 is negative", 2)
D("err_sema_incompatible_shapes", "sema_incompatible_shapes",
  kern(["float a[16] = 0;", "float b[8] = 0;", "float c[16] = a + b;"], "float *p"),
  "incompatible shapes [16] and [8] (axis 0: 16 vs 8)", 4)
D("err_sema_invalid_operands", "sema_bitand_on_float",
  kern(["float f = 1.5;", "float g = f & f;"], "float *p"),
  "invalid operands to binary expression ('float' and 'float')", 3)
D("err_sema_invalid_unary", "sema_complement_of_float",
  kern(["float f = 1.5;", "float g = ~f;"], "float *p"),
  "invalid argument type 'float' to unary expression '~'", 3)
D("err_sema_ptr_add_ptr", "sema_pointer_plus_pointer",
  kern(["int *q = p + p;"]), "cannot add two pointers", 2)
D("err_sema_int_minus_ptr", "sema_number_minus_pointer",
  kern(["int *q = 1 - p;"]), "cannot subtract a pointer from a number", 2)
D("err_sema_ptr_diff", "sema_pointer_difference",
  kern(["int *q = p + 1;", "int d = q - p;"]), "subtracting two pointers is not supported", 3)
D("err_sema_ptr_offset", "sema_float_pointer_offset",
  kern(["int *q = p + 1.5;"]), "pointer offset must be an integer, got 'float'", 2)
D("err_sema_ptr_operator", "sema_pointer_times_two",
  kern(["int *q = p * 2;"]), "operator '*' does not apply to pointers", 2)
D("err_sema_ptr_compare", "sema_compare_different_pointers",
  kern(["bool b = p == q;"], "int *p, float *q"), "comparison of incompatible types", 2)
D("err_sema_incompatible_branches", "sema_conditional_pointer_or_float",
  kern(["int c = 1;", "int *q = c ? p : 1.5;"]), "incompatible operand types", 3)
D("err_sema_matmul_rank", "sema_matmul_vectors",
  kern(["float a[16] = 0;", "float b[16] = 0;", "float c[16] = a @ b;"], "float *p"),
  "'@' needs 2-D tiles (or 3-D for a batched product)", 4)
D("err_sema_matmul_inner", "sema_matmul_inner_mismatch",
  kern(["float a[16, 8] = 0;", "float b[16, 8] = 0;", "float c[16, 8] = a @ b;"], "float *p"),
  "'@' inner dimensions differ", 4)
D("err_sema_matmul_batch", "sema_matmul_batch_mismatch",
  kern(["float a[16, 8, 2] = 0;", "float b[8, 16, 4] = 0;", "float c[16, 16, 2] = a @ b;"],
       "float *p"), "'@' batch dimensions differ", 4)
D("err_sema_matmul_dtype", "sema_matmul_bool",
  kern(["bool a[16, 16] = 0;", "bool b[16, 16] = 0;", "bool c[16, 16] = a @ b;"], "float *p"),
  "'@' does not support 'bool' operands", 4)
D("err_sema_transpose_scalar", "sema_transpose_scalar",
  kern(["int x = 1;", "int y = ^x;", "*p = y;"]), "'^' (transpose) needs a tile, got 'int32'", 3)
D("err_sema_deref_non_ptr", "sema_dereference_int",
  kern(["int x = 1;", "*p = *x;"]), "cannot dereference a value of non-pointer type 'int32'", 3)
D("err_sema_mask_not_bool", "sema_int_mask",
  kern(["int m[4] = 0 ... 4;", "int v[4] = *?(m) (p + (0 ... 4));"]), "mask must be bool", 3)
D("err_sema_mask_shape", "sema_mask_shape",
  kern(["bool m[8] = (0 ... 8) < 3;", "int v[4] = *?(m) (p + (0 ... 4));"]),
  "mask of shape [8] does not broadcast to the pointer shape [4]", 3)
D("err_sema_incdec", "sema_increment_tile",
  kern(["int x[4] = 0 ... 4;", "x++;"]), "'++' needs a scalar integer or floating-point variable",
  3)
D("err_sema_not_assignable", "sema_increment_dereference",
  kern(["(*p)++;"]), "expression is not assignable", 2)
D("err_sema_cannot_convert", "sema_float_to_pointer",
  kern(["int *q = 1.5;"]), "cannot convert 'float' to 'int32*'", 2)
D("err_sema_cannot_broadcast_to", "sema_init_does_not_broadcast",
  kern(["float x[16] = 0;", "float z[8] = x;"], "float *p"),
  "shape [16] does not broadcast to [8]", 3)
D("err_sema_dim_not_const", "sema_tile_dim_variable",
  kern(["int n = 4;", "int x[n] = 0;"]), "tile dimension must be a constant integer", 3)
D("err_sema_dim_not_positive", "sema_tile_dim_zero",
  kern(["int x[0] = 0;"]), "tile dimension 0 is not positive", 2)
D("err_sema_dim_not_pow2", "sema_tile_dim_12",
  kern(["int x[12] = 0;"]), "tile dimension 12 is not a power of two", 2)
D("err_sema_tile_too_large", "sema_tile_2p21_elements",
  kern(["int x[2048, 1024] = 0;"]), "tile has 2097152 elements; the limit is 1048576", 2)
D("err_sema_range_not_const", "sema_range_variable_bound",
  kern(["int n = 4;", "int x[4] = 0 ... n;"]), "the bounds of '...' must be constant integers", 3)
D("err_sema_range_empty", "sema_range_empty",
  kern(["int x[4] = 8 ... 4;"]), "range 8 ... 4 is empty; the end must be greater than the start",
  2)
D("err_sema_range_pow2", "sema_range_12",
  kern(["int x[16] = 0 ... 12;"]), "range 0 ... 12 has 12 elements, not a power of two", 2)
D("err_sema_range_int32", "sema_range_beyond_int32",
  kern(["int x[4] = 2147483647 ... 2147483651;"]),
  "range 2147483647 ... 2147483651 does not fit in int32", 2)
D("err_sema_subscript_rank", "sema_subscript_rank",
  kern(["int x[4] = 0 ... 4;", "int y[4, 1, 1] = x[:, :, newaxis];"]),
  "subscript has 2 axis items but", 3)
D("err_sema_reduce_dtype", "sema_bitand_reduce_float",
  kern(["float x[4] = 0;", "*p = x[&];"], "float *p"), "reduction '&' does not apply to 'float", 3)
D("err_sema_cast_invalid", "sema_cast_float_to_pointer",
  kern(["float f = 1.5;", "int *q = (int*)f;"]), "cannot cast 'float' to 'int32*'", 3)
D("err_sema_bitcast_width", "sema_bitcast_width",
  kern(["float f = 1.5;", "*p = bitcast<int16>(f);"]),
  "bitcast from 'float' (32 bits) to 'int16' (16 bits): the widths differ", 3)
D("err_sema_builtin_axis", "sema_program_id_axis_3",
  kern(["*p = get_program_id(3);"]), "'get_program_id' needs a constant axis 0, 1 or 2", 2)
D("err_sema_math_int", "sema_exp_of_int",
  kern(["int x = 2;", "*p = exp(x);"]), "'exp' needs a floating-point argument, got 'int32'; cast it, e.g. 'exp((float)x)'", 3)
D("err_sema_builtin_arg", "sema_atomic_add_on_int",
  kern(["int x = 2;", "*p = atomic_add(x, 1);"]), "to 'atomic_add'", 3)
D("err_sema_print_label", "sema_print_without_label",
  kern(["int x = 2;", "print(x);"]), "'print' needs a string literal label as its first argument",
  3)
D("err_sema_assert_message", "sema_assert_message_not_string",
  kern(["int x = 2;", "assert(x > 1, x);"]), "the message of 'assert' must be a string literal", 3)
D("err_sema_tile_condition", "sema_tile_condition_if",
  kern(["int x[4] = 0 ... 4;", "if (x > 0)", "  *p = 1;"]),
  "tile condition in 'if'; use a mask with *?(mask) or select()", 3)
D("err_sema_tile_condition", "sema_tile_condition_while",
  kern(["int x[4] = 0 ... 4;", "while (x > 0)", "  x = x - 1;"]), "tile condition in 'while'", 3)
D("err_sema_bad_condition", "sema_pointer_condition",
  kern(["if (p)", "  *p = 1;"]), "condition in 'if' must be a number or bool, got 'int32*'", 2)
D("err_sema_jump_outside_loop", "sema_break_outside_loop",
  kern(["break;"]), "'break' statement not in a loop", 2)
D("err_sema_jump_outside_loop", "sema_continue_outside_loop",
  kern(["continue;"]), "'continue' statement not in a loop", 2)
D("err_sema_kernel_return_value", "sema_kernel_returns_value",
  kern(["return 1;"]), "kernel 'k' cannot return a value", 2)
D("err_sema_void_return_value", "sema_void_helper_returns_value",
  "void h(int *q) {\n  return 1;\n}\n" + kern(["h(p);"]),
  "void function 'h' should not return a value", 2)
D("err_sema_missing_return_value", "sema_int_helper_bare_return",
  "int h(int x) {\n  return;\n}\n" + kern(["*p = h(1);"]),
  "non-void function 'h' should return a value", 2)
D("err_sema_return_shape", "sema_return_shapes_differ",
  "int h(int c) {\n  if (c > 0)\n    return 0 ... 4;\n  return 0 ... 8;\n}\n" +
  kern(["int v = h(1)[+];", "*p = v;"]), "returns of 'h' disagree: shape [8] here, [4] before", 4)
D("err_sema_use_before_assign", "sema_use_before_assign_loop",
  kern(["float v;", "for (int i = 0; i < 4; i++)", "  v = 1.0;", "*p = v;"], "float *p"),
  "'v' may be used before it is assigned", 5)
D("err_sema_use_before_assign", "sema_use_before_assign_if",
  kern(["int v;", "if (*p > 0)", "  v = 1;", "*p = v;"]), "'v' may be used before it is assigned",
  5)
D("err_sema_attr_args", "sema_multipleof_without_argument",
  "__global__ void k(int *p, int n __attribute__((multipleof))) {\n  *p = n;\n}\n",
  "attribute 'multipleof' needs", 1)

# ---------------------------------------------------------------------------- Lower / Common
HELPERS = "int h0(int x) {\n  return x * 3 + 1;\n}\n" + "".join(
    "int h%d(int x) {\n  return h%d(h%d(x));\n}\n" % (i, i - 1, i - 1) for i in range(1, 24))
D("err_lower_too_large", "lower_exponential_inlining",
  HELPERS + kern(["*p = h23(*p);"]),
  "kernel 'k' lowers to more than 1048576 operations (helpers inlined at every call)",
  HELPERS.count("\n") + 1, "2^23 inlined helper bodies: must stop with an error, never hang")
D("err_too_many_errors", "too_many_errors",
  kern(["*p = y%d;" % i for i in range(60)]), "too many errors emitted, stopping now", None,
  "60 errors: the compiler stops after its limit")


def main():
    cases = []
    names = set()
    for diag, name, src, message, line, note in CASES:
        assert name not in names, name
        names.add(name)
        params = src[src.index("__global__ void k(") + len("__global__ void k("):] \
            if "__global__ void k(" in src else ""
        param = params.split(")")[0]
        args = []
        for part in param.split(","):
            part = part.strip()
            if not part or "*" not in part:
                if part and "[" not in part:
                    nm = part.split()[1]
                    args.append({"name": nm, "dtype": "int32", "value": 8})
                continue
            ty, nm = part.split("*", 1)
            ty = ty.strip()
            nm = nm.strip().lstrip("*")
            dt = {v: k for k, v in C.CNAME.items()}.get(ty, "int32")
            args.append(C.zeros(nm, dt, 16))
        if "int x[4])" in src:
            args = []
        expect = {"message": message}
        if line is not None:
            expect["line"] = line
        c = {"name": name,
             "features": ["diagnostic", "diag." + phase_of(diag), "diag." + diag],
             "source": src, "grid": [1], "args": args,
             "expect": {"compile_error": expect}}
        if note:
            c = {"name": name, "description": note, **{k: v for k, v in c.items() if k != "name"}}
        cases.append(c)
    C.write_suite("diagnostics.json", "diagnostics",
                  "One compile_error case per user-triggerable error diagnostic of "
                  "support/diag/*.def (message fragment and line). Skipped kinds: " +
                  "; ".join("%s (%s)" % kv for kv in sorted(SKIPPED.items())) +
                  ". Generated by conformance/gen/diagnostics.py.", cases)


if __name__ == "__main__":
    main()
