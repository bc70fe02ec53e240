; LLVM 19 AtomicExpand (NVPTX): the partword atomicrmw loop reads the old element from
; its first load in every trip when the element's shift in its word folds to 0.
;   opt-19 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -passes=atomic-expand \
;       llvm-atomicexpand-partword-stale.ll -S -o -
;   llc-19 -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -O3 llvm-atomicexpand-partword-stale.ll -o -
; See llvm-atomicexpand-partword-stale.md.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr addrspace(1) align 16 %Y, i16 %v) {
  %o = atomicrmw min ptr addrspace(1) %Y, i16 %v monotonic, align 2
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
