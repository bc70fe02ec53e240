; InstCombine takes an integer cast to half as exact without checking half's range
; (docs/upstream/llvm-instcombine-int-half-range.md).
; opt-19 -passes=instcombine -S llvm-instcombine-int-half-range.ll
; Each function must keep its conversion to half; LLVM 19 removes it from @bf, @kb and @back
; (@cmp is right). @bf(0xR47C0) (98304.0) gives 98304 where half gives inf; @kb(1) gives
; 2^24 where half gives inf; @back(1) gives 2^24 where fptosi of inf is poison.
define double @bf(bfloat %x) {
  %i = fptosi bfloat %x to i64
  %h = sitofp i64 %i to half
  %d = fpext half %h to double
  ret double %d
}
define float @kb(i32 %x) {
  %s = shl i32 %x, 24
  %h = sitofp i32 %s to half
  %d = fpext half %h to float
  ret float %d
}
define i32 @back(i32 %x) {
  %s = shl i32 %x, 24
  %h = sitofp i32 %s to half
  %d = fptosi half %h to i32
  ret i32 %d
}
define i1 @cmp(i32 %x) {
  %s = shl i32 %x, 24
  %h = sitofp i32 %s to half
  %c = fcmp olt half %h, 0xH7C00
  ret i1 %c
}
