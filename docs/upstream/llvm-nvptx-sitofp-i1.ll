target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %v = load i8, ptr addrspace(1) %in, align 1
  %b = trunc i8 %v to i1
  %f = sitofp i1 %b to float
  store float %f, ptr addrspace(1) %out, align 4
  ret void
}
