; LLVM 19 (Debian 19.1.7): llc -march=nvptx64 -mcpu=sm_90 llvm-nvptx-lsr-i128-udiv.ll -o -
; aborts with: LLVM ERROR: Undefined external symbol ""
; Loop strength reduction hoists `zext(1 / %o) * %b` out of the loop and writes it in i128 as
; `udiv i128 1, (zext %o)`, after expand-large-div-rem has run.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
define i64 @g(i64 %a, i128 %b, i32 %K) {
entry:
  %o = or i64 %a, 1
  br label %loop
loop:
  %i = phi i32 [ %K, %entry ], [ %i2, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %s, %loop ]
  %d = udiv i64 1, %o
  %z = zext i64 %d to i128
  %m = mul i128 %z, %b
  %t = trunc i128 %m to i64
  %s = add i64 %t, %acc
  %i2 = add i32 %i, -2
  %c = icmp ugt i32 %i, 1
  br i1 %c, label %loop, label %end
end:
  ret i64 %s
}
