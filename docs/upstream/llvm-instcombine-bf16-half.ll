; InstCombine narrows arithmetic on bfloat values to half (docs/upstream/llvm-instcombine-bf16-half.md).
; opt-19 -passes=instcombine -S llvm-instcombine-bf16-half.ll
; Each function must keep its arithmetic in double/float; LLVM 19 rewrites all three to half,
; where a bfloat beyond 65504 is inf: @sub(0xR4F80, 0xR4F80) (2^32 - 2^32) returns NaN, not 0.
define half @sub(bfloat %a, bfloat %b) {
  %x = fpext bfloat %a to double
  %y = fpext bfloat %b to double
  %d = fsub double %x, %y
  %r = fptrunc double %d to half
  ret half %r
}

define half @div(bfloat %a, bfloat %b) {
  %x = fpext bfloat %a to double
  %y = fpext bfloat %b to double
  %d = fdiv double %x, %y
  %r = fptrunc double %d to half
  ret half %r
}

define half @mul(bfloat %a, bfloat %b) {
  %x = fpext bfloat %a to float
  %y = fpext bfloat %b to float
  %d = fmul float %x, %y
  %r = fptrunc float %d to half
  ret half %r
}
